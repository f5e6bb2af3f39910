import type { AgentDef } from '../core/agent-def.js';
import type { SchedulerEvent, StopCause } from '../core/scheduler-types.js';
import { assertNever, type RunId, type SteerMode } from '../core/types.js';
import type { RunHandle, Runner, RunnerEvent, RunRequest } from '../runners/runner.js';
import type { ProviderUsage, RunInfoUpdate } from '../store/store.js';
import type { TranscriptStore, TranscriptWriter } from '../transcripts/transcript-store.js';

/** What the supervisor reports back: one scheduler event, with the facts to commit in its transaction. */
export type StepFn = (event: SchedulerEvent, facts?: { runInfo?: RunInfoUpdate[] }) => void;

export interface RunObserver {
  started?(
    runId: RunId,
    agent: string,
    pid: number | undefined,
    startTime: number | undefined,
    shared: boolean,
  ): void;
  ended?(runId: RunId, agent: string): { peakMemGb?: number; providerUsage?: ProviderUsage } | undefined;
}

export interface RunSupervisorDeps {
  step: StepFn;
  runnerFor: (agent: AgentDef) => Runner;
  transcripts: Pick<TranscriptStore, 'open' | 'pathOf'>;
  /** Each run's process identity and end (the host sampler hooks in here). */
  observer?: RunObserver;
  /** A failure with no caller to answer. */
  log: (line: string) => void;
}

interface Execution {
  agent: string;
  transcript: TranscriptWriter;
  handle?: RunHandle;
  ended: boolean;
  /** The agent's last `usage_update`, recorded on the run when it ends. */
  usage?: { used?: number; size?: number; costUsd?: number };
}

/**
 * Executes what the scheduler launched: starts each run on its runner, streams its output into the
 * transcript, and turns the runner's events into scheduler events. Runner ends wait for their
 * transcript to flush; they are chained so records keep their order, and nothing in the chain may
 * break it (every later end waits on it). Decides nothing: budgets, timeouts and outcomes are the core's.
 */
export class RunSupervisor {
  private readonly executions = new Map<RunId, Execution>();
  /** Ends (and failed starts) waiting to be recorded, in order: one drain records them one at a time. */
  private readonly endings: Ending[] = [];
  /** The drain recording `endings`, while there is one. */
  private draining: Promise<void> | undefined;
  /** Callers of `idle()` waiting for the next recorded end. */
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly deps: RunSupervisorDeps) {}

  /** Ids of runs whose runner has not reported their end yet. */
  live(): RunId[] {
    return [...this.executions.keys()];
  }

  launch(agent: AgentDef, request: RunRequest): void {
    const runner = this.deps.runnerFor(agent);
    this.launchWith(agent.name, request.runId, (onEvent) => runner.start(request, onEvent));
  }

  /**
   * Launches a run whose execution `start` begins (a runner, or in cluster mode the cluster queue): its
   * events are handled as a runner's are.
   */
  launchWith(
    agentName: string,
    runId: RunId,
    start: (onEvent: (event: RunnerEvent) => void) => RunHandle,
  ): void {
    const execution: Execution = {
      agent: agentName,
      transcript: this.deps.transcripts.open(runId),
      ended: false,
    };
    this.executions.set(runId, execution);
    try {
      execution.handle = start((event) => this.onRunnerEvent(runId, execution, event));
    } catch (error) {
      this.onRunnerEvent(runId, execution, {
        type: 'ended',
        status: 'failed',
        error: `could not start: ${errorText(error)}`,
      });
    }
  }

  /** A launch that cannot begin (e.g. its agent is no longer configured): reported after the step. */
  failLaunch(runId: RunId, error: string): void {
    this.chain(runId, failingStart, () => this.deps.step({ type: 'start_failed', runId, error }));
  }

  stop(runId: RunId, reason: StopCause): void {
    this.executions.get(runId)?.handle?.stop(reason);
  }

  steer(runId: RunId, message: string, mode: SteerMode): void {
    const execution = this.executions.get(runId);
    execution?.handle?.steer(message, mode).catch((error: unknown) => {
      execution.transcript.write(`\n[steer failed: ${errorText(error)}]\n`);
    });
  }

  releaseSession(agent: AgentDef, conversationId: string): void {
    this.deps
      .runnerFor(agent)
      .release(conversationId)
      .catch((error: unknown) =>
        this.deps.log(`crew: releasing ${conversationId} failed: ${errorText(error)}`),
      );
  }

  /** Resolves when every run launched so far has ended and its end has been recorded. */
  async idle(): Promise<void> {
    for (;;) {
      await this.draining;
      if (this.executions.size === 0) return;
      await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    }
  }

  private onRunnerEvent(runId: RunId, execution: Execution, event: RunnerEvent): void {
    if (execution.ended) return;
    switch (event.type) {
      case 'started': {
        // Built by assignment, not from spread temporaries: this runs once per run.
        let facts: { runInfo?: RunInfoUpdate[] } | undefined;
        if (event.pid !== undefined || event.host !== undefined || event.workspace !== undefined) {
          const info: RunInfoUpdate = { id: runId };
          if (event.pid !== undefined) info.pid = event.pid;
          if (event.startTime !== undefined) info.startTime = event.startTime;
          if (event.host !== undefined) info.host = event.host;
          if (event.workspace !== undefined) info.workspace = event.workspace;
          facts = { runInfo: [info] };
        }
        this.deps.step(
          event.session === undefined
            ? { type: 'started', runId }
            : { type: 'started', runId, session: event.session },
          facts,
        );
        this.deps.observer?.started?.(runId, execution.agent, event.pid, event.startTime, event.shared);
        return;
      }
      case 'output':
        execution.transcript.write(event.text);
        return;
      case 'tool_call':
        this.deps.step({ type: 'tool_call', runId });
        return;
      case 'usage':
        execution.usage = {
          ...(event.used !== undefined && { used: event.used }),
          ...(event.size !== undefined && { size: event.size }),
          ...(event.costUsd !== undefined && { costUsd: event.costUsd }),
        };
        return;
      case 'ended':
        execution.ended = true;
        this.executions.delete(runId);
        this.chain(runId, ending, async () => {
          let chars: number | undefined;
          let gapBytes = 0;
          try {
            const closed = await execution.transcript.close();
            chars = closed.chars;
            gapBytes = closed.gapBytes;
          } catch (error) {
            this.deps.log(`crew: closing run ${runId}'s transcript failed: ${errorText(error)}`);
          }
          let sample: { peakMemGb?: number; providerUsage?: ProviderUsage } | undefined;
          try {
            sample = this.deps.observer?.ended?.(runId, execution.agent);
          } catch (error) {
            this.deps.log(`crew: measuring run ${runId} failed: ${errorText(error)}`);
          }
          // Built by assignment, not from spread temporaries: this runs once per run.
          const info: RunInfoUpdate = { id: runId, resultPath: this.deps.transcripts.pathOf(runId) };
          if (chars !== undefined) info.resultChars = chars;
          if (gapBytes > 0) info.transcriptGapBytes = gapBytes;
          if (sample?.peakMemGb !== undefined) info.peakMemGb = sample.peakMemGb;
          if (sample?.providerUsage !== undefined) info.providerUsage = sample.providerUsage;
          if (event.errorKind !== undefined) info.errorKind = event.errorKind;
          if (event.workspace !== undefined) info.workspace = event.workspace;
          const usage = execution.usage;
          if (usage?.used !== undefined) info.usageTokens = usage.used;
          if (usage?.size !== undefined) info.usageContextTokens = usage.size;
          if (usage?.costUsd !== undefined) info.usageCostUsd = usage.costUsd;
          const ended: Extract<SchedulerEvent, { type: 'ended' }> = {
            type: 'ended',
            runId,
            status: event.status,
          };
          if (event.stop !== undefined) ended.stop = event.stop;
          if (event.error !== undefined) ended.error = event.error;
          this.deps.step(ended, { runInfo: [info] });
        });
        return;
      default:
        assertNever(event);
    }
  }

  /**
   * Records `work` after every end queued before it. One drain works through the queue (a promise and a
   * closure per end fewer than a chain of `then`s), starting after the caller's step, as a `then` would.
   */
  private chain(runId: RunId, what: (runId: RunId) => string, work: () => Promise<void> | void): void {
    this.endings.push({ runId, what, work });
    this.draining ??= this.drainEndings();
  }

  private async drainEndings(): Promise<void> {
    await undefined;
    for (let next = this.endings.shift(); next !== undefined; next = this.endings.shift()) {
      try {
        await next.work();
      } catch (error) {
        this.deps.log(`crew: ${next.what(next.runId)} failed: ${errorText(error)}`);
      }
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const wake of waiters) wake();
    }
    this.draining = undefined;
  }
}

/** A run's end (or failed start) waiting its turn to be recorded. */
interface Ending {
  runId: RunId;
  /** What it is, for the log line when recording it fails. */
  what: (runId: RunId) => string;
  work: () => Promise<void> | void;
}

const ending = (runId: RunId) => `ending run ${runId}`;
const failingStart = (runId: RunId) => `failing run ${runId}'s start`;

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
