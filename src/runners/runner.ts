import type { AgentDef } from '../core/agent-def.js';
import type { ErrorKind } from '../core/error-kind.js';
import type { KeptSession } from '../core/scheduler-types.js';
import type { ReasoningEffort, RunId, SteerMode, StopNote } from '../core/types.js';
import type { WorkspaceFacts } from '../core/workspace-facts.js';
import type { WorkspacePlan } from '../workspace/workspace-plan.js';

/**
 * The Runner port: how a run executes (DESIGN §6, Runners). The gateway calls `start` when the scheduler
 * says so and learns everything else from the events; it never assumes a run ended until the runner
 * says `ended` (that is when the permit returns, so a runner must report it exactly once per start).
 *
 * Left out: admission, timeouts and turn budgets (the gateway decides; it calls `stop`), transcripts on
 * disk (the gateway writes the `output` events) and delivery.
 */
export interface Runner {
  /** Starts a run (or continues a kept conversation when `request.continueFrom` is set). */
  start(request: RunRequest, onEvent: (event: RunnerEvent) => void): RunHandle;
  /** Ends a kept conversation's session (ACP `session/close` when advertised, else its process). */
  release(conversationId: string): Promise<void>;
  /** Stops every live run and runtime; resolves when no process the runner started remains. */
  close(): Promise<void>;
}

export interface McpServerRef {
  name: string;
  /** Crew's Streamable HTTP endpoint. */
  url: string;
  /** Headers to send, e.g. `Authorization: Bearer <run-scoped token>`. */
  headers: Record<string, string>;
}

export interface RunRequest {
  runId: RunId;
  agent: AgentDef;
  /** The full prompt: context groups and the agent's system prompt already prepended. */
  prompt: string;
  /** Absolute working directory. */
  cwd: string;
  mcpServers: McpServerRef[];
  model?: string;
  reasoningEffort?: ReasoningEffort;
  /** Keep the session after the turn so it can be continued. */
  keep: boolean;
  /** Continue this kept conversation (its id) instead of opening a new session. */
  continueFrom?: string;
  /**
   * With `continueFrom`: the conversation's agent session as recorded before a restart. A runner that no
   * longer holds the conversation reopens this session in a new process (ACP `session/load`) when the
   * agent can; without it, or when it cannot, the run fails saying so.
   */
  resumeSession?: KeptSession;
  /** Prefer a shared runtime (the gateway decided the run is eligible). */
  shared: boolean;
  /**
   * Run as a session inside this runtime (a hosted chat's parent process) when the runner has it;
   * otherwise as usual. Set only for eligible runs (sharing on; no model, effort or keep).
   */
  runtimeKey?: string;
  /** Its own worktree and/or sandbox (issue 31), made when it starts by the workspace runner. */
  workspace?: WorkspacePlan;
}

export type RunnerEvent =
  /**
   * The agent is up and the prompt was sent; `pid`/`startTime` identify a dedicated process tree. `host`:
   * cluster mode, the gateway that executes it (its transcript lives there).
   */
  | {
      type: 'started';
      pid?: number;
      startTime?: number;
      shared: boolean;
      host?: string;
      /** Its workspace as made (issue 31). */
      workspace?: WorkspaceFacts;
      /** A kept run's agent session (ACP): recorded on its conversation so a restart can reopen it. */
      session?: KeptSession;
    }
  | { type: 'output'; text: string }
  | { type: 'tool_call'; toolCallId: string; title?: string }
  | { type: 'usage'; used?: number; size?: number; costUsd?: number }
  /** Exactly once per `start`. `cancelled` answers a `stop`. */
  | {
      type: 'ended';
      /** `lost`: a remote run whose executing gateway died (cluster mode). */
      status: 'completed' | 'failed' | 'cancelled' | 'lost';
      stop?: StopNote;
      error?: string;
      /** The typed cause of a failure, read from the agent's JSON-RPC error (its `data` first). */
      errorKind?: ErrorKind;
      exitCode?: number;
      /** Its workspace as it ended: head, changes, conflicts (issue 31). */
      workspace?: WorkspaceFacts;
    };

export type StopReason = 'cancel' | 'timeout' | 'turn_limit' | 'token_budget' | 'shutdown';

export interface RunHandle {
  /**
   * Stops the run: a dedicated process tree gets SIGTERM then SIGKILL after the grace; a shared
   * session gets `session/cancel`. The `ended` event follows once the stop is complete.
   */
  stop(reason: StopReason): void;
  /** Steers a running run: `interrupt` cancels the turn and prompts with the message; `follow_up` waits for the turn to end. */
  steer(message: string, mode: SteerMode): Promise<void>;
}
