/**
 * One error class with a string code (DESIGN §6). Every "no" Crew gives is a {@link CrewError}; each
 * edge (MCP, HTTP, CLI) maps the code to its own protocol, never the message.
 */

export const REFUSAL_CODES = [
  'empty_task',
  'invalid_argument',
  'unknown_agent',
  'cwd_not_allowed',
  'batch_too_large',
  'depth_exceeded',
  'children_limit',
  'memory_critical',
  'queue_full',
  'not_found',
  'not_running',
  'conversation_busy',
  'conversation_released',
  'pruned',
  'unauthorized',
  /** The store refuses writes (a full disk): nothing is admitted until it accepts them again. */
  'storage_unavailable',
  /** Cluster mode: the cluster's Redis does not answer, so nothing is admitted; what runs goes on. */
  'cluster_unavailable',
  /**
   * Cluster mode: what was asked (a transcript) lives on the gateway that executes the run, and that
   * gateway does not answer; the refusal names it.
   */
  'not_here',
  /** A sandbox was asked for where bubblewrap or user namespaces are missing: the run is not admitted. */
  'sandbox_unavailable',
  /** `spawn_merge`: the run's changes do not merge into the target; the refusal names the files. */
  'merge_conflict',
  /** `spawn_merge`: the target branch moved in a way a person must look at (rewritten, or moved meanwhile). */
  'merge_target_moved',
  /** `spawn_merge`: the target branch is checked out in a worktree, whose files Crew does not touch. */
  'merge_target_checked_out',
] as const;

export type RefusalCode = (typeof REFUSAL_CODES)[number];

/** The machine-readable "no": what happened, what to do next, and the numbers behind it. */
export interface Refusal {
  code: RefusalCode;
  /** Says what happened and what to do next. */
  message: string;
  /** The bound that was hit, when there is one. */
  limit?: number;
  /** Where the caller stands against that bound. */
  current?: number;
  /** A hint for when a retry could succeed. */
  retry_after_secs?: number;
  /** For `invalid_argument`: the path of the offending argument, e.g. `tasks[3]`. */
  path?: string;
}

export class CrewError extends Error {
  readonly code: RefusalCode;
  readonly refusal: Refusal;

  constructor(refusal: Refusal) {
    super(refusal.message);
    this.name = 'CrewError';
    this.code = refusal.code;
    this.refusal = refusal;
  }
}

export function refuse(
  code: RefusalCode,
  message: string,
  extra: Omit<Refusal, 'code' | 'message'> = {},
): Refusal {
  return { code, message, ...extra };
}

export function isCrewError(value: unknown): value is CrewError {
  return value instanceof CrewError;
}

/**
 * Local faults: what went wrong on this machine rather than a "no" to a request. They share the
 * refusals' habit of a string code (mapped to exit codes by the CLI's one table) and a message that says
 * what to do next; they never travel on the wire as refusals.
 */
export const FAULT_CODES = [
  /** Another gateway holds this `CREW_HOME`. */
  'gateway_locked',
  /** No daemon answers at the address the CLI found. */
  'daemon_unreachable',
  /** A settings file (Claude Code's, or Crew's own config) that Crew will not touch or cannot read. */
  'settings_invalid',
  /** An agent process died or answered a protocol request with an error. */
  'runtime_died',
  /** An agent's command cannot be started: empty, not found or not executable, or its directory is missing. */
  'agent_unstartable',
  /** The store (`crew.db`) cannot be opened or used. */
  'store_unusable',
  /** The command line was wrong. */
  'usage',
  /** A command failed; its message says why. */
  'command_failed',
  /** A file Crew ships beside its code (a dashboard asset, a Lua script) is missing: rebuild or reinstall. */
  'install_incomplete',
] as const;

export type FaultCode = (typeof FAULT_CODES)[number];
export type ErrorCode = RefusalCode | FaultCode;

export class CrewFault extends Error {
  readonly code: FaultCode;
  /** Facts behind the fault (a pid, a path, a URL), for callers that act on them. */
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: FaultCode, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'CrewFault';
    this.code = code;
    this.details = details;
  }
}

export function isCrewFault(value: unknown): value is CrewFault {
  return value instanceof CrewFault;
}

/** The code of a refusal or a local fault; undefined for anything else (a bug). */
export function errorCodeOf(error: unknown): ErrorCode | undefined {
  return isCrewError(error) || isCrewFault(error) ? error.code : undefined;
}

/** `{ok: false, refusal}`: the wire shape of a refusal on every surface. */
export function refusalBody(refusal: Refusal): { ok: false; refusal: Refusal } {
  return { ok: false, refusal };
}
