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

/** `{ok: false, refusal}`: the wire shape of a refusal on every surface. */
export function refusalBody(refusal: Refusal): { ok: false; refusal: Refusal } {
  return { ok: false, refusal };
}
