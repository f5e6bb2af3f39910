import type * as acp from '@agentclientprotocol/sdk';
import type { Clock, TimerHandle } from '../core/clock.js';
import type { ErrorKind } from '../core/error-kind.js';
import { CrewError, refuse } from '../core/errors.js';
import { assertNever, type SteerMode } from '../core/types.js';
import { answerPermission, type PermissionPolicy } from './acp-permission.js';
import { type AcpRuntime, errorKindOf, type SessionSink } from './acp-runtime.js';
import { allowsFollowUp, type EndedEvent, endedFor } from './acp-stop-reason.js';
import type { RunHandle, RunnerEvent, RunRequest, StopReason } from './runner.js';

/**
 * One run on the ACP runner: find or open its session, prompt, stream the updates as events, obey
 * `stop` and `steer`, and report `ended` exactly once, after its dedicated process (if any) is gone.
 *
 * Stopping: a dedicated process group is terminated (SIGTERM, SIGKILL after the grace); a shared
 * session gets `session/cancel`, and if the agent has not ended the turn within the grace the run ends
 * anyway and the session is closed. Steering: `interrupt` cancels the turn in flight and prompts with
 * the message next; `follow_up` is prompted when the current turn ends normally. With no turn in
 * flight, both simply queue the message as the next prompt.
 */

/** Where a run's session lives. */
export interface Placement {
  runtime: AcpRuntime;
  sessionId: string;
  /** The runtime is this run's (or its kept conversation's) alone: stopping kills it. */
  dedicated: boolean;
  configOptions: acp.SessionConfigOption[];
  /** Set when the session is kept after the run: the conversation's id. */
  conversationId?: string;
  /** The directory the session was opened in (a kept session reopened with `session/load` needs it). */
  sessionCwd?: string;
  /** Lines to lead the transcript with: what the run asked that the agent cannot take. */
  warnings?: string[] | undefined;
}

/** What a run needs from its runner: placing it, and putting the session away afterwards. */
export interface RunContext {
  clock: Clock;
  killGraceMs: number;
  permissionPolicy: PermissionPolicy;
  /**
   * Offers the run's dedicated runtime to the memory pause (`acp-pause-offer.ts`) as soon as its process
   * exists; returns the withdrawal, called when the run concludes or ends.
   */
  offerToPause(run: AcpRun, runtime: AcpRuntime): () => void;
  /**
   * Finds or opens the run's session. `onRuntime` is told as soon as a dedicated process exists, so a
   * stop during start-up can kill it. Throws an Error whose message is the reason the run fails, and
   * only once a dedicated process it started is gone.
   */
  place(run: AcpRun, sink: SessionSink, onRuntime: (runtime: AcpRuntime) => void): Promise<Placement>;
  /** Puts the session away after the run: kept, closed, or its process ended. Resolves when done. */
  settle(run: AcpRun, placement: Placement, healthy: boolean): Promise<void>;
}

type TurnResult =
  | { kind: 'answered'; stopReason: acp.StopReason }
  | { kind: 'error'; message: string; errorKind?: ErrorKind }
  | { kind: 'died'; reason: string; exitCode?: number }
  /** A stop's grace ran out before the agent ended the turn. */
  | { kind: 'abandoned' };

/** Tool call titles remembered per run for their updates; beyond this the memory starts over. */
const MAX_TOOL_TITLES = 1000;

/** One transcript line for a tool call or its update: `[tool_call] title (kind, status)`. */
export function toolLine(
  what: 'tool_call' | 'tool_call_update',
  title: string,
  kind: string | null | undefined,
  status: string | null | undefined,
): string {
  const facts = [kind, status].filter((f): f is string => typeof f === 'string' && f !== '');
  const shown = title.replace(/\s+/g, ' ').trim().slice(0, 200);
  return `[${what}] ${shown}${facts.length > 0 ? ` (${facts.join(', ')})` : ''}`;
}

export class AcpRun implements RunHandle {
  /** Resolves once `ended` was emitted. */
  readonly done: Promise<void>;
  private resolveDone!: () => void;
  private stopReason: StopReason | undefined;
  private placement: Placement | undefined;
  private dedicatedRuntime: AcpRuntime | undefined;
  private turnInFlight = false;
  private cancelSent = false;
  /** No more turns: the run is putting its session away. */
  private concluded = false;
  private ended = false;
  private readonly interrupts: string[] = [];
  /** Whether the transcript so far ends a line (tool call lines start on their own). */
  private atLineStart = true;
  private readonly toolTitles = new Map<string, string>();
  private readonly followUps: string[] = [];
  private abandon: (() => void) | undefined;
  /** Runs out a stop's grace for a shared session's turn (never paused: only dedicated runtimes are). */
  private graceTimer: TimerHandle | undefined;
  /** Takes back the offer of its dedicated runtime to the memory pause. */
  private withdrawOffer: () => void = () => {};

  constructor(
    readonly request: RunRequest,
    private readonly ctx: RunContext,
    private readonly onEvent: (event: RunnerEvent) => void,
  ) {
    this.done = new Promise((resolve) => {
      this.resolveDone = resolve;
    });
  }

  /** Starts the run; its events follow asynchronously. */
  begin(): void {
    void this.execute()
      .finally(() => this.withdrawOffer())
      .then(
        (ended) => this.finish(ended),
        (error: unknown) =>
          this.finish({ type: 'ended', status: 'failed', error: `internal error: ${String(error)}` }),
      );
  }

  /** Ends the run at once with `ended` (e.g. the runner is closed); only instead of {@link begin}. */
  failAtOnce(error: string): void {
    queueMicrotask(() => this.finish({ type: 'ended', status: 'failed', error }));
  }

  stop(reason: StopReason): void {
    if (this.ended || this.concluded || this.stopReason) return;
    this.stopReason = reason;
    if (this.dedicatedRuntime) {
      void this.dedicatedRuntime.terminate();
      return;
    }
    const placement = this.placement;
    if (placement && this.turnInFlight) {
      this.cancelSent = true;
      void placement.runtime.cancel(placement.sessionId);
      this.graceTimer = this.ctx.clock.setTimer(() => this.abandon?.(), this.ctx.killGraceMs);
    }
    // Otherwise the run is still being placed, or between turns: it checks the stop at its next step.
  }

  async steer(message: string, mode: SteerMode): Promise<void> {
    if (this.ended || this.concluded || this.stopReason) {
      throw new CrewError(
        refuse('not_running', `run ${this.request.runId} is not running; steer only a running run`),
      );
    }
    switch (mode) {
      case 'interrupt': {
        this.interrupts.push(message);
        const placement = this.placement;
        if (placement && this.turnInFlight && !this.cancelSent) {
          this.cancelSent = true;
          await placement.runtime.cancel(placement.sessionId);
        }
        return;
      }
      case 'follow_up':
        this.followUps.push(message);
        return;
      default:
        assertNever(mode);
    }
  }

  private async execute(): Promise<EndedEvent> {
    let placement: Placement;
    try {
      placement = await this.ctx.place(this, this.sink(), (runtime) => {
        this.dedicatedRuntime = runtime;
        this.withdrawOffer();
        this.withdrawOffer = this.ctx.offerToPause(this, runtime);
        if (this.stopReason) void runtime.terminate();
      });
    } catch (error) {
      if (this.stopReason) return this.stoppedEvent();
      const errorKind = errorKindOf(error);
      return {
        type: 'ended',
        status: 'failed',
        error: error instanceof Error ? error.message : String(error),
        ...(errorKind !== undefined && { errorKind }),
      };
    }
    this.placement = placement;
    if (placement.dedicated) this.dedicatedRuntime = placement.runtime;
    if (this.stopReason) {
      if (this.dedicatedRuntime) void this.dedicatedRuntime.terminate();
      await this.conclude(placement, false);
      return this.stoppedEvent();
    }
    const { runtime } = placement;
    this.emit({
      type: 'started',
      pid: runtime.pid,
      ...(runtime.startTime !== undefined && { startTime: runtime.startTime }),
      shared: !placement.dedicated,
      ...(placement.conversationId !== undefined && {
        session: {
          id: placement.sessionId,
          cwd: placement.sessionCwd ?? this.request.cwd,
          loadable: runtime.supportsLoadSession,
        },
      }),
    });
    for (const warning of placement.warnings ?? []) this.writeLine(warning);
    placement.warnings = undefined;
    const ended = await this.converse(placement);
    await this.conclude(placement, this.stopReason === undefined && !runtime.isDown);
    return ended;
  }

  /** Prompts until a turn ends with nothing queued after it. */
  private async converse(placement: Placement): Promise<EndedEvent> {
    let text = this.request.prompt;
    for (;;) {
      const result = await this.turn(placement, text);
      if (this.stopReason) return this.stoppedEvent();
      switch (result.kind) {
        case 'died':
          return {
            type: 'ended',
            status: 'failed',
            error: result.reason,
            errorKind:
              placement.runtime.protocolFault === undefined ? 'agent_exited' : 'agent_protocol_error',
            ...(result.exitCode !== undefined && { exitCode: result.exitCode }),
          };
        case 'error':
          return {
            type: 'ended',
            status: 'failed',
            error: result.message,
            ...(result.errorKind !== undefined && { errorKind: result.errorKind }),
          };
        case 'abandoned':
          return this.stoppedEvent();
        case 'answered': {
          const next = this.nextPrompt(result.stopReason);
          if (next === undefined) return endedFor(result.stopReason);
          text = next;
          break;
        }
        default:
          assertNever(result);
      }
    }
  }

  /** One `session/prompt`, raced against the runtime's death and a stop's grace running out. */
  private async turn(placement: Placement, text: string): Promise<TurnResult> {
    const { runtime, sessionId } = placement;
    this.turnInFlight = true;
    this.cancelSent = false;
    const abandoned = new Promise<TurnResult>((resolve) => {
      this.abandon = () => resolve({ kind: 'abandoned' });
    });
    const answered = runtime.prompt(sessionId, text).then(
      (response): TurnResult => ({ kind: 'answered', stopReason: response.stopReason }),
      async (error: unknown): Promise<TurnResult> => {
        const reason = await runtime.deathReason();
        if (reason !== undefined) return this.died(placement, reason);
        const errorKind = errorKindOf(error);
        return {
          kind: 'error',
          message: error instanceof Error ? error.message : String(error),
          ...(errorKind !== undefined && { errorKind }),
        };
      },
    );
    let unsubscribe = () => {};
    const died = new Promise<TurnResult>((resolve) => {
      unsubscribe = runtime.onDeath((reason) => resolve(this.died(placement, reason)));
    });
    try {
      return await Promise.race([answered, died, abandoned]);
    } finally {
      unsubscribe();
      this.turnInFlight = false;
      this.abandon = undefined;
      if (this.graceTimer !== undefined) this.ctx.clock.clearTimer(this.graceTimer);
      this.graceTimer = undefined;
    }
  }

  /** A dead runtime's result; the exit code is the run's own only when the process was dedicated. */
  private died(placement: Placement, reason: string): TurnResult {
    const exitCode = placement.dedicated ? placement.runtime.exitCode : undefined;
    return { kind: 'died', reason, ...(exitCode !== undefined && { exitCode }) };
  }

  /** The next prompt after a turn: interrupts first (joined), then follow-ups after a normal end. */
  private nextPrompt(stopReason: acp.StopReason): string | undefined {
    if (this.interrupts.length > 0) return this.interrupts.splice(0).join('\n\n');
    if (allowsFollowUp(stopReason)) return this.followUps.shift();
    return undefined;
  }

  private async conclude(placement: Placement, healthy: boolean): Promise<void> {
    this.concluded = true;
    // Before the session is put away: a kept conversation's process goes on without the run.
    this.withdrawOffer();
    await this.ctx.settle(this, placement, healthy);
  }

  private stoppedEvent(): EndedEvent {
    return {
      type: 'ended',
      status: 'cancelled',
      stop:
        this.stopReason === 'turn_limit' || this.stopReason === 'token_budget'
          ? this.stopReason
          : 'cancelled',
    };
  }

  private sink(): SessionSink {
    return {
      onUpdate: (update) => this.onUpdate(update),
      onPermission: (request) => {
        const answer: acp.RequestPermissionResponse =
          this.stopReason || this.cancelSent
            ? { outcome: { outcome: 'cancelled' } }
            : answerPermission(request.options, this.ctx.permissionPolicy);
        const chosen =
          answer.outcome.outcome === 'selected'
            ? (request.options.find((o) => o.optionId === (answer.outcome as { optionId: string }).optionId)
                ?.kind ?? 'selected')
            : 'cancelled';
        const title = request.toolCall.title ?? this.toolTitles.get(request.toolCall.toolCallId) ?? '';
        this.writeLine(`[permission] ${title}: ${chosen} (policy ${this.ctx.permissionPolicy})`);
        return answer;
      },
    };
  }

  /** Writes `line` into the transcript on a line of its own. */
  private writeLine(line: string): void {
    this.emit({ type: 'output', text: `${this.atLineStart ? '' : '\n'}${line}\n` });
  }

  /** Remembers a tool call's title for its updates (which often carry none); bounded per run. */
  private rememberTitle(toolCallId: string, title: string | null | undefined): string {
    if (title) {
      if (this.toolTitles.size >= MAX_TOOL_TITLES) this.toolTitles.clear();
      this.toolTitles.set(toolCallId, title);
      return title;
    }
    return this.toolTitles.get(toolCallId) ?? '';
  }

  private onUpdate(update: acp.SessionUpdate): void {
    switch (update.sessionUpdate) {
      case 'agent_message_chunk':
        if (update.content.type === 'text') this.emit({ type: 'output', text: update.content.text });
        return;
      case 'tool_call': {
        const title = this.rememberTitle(update.toolCallId, update.title);
        this.writeLine(toolLine('tool_call', title, update.kind, update.status));
        this.emit({ type: 'tool_call', toolCallId: update.toolCallId, title: update.title });
        return;
      }
      case 'tool_call_update': {
        const title = this.rememberTitle(update.toolCallId, update.title);
        this.writeLine(toolLine('tool_call_update', title, update.kind, update.status));
        return;
      }
      case 'usage_update': {
        const costUsd = update.cost?.currency === 'USD' ? update.cost.amount : undefined;
        this.emit({
          type: 'usage',
          used: update.used,
          size: update.size,
          ...(costUsd !== undefined && { costUsd }),
        });
        return;
      }
      default:
        // Thoughts, plans, tool call progress, modes and the rest are not part of the run's record.
        return;
    }
  }

  private emit(event: RunnerEvent): void {
    if (this.ended) return;
    if (event.type === 'output' && event.text.length > 0) this.atLineStart = event.text.endsWith('\n');
    try {
      this.onEvent(event);
    } catch {
      // A listener's failure must not break the run (and its one `ended`).
    }
  }

  private finish(ended: EndedEvent): void {
    if (this.ended) return;
    this.emit(ended);
    this.ended = true;
    this.resolveDone();
  }
}
