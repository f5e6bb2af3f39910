/**
 * Runs, their states and their records (DESIGN §3). A run's lifecycle is a discriminated union on
 * `status`; every transition happens in `scheduler.ts`.
 */

export type RunId = string;
/** `mcp:<key>`, `chat:<id>`, `cli:<id>`, `slack:<user>` or `run:<id>` (a running sub-agent: nesting). */
export type ParentKey = string;

export const LIVE_STATUSES = ['queued', 'starting', 'running'] as const;
export const TERMINAL_STATUSES = ['completed', 'failed', 'timed_out', 'cancelled', 'lost'] as const;
export type LiveStatus = (typeof LIVE_STATUSES)[number];
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];
export type RunStatus = LiveStatus | TerminalStatus;

export type DeliveryStatus = 'pending' | 'delivered' | 'undeliverable';
export type ReasoningEffort = 'low' | 'medium' | 'high' | 'xhigh' | 'max';
export type SteerMode = 'interrupt' | 'follow_up';

/** Why a run stopped short of its own end (`completed` with a note, or a requested stop). */
export type StopNote =
  | 'end_turn'
  | 'max_tokens'
  | 'max_turn_requests'
  | 'turn_limit'
  | 'token_budget'
  | 'refusal'
  | 'cancelled';

/** What a spawn asks for, after validation. The task is the real text; previews are redacted. */
export interface RunSpec {
  task: string;
  /** The task redacted and cut for display, computed once at admission (listing never redacts again). */
  preview?: string;
  agent: string;
  cwd?: string;
  /** `cwd` came from a `cwd` argument: it must still resolve under the allowed roots when the run starts. */
  cwdConfined?: boolean;
  maxTurns?: number;
  /** Token budget asked by the spawn (`max_tokens`); 0 = none. */
  maxTokens?: number;
  model?: string;
  reasoningEffort?: ReasoningEffort;
  keep?: boolean;
  includeMemory?: boolean;
  includeLessons?: boolean;
  includeProject?: boolean;
  /** `worktree`: the run works in its own git worktree on branch `crew/<run id>` (issue 31). */
  isolation?: 'worktree';
  /** The repository and base commit a worktree run starts from, resolved once at admission. */
  workspaceBase?: WorkspaceBase;
  /** The run's agent runs under bubblewrap (issue 31). */
  sandbox?: boolean;
  /**
   * The name the parent's client gave itself (`clientInfo.name`, cleaned, at most 64 characters), kept
   * from admission so the run reads as "claude-code (session bc5b9186)" after its session, the daemon or
   * the gateway that admitted it are gone. Absent when the parent had none (its key is its name).
   */
  parentName?: string;
}

/** Where a worktree run's worktree comes from, recorded at admission (the parent's HEAD unless `base` named one). */
export interface WorkspaceBase {
  repo: string;
  /** The run's `cwd` relative to `repo`. */
  subdir: string;
  /** The base commit. */
  base: string;
  /** The branch checked out at admission, whose tip conflicts are checked against. */
  baseBranch?: string;
}

/**
 * What every run state has. The optional fields are declared `| undefined` because the scheduler makes
 * every run with all of them present (undefined when absent), in one order: all its run states then share
 * one hidden class, so the sites that read them stay monomorphic and a transition's copy adds no property
 * array (bench/admission: ~6 µs of CPU per run less than states that each added their own fields).
 */
interface RunBase {
  id: RunId;
  parent: ParentKey;
  agent: string;
  /** 1 for a top-level run; a nested run is its parent's depth + 1. */
  depth: number;
  /** The top-level ancestor whose permit this run executes under (itself when top-level). */
  rootId: RunId;
  batchId?: string | undefined;
  commandId?: string | undefined;
  /** Set when this run continues a kept conversation: the conversation's id. */
  conversationId?: string | undefined;
  keep: boolean;
  /** Tool-call budget resolved at admission; absent or 0 = none. */
  maxTurns?: number | undefined;
  /**
   * Token budget (input + output, counted at the provider gateway) resolved at admission, already
   * narrowed to what its ancestors had left; absent or 0 = none.
   */
  maxTokens?: number | undefined;
  /** The model provider its agent calls through Crew's provider gateway; its starts count against that provider's cap. */
  provider?: string | undefined;
  createdAt: number;
  /** Admission order; the FIFO queue and restart recovery sort by it. */
  seq: number;
  /** When the runner was asked to start it; absent while queued or while the stagger holds it back. */
  launchedAt?: number | undefined;
  /** When the runner confirmed the start. */
  startedAt?: number | undefined;
  endedAt?: number | undefined;
  /** An ended run's stop note. */
  stop?: StopNote | undefined;
  /** An ended run's error. */
  error?: string | undefined;
}

export interface QueuedRun extends RunBase {
  status: 'queued';
}
export interface StartingRun extends RunBase {
  status: 'starting';
}
export interface ExecutingRun extends RunBase {
  status: 'running';
  launchedAt: number;
  startedAt: number;
}
export interface EndedRun extends RunBase {
  status: TerminalStatus;
  endedAt: number;
}

export type Run = QueuedRun | StartingRun | ExecutingRun | EndedRun;

/** Whether a run with this status has ended. A switch, not a search of `TERMINAL_STATUSES`: it is asked several times per run. */
export function isTerminal(status: RunStatus): status is TerminalStatus {
  switch (status) {
    case 'completed':
    case 'failed':
    case 'timed_out':
    case 'cancelled':
    case 'lost':
      return true;
    default:
      return false;
  }
}

export function parentRunId(parent: ParentKey): RunId | undefined {
  return parent.startsWith('run:') ? parent.slice(4) : undefined;
}

/** Exhaustiveness guard for `switch` over a union. */
export function assertNever(value: never): never {
  // Internal: the type checker proves it unreachable.
  throw new Error(`unexpected value: ${JSON.stringify(value)}`);
}

/**
 * `run` with every field present, absent ones undefined, in the order the scheduler makes new runs in.
 * For runs read back from a store that leaves undefined fields out (the SQLite store's JSON): restored,
 * they share the hidden class of the runs admitted since (see `RunBase`).
 */
export function withEveryField(run: Run): Run {
  return {
    id: run.id,
    status: run.status,
    parent: run.parent,
    agent: run.agent,
    depth: run.depth,
    rootId: run.rootId,
    batchId: run.batchId,
    commandId: run.commandId,
    conversationId: run.conversationId,
    keep: run.keep,
    maxTurns: run.maxTurns,
    maxTokens: run.maxTokens,
    provider: run.provider,
    createdAt: run.createdAt,
    seq: run.seq,
    launchedAt: run.launchedAt,
    startedAt: run.startedAt,
    endedAt: run.endedAt,
    stop: run.stop,
    error: run.error,
  } as Run;
}
