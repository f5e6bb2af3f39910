/**
 * The typed cause of a failed run (`error_kind` beside `error` on the run shape), read from what the agent
 * said: the JSON-RPC error's `code`, its `data` (claude-agent-acp sends `errorKind` `rate_limit` /
 * `server_error`; codex-acp sends `codex_error_info` holding an `http_status_code`), and, last, the
 * message. Pure.
 */

export const ERROR_KINDS = [
  'provider_rate_limited',
  'provider_overloaded',
  'provider_error',
  'auth_required',
  'agent_exited',
  'agent_protocol_error',
  'timeout',
] as const;

export type ErrorKind = (typeof ERROR_KINDS)[number];

export function isErrorKind(value: unknown): value is ErrorKind {
  return typeof value === 'string' && (ERROR_KINDS as readonly string[]).includes(value);
}

/** JSON-RPC's own error codes: the request itself was wrong, not the model call behind it. */
const PROTOCOL_CODES = new Set([-32700, -32600, -32601, -32602]);
/** ACP's `auth_required`. */
const AUTH_REQUIRED_CODE = -32000;
const MAX_DEPTH = 6;

/** The kind of a JSON-RPC error an agent answered a request with. */
export function classifyRpcError(error: { code: number; message: string; data?: unknown }): ErrorKind {
  if (error.code === AUTH_REQUIRED_CODE) return 'auth_required';
  const fromData = kindFromData(error.data, 0);
  if (fromData !== undefined) return fromData;
  if (PROTOCOL_CODES.has(error.code)) return 'agent_protocol_error';
  return kindFromText(error.message) ?? 'provider_error';
}

/** The kind a message names (a 429, "overloaded", "rate limit", …), if any. */
export function kindFromText(text: string): ErrorKind | undefined {
  if (/\b429\b|rate.?limit|too many requests|resource.?exhausted|quota/i.test(text))
    return 'provider_rate_limited';
  if (/\b(529|503)\b|overloaded|unavailable/i.test(text)) return 'provider_overloaded';
  if (/authenticat|unauthori[sz]ed|\b401\b|api key/i.test(text)) return 'auth_required';
  return undefined;
}

function kindOfStatus(status: number): ErrorKind | undefined {
  if (status === 429) return 'provider_rate_limited';
  if (status === 529 || status === 503) return 'provider_overloaded';
  if (status === 401 || status === 403) return 'auth_required';
  if (status >= 400 && status <= 599) return 'provider_error';
  return undefined;
}

/** Walks `data` (bounded depth) for an `errorKind` word or an HTTP status. */
function kindFromData(data: unknown, depth: number): ErrorKind | undefined {
  if (data === null || typeof data !== 'object' || depth > MAX_DEPTH) return undefined;
  const record = data as Record<string, unknown>;
  const word = record.errorKind ?? record.error_kind;
  if (typeof word === 'string') {
    if (/rate.?limit/i.test(word)) return 'provider_rate_limited';
    if (/overload/i.test(word)) return 'provider_overloaded';
    if (/auth/i.test(word)) return 'auth_required';
    if (/server|api|provider/i.test(word)) {
      const message = typeof record.message === 'string' ? record.message : '';
      return kindFromText(message) === 'provider_overloaded' ? 'provider_overloaded' : 'provider_error';
    }
  }
  for (const [key, value] of Object.entries(record)) {
    if (typeof value === 'number' && /^(http_?)?status(_?code)?$/i.test(key)) {
      const kind = kindOfStatus(value);
      if (kind !== undefined) return kind;
    }
    if (/usage_limit|rate_limit|too_many/i.test(key)) return 'provider_rate_limited';
    if (/server_overloaded|overloaded/i.test(key)) return 'provider_overloaded';
  }
  for (const value of Object.values(record)) {
    if (value !== null && typeof value === 'object') {
      const kind = kindFromData(value, depth + 1);
      if (kind !== undefined) return kind;
    }
  }
  return undefined;
}
