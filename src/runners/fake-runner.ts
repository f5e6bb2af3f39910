import type { Clock, TimerHandle } from '../core/clock.js';
import type { ErrorKind } from '../core/error-kind.js';
import type { KeptSession } from '../core/scheduler-types.js';
import type { StopNote } from '../core/types.js';
import type { RunHandle, Runner, RunnerEvent, RunRequest, StopReason } from './runner.js';

/** What a fake run does; a test scripts it per request. */
export interface FakePlan {
  /** Time until the run ends on its own; 0 = ends in the next microtask. @default 0 */
  durationMs?: number;
  /** Output chunks, streamed at start. @default [`done: <prompt head>`] */
  output?: string[];
  /** End `failed` with this error instead of completing. */
  fail?: string;
  /** The typed cause that goes with `fail`. */
  errorKind?: ErrorKind;
  /** A `usage` event emitted at start. */
  usage?: { used?: number; size?: number; costUsd?: number };
  /** Never end on its own (until stopped). */
  hang?: boolean;
  /** Fail at start: no `started`, just `ended failed`. */
  startFailure?: string;
  /** `tool_call` events emitted at start. */
  toolCalls?: number;
  stop?: StopNote;
  /** The process identity reported at start, as a dedicated runner reports its agent's. */
  pid?: { pid: number; startTime: number };
  /** The agent session reported at start, as the ACP runner reports a kept run's. */
  session?: KeptSession;
}

export interface FakeRunnerOptions {
  clock: Clock;
  plan?: (request: RunRequest) => FakePlan;
  /** Time a stop takes to be confirmed. @default 0 */
  stopDelayMs?: number;
}

interface LiveFake {
  request: RunRequest;
  onEvent: (event: RunnerEvent) => void;
  timer?: TimerHandle;
  ended: boolean;
  steers: { message: string; mode: string }[];
}

/**
 * A scriptable Runner for unit tests and benchmarks: no processes, time from the injected clock. It keeps
 * the port's promise that `ended` comes exactly once per start.
 */
export class FakeRunner implements Runner {
  readonly live = new Map<string, LiveFake>();
  /** Every start, in order (tests read it). */
  readonly started: RunRequest[] = [];
  readonly steered: { runId: string; message: string; mode: string }[] = [];
  readonly released: string[] = [];
  peakLive = 0;

  constructor(private readonly options: FakeRunnerOptions) {}

  start(request: RunRequest, onEvent: (event: RunnerEvent) => void): RunHandle {
    const plan = this.options.plan?.(request) ?? {};
    const fake: LiveFake = { request, onEvent, ended: false, steers: [] };
    this.live.set(request.runId, fake);
    this.started.push(request);
    this.peakLive = Math.max(this.peakLive, this.live.size);
    const clock = this.options.clock;
    const begin = () => {
      if (fake.ended) return;
      if (plan.startFailure !== undefined) {
        this.end(fake, { type: 'ended', status: 'failed', error: plan.startFailure });
        return;
      }
      onEvent({
        type: 'started',
        shared: false,
        ...(plan.pid ?? {}),
        ...(plan.session !== undefined && { session: plan.session }),
      });
      if (plan.usage) onEvent({ type: 'usage', ...plan.usage });
      for (let i = 0; i < (plan.toolCalls ?? 0); i++) onEvent({ type: 'tool_call', toolCallId: `t${i}` });
      for (const text of plan.output ?? [`done: ${request.prompt.slice(0, 40)}`])
        onEvent({ type: 'output', text });
      // An event above may have ended the run (a close or a stop answered at once): then no timer may be set.
      if (plan.hang || fake.ended) return;
      const finish = () =>
        this.end(
          fake,
          plan.fail !== undefined
            ? {
                type: 'ended',
                status: 'failed',
                error: plan.fail,
                ...(plan.errorKind !== undefined && { errorKind: plan.errorKind }),
              }
            : { type: 'ended', status: 'completed', ...(plan.stop ? { stop: plan.stop } : {}) },
        );
      if ((plan.durationMs ?? 0) > 0) fake.timer = clock.setTimer(finish, plan.durationMs ?? 0);
      else finish();
    };
    queueMicrotask(begin);
    return {
      stop: (reason: StopReason) => this.stop(fake, reason),
      steer: async (message, mode) => {
        // The fake runner (tests, the demo): the gateway answers a steer of an ended run `not_running` first.
        if (fake.ended) throw new Error(`run ${request.runId} has ended`);
        fake.steers.push({ message, mode });
        this.steered.push({ runId: request.runId, message, mode });
        onEvent({ type: 'output', text: `[steer:${mode}] ${message}` });
      },
    };
  }

  async release(conversationId: string): Promise<void> {
    this.released.push(conversationId);
  }

  async close(): Promise<void> {
    for (const fake of [...this.live.values()]) {
      this.end(fake, { type: 'ended', status: 'cancelled', stop: 'cancelled' });
    }
  }

  private stop(fake: LiveFake, reason: StopReason): void {
    if (fake.ended) return;
    const confirm = () =>
      this.end(fake, {
        type: 'ended',
        status: 'cancelled',
        ...(reason === 'turn_limit' || reason === 'token_budget'
          ? { stop: reason }
          : { stop: 'cancelled' as const }),
      });
    const delay = this.options.stopDelayMs ?? 0;
    if (delay > 0) this.options.clock.setTimer(confirm, delay);
    else queueMicrotask(confirm);
  }

  private end(fake: LiveFake, event: Extract<RunnerEvent, { type: 'ended' }>): void {
    if (fake.ended) return;
    fake.ended = true;
    if (fake.timer !== undefined) this.options.clock.clearTimer(fake.timer);
    this.live.delete(fake.request.runId);
    fake.onEvent(event);
  }
}
