import type { Scheduler } from '../../../src/core/scheduler.js';
import type {
  Conversation,
  SchedulerEvent,
  SchedulerLimits,
  StepResult,
  StopCause,
} from '../../../src/core/scheduler-types.js';
import { isTerminal, type ParentKey, parentRunId, type Run, type RunId } from '../../../src/core/types.js';
import { observe } from './observe-commands.js';
import { outcome } from './reply.js';
import { checkState } from './state-invariants.js';

/** What the explorer believes about a kept conversation, from the replies and records it saw. */
export type ConversationModel = {
  parent: ParentKey;
  latest: RunId;
  /**
   * `ended`: its latest run ended other than completed; the design leaves what a continue answers
   * then open, so it is not judged.
   */
  state: 'busy' | 'idle' | 'released' | 'ended';
};

export interface WaveModel {
  parent: ParentKey;
  members: RunId[];
  digested: boolean;
}

/**
 * One explored state: the scheduler under test plus a model of what the gateway, the store and the
 * runners would know, built only from the commands and replies the scheduler returned. Every field
 * is plain data (Maps, Sets, arrays) so `deepClone` forks it.
 */
export class World {
  scheduler: Scheduler;
  now = 0;
  /** Next run id number; ids are spent only on admission, so equal admissions give equal ids. */
  nextRun = 1;
  nextBatch = 1;
  restarts = 0;
  /** The latest record of every admitted run, as the store would hold it. */
  readonly records = new Map<RunId, Run>();
  /** The latest record of every conversation, as the store would hold it. */
  readonly storedConversations = new Map<string, Conversation>();
  readonly conversations = new Map<string, ConversationModel>();
  readonly waves = new Map<string, WaveModel>();
  /** Runs some completion event or digest named. */
  readonly announced = new Set<RunId>();
  /** Runs the runner of this process was asked to start and has not reported ended: its live set. */
  readonly launched = new Set<RunId>();
  /** Stops the scheduler asked for that the runner has not confirmed. */
  readonly stopping = new Map<RunId, StopCause>();
  /** Tool calls each launched run has made, against its record's `maxTurns`. */
  readonly toolCalls = new Map<RunId, number>();
  /** The FIFO of queued top-level runs, kept from the records alone. */
  queue: RunId[] = [];
  violations: string[] = [];
  /** When set (replaying a counterexample), every step is written here as a replayable line. */
  journal: string[] | undefined;

  /** Frozen by the explorer (as is the scheduler's copy), so forked states share it. */
  constructor(
    readonly limits: Readonly<SchedulerLimits>,
    scheduler: Scheduler,
  ) {
    this.scheduler = scheduler;
  }

  /** Feeds one event to the scheduler at the current time, observes its commands, checks the state. */
  step(event: SchedulerEvent): StepResult {
    const result = this.scheduler.step(event, this.now);
    this.journal?.push(`step(${JSON.stringify(event)}, ${this.now}) → ${outcome(result.reply)}`);
    for (const command of result.commands) observe(this, command);
    checkState(this);
    return result;
  }

  fail(message: string): void {
    this.violations.push(message);
  }

  live(): Run[] {
    return [...this.records.values()].filter((r) => !isTerminal(r.status));
  }

  isLive(id: RunId): boolean {
    const run = this.records.get(id);
    return run !== undefined && !isTerminal(run.status);
  }

  /** Ancestors of a run, nearest first, from the records (ended ones included). */
  ancestors(run: Run): Run[] {
    const out: Run[] = [];
    let parentId = parentRunId(run.parent);
    while (parentId !== undefined) {
      const parent = this.records.get(parentId);
      if (!parent) break;
      out.push(parent);
      parentId = parentRunId(parent.parent);
    }
    return out;
  }

  /** Live runs in `id`'s subtree, itself included. */
  liveSubtree(id: RunId): RunId[] {
    return this.live()
      .filter((r) => r.id === id || this.ancestors(r).some((a) => a.id === id))
      .map((r) => r.id);
  }

  /** The conversation a run belongs to, if it was kept. */
  conversationOf(run: Run): string | undefined {
    return run.conversationId ?? (run.keep ? run.id : undefined);
  }
}
