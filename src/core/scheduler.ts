import * as admission from './scheduler/admission.js';
import { Deadlines } from './scheduler/deadlines.js';
import { runnerEnded } from './scheduler/ends.js';
import { noteSession } from './scheduler/kept-session.js';
import type { SchedulerParts } from './scheduler/parts.js';
import { Permits } from './scheduler/permits.js';
import { ProviderGate, type ProviderStatus } from './scheduler/provider-gate.js';
import { ReservationGate } from './scheduler/reservation-gate.js';
import { restore } from './scheduler/restore.js';
import { DONE } from './scheduler/run-node.js';
import { RunTable } from './scheduler/run-table.js';
import * as stops from './scheduler/stops.js';
import type {
  Conversation,
  SchedulerEvent,
  SchedulerLimits,
  SchedulerReply,
  StepResult,
} from './scheduler-types.js';
import { assertNever, type ParentKey, type Run, type RunId } from './types.js';

export type { ProviderStatus } from './scheduler/provider-gate.js';

/**
 * Admission and the run lifecycle as decisions only (DESIGN §3): `step(event, now)` changes the state
 * and returns the commands for the adapters to carry out plus the caller's answer. No I/O, no clock:
 * time comes in as `now`. The state lives inside the instance and is changed in place (copying it per
 * event would make admission O(runs)); every transition of a run happens in `src/core/scheduler/`, one seam a file, composed here.
 *
 * Invariants kept here (property-tested): permits held ≤ cap; a permit is bound to one top-level run
 * and returns exactly once, when that run and all its descendants have ended; every admitted run ends
 * exactly once and is announced exactly once (a wave member through its wave's one digest).
 */
export class Scheduler {
  /** Its state, one part per seam that owns some; the seams in `./scheduler/` are functions of it. */
  private readonly parts: SchedulerParts;
  /** `now` of the last step, so `nextWakeAt` can tell a hold still to come. */
  private lastNow = 0;

  constructor(readonly limits: SchedulerLimits) {
    this.parts = {
      table: new RunTable(limits),
      permits: new Permits(limits),
      provider: new ProviderGate(limits),
      reservation: new ReservationGate(limits),
      deadlines: new Deadlines(),
    };
  }

  step(event: SchedulerEvent, now: number): StepResult {
    this.parts.table.commands = [];
    this.lastNow = now;
    const before =
      event.type === 'spawn' || event.type === 'continue' ? admission.mark(this.parts, event) : undefined;
    const reply = this.apply(event, now);
    this.parts.permits.pump(this.parts, now);
    const commands = this.parts.table.commands;
    this.parts.table.commands = [];
    if (before && reply.kind === 'admitted' && !reply.existing) {
      return {
        commands,
        reply,
        rollback: () =>
          admission.undo(
            this.parts,
            before,
            reply.runs.map((r) => r.id),
          ),
      };
    }
    return { commands, reply };
  }

  /** When the scheduler next needs a `tick`: the stagger's next start or the nearest deadline. */
  nextWakeAt(): number | undefined {
    let wake = this.parts.permits.nextLaunchAt();
    const deadline = this.parts.deadlines.nextAt();
    if (deadline !== undefined && (wake === undefined || deadline < wake)) wake = deadline;
    // A provider hold that keeps queued runs waiting ends with a tick.
    if (this.parts.table.queue.size > 0 && !this.parts.permits.stopped) {
      const holdEnd = this.parts.provider.nextHoldEnd(this.lastNow);
      if (holdEnd !== undefined && (wake === undefined || holdEnd < wake)) wake = holdEnd;
    }
    return wake;
  }

  /** Counts for status views; cheap. */
  counts(): {
    running: number;
    starting: number;
    topLevel: number;
    queued: number;
    queuedSingles: number;
    permitsHeld: number;
    live: number;
  } {
    const { running, starting } = this.parts.table.statusCounts;
    return {
      running,
      starting,
      topLevel: this.parts.table.topLevelExecuting,
      queued: this.parts.table.queue.size,
      queuedSingles: this.parts.table.queuedSingles,
      permitsHeld: this.parts.permits.held.size,
      live: this.parts.table.nodes.size,
    };
  }

  /** The live run with this id, if any. */
  liveRun(id: RunId): Run | undefined {
    return this.parts.table.nodes.get(id)?.run;
  }

  /** Ids of the live runs in `id`'s subtree, itself first. */
  subtree(id: RunId): RunId[] {
    return this.parts.table.subtree(id);
  }

  /** Which top-level runs hold a permit, and its token. */
  permitHolders(): ReadonlyMap<RunId, number> {
    return this.parts.permits.held;
  }

  queuedIds(): RunId[] {
    const ids: RunId[] = [];
    for (const node of this.parts.table.queue) ids.push(node.run.id);
    return ids;
  }

  /** A conversation that is busy or idle; released ones are forgotten (the store keeps them). */
  conversation(id: string): Conversation | undefined {
    return this.parts.table.conversations.get(id);
  }

  /** Whether this parent's command id names live runs the scheduler holds. */
  knowsCommand(parent: ParentKey, commandId: string): boolean {
    return admission.knowsCommand(this.parts, parent, commandId);
  }

  /** Ids of the conversations not released (busy or idle); released ones are forgotten. */
  liveConversationIds(): string[] {
    return [...this.parts.table.conversations.keys()];
  }

  /** Idle kept conversations, least recently used first. */
  idleConversations(): Conversation[] {
    return [...this.parts.table.conversations.values()]
      .filter((c) => c.state === 'idle')
      .sort((a, b) => a.lastUsedAt - b.lastUsedAt);
  }

  /** Each provider's cap, hold and running count, for `resource_status`. */
  providerStatus(): Record<string, ProviderStatus> {
    return this.parts.provider.status();
  }

  /** Whether a queued run waits for its provider (cap reached or starts held) rather than for a permit. */
  waitsForProvider(run: Run, now: number): { holdUntil?: number } | undefined {
    return this.parts.provider.waitsFor(run, now);
  }

  private apply(event: SchedulerEvent, now: number): SchedulerReply {
    switch (event.type) {
      case 'spawn':
        return admission.spawn(this.parts, event, now);
      case 'continue':
        return admission.continueConversation(this.parts, event, now);
      case 'started': {
        const reply = this.parts.permits.started(this.parts, event.runId, now);
        if (reply.ok && event.session !== undefined) noteSession(this.parts, event.runId, event.session);
        return reply;
      }
      case 'tool_call':
        return stops.toolCall(this.parts, event.runId);
      case 'tokens':
        return stops.countTokens(this.parts, event.runId, event.tokens);
      case 'start_failed':
        return stops.startFailed(this.parts, event.runId, event.error, now);
      case 'ended':
        return runnerEnded(this.parts, event, now);
      case 'cancel':
        return stops.cancel(this.parts, event.runId, event.ended, now);
      case 'steer':
        return stops.steer(this.parts, event.runId, event.message, event.mode, event.ended);
      case 'release':
        return stops.release(this.parts, event, now);
      case 'tick':
        stops.expireDeadlines(this.parts, now);
        return DONE;
      case 'stop_starts':
        this.parts.permits.stopStarts();
        return DONE;
      case 'memory':
        this.parts.reservation.observe(event.sample);
        return DONE;
      case 'provider_limited':
        return this.providerLimited(event, now);
      case 'restore':
        return restore(this.parts, event, now);
      default:
        return assertNever(event);
    }
  }

  private providerLimited(
    event: Extract<SchedulerEvent, { type: 'provider_limited' }>,
    now: number,
  ): SchedulerReply {
    const rootId =
      event.runId === undefined ? undefined : this.parts.table.nodes.get(event.runId)?.run.rootId;
    this.parts.provider.limited(
      event,
      rootId !== undefined && this.parts.table.nodes.has(rootId) ? rootId : undefined,
      now,
    );
    return DONE;
  }
}
