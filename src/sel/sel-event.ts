/**
 * Security event log records (DESIGN §1, §7): one JSON object per line of
 * `$CREW_HOME/security_events.jsonl`. Every string in an event is redacted before it is stored, so task
 * text that reaches metadata by any path is masked.
 */
import { decodePercentSafely } from '../core/percent-decode.js';
import { redact } from '../core/redact.js';
import { countChars, takeHead } from '../core/truncate.js';

/** Outcomes Crew writes today; others are accepted as they come. */
export const SEL_OUTCOMES = [
  'rejected_empty_task',
  'refused_memory_critical',
  'refused_queue_full',
  'refused_depth',
  'refused_children_limit',
  'refused_storage_unavailable',
  'refused_cluster_unavailable',
  'refused_not_here',
  'refused_unauthorized',
  'config_bounds_clamped',
  'admitted',
  'ended',
] as const;

export type KnownSelOutcome = (typeof SEL_OUTCOMES)[number];
/** A known outcome, or any other string (autocompletion keeps the known ones). */
export type SelOutcome = KnownSelOutcome | (string & {});

/**
 * The outcome of the one SEL line every refusal writes: `refused_<code>`, except the two names the log had
 * before every refusal was audited (`rejected_empty_task`, `refused_depth`). The line's metadata always
 * carries the refusal `code` as well, so a reader never needs this table.
 */
export function refusalOutcome(code: string): SelOutcome {
  if (code === 'empty_task') return 'rejected_empty_task';
  if (code === 'depth_exceeded') return 'refused_depth';
  return `refused_${code}`;
}

/** The refusal code a refusal outcome stands for (the inverse of {@link refusalOutcome}); else undefined. */
export function codeOfOutcome(outcome: string): string | undefined {
  if (outcome === 'rejected_empty_task') return 'empty_task';
  if (outcome === 'refused_depth') return 'depth_exceeded';
  return outcome.startsWith('refused_') ? outcome.slice('refused_'.length) : undefined;
}

/** What a caller logs; the sink adds the time unless the caller stamped it. */
export interface SelEvent {
  /** ISO 8601 time the caller already stamped (from its own Clock); else the sink's clock stamps it. */
  ts?: string;
  /** The kind of decision: `admission`, `config`, `run`, … */
  event_type: string;
  /** Who asked: the parent key or front end (`mcp:…`, `cli`, `config`). */
  source: string;
  /** The tool or command involved (`spawn_run`, `crew config set`); empty when none. */
  tool_name: string;
  outcome: SelOutcome;
  /** Numbers and names behind the decision; task text only as `task_preview` (it is redacted anyway). */
  metadata?: Record<string, unknown>;
}

/** One stored line. */
export interface SelRecord {
  /** ISO 8601 time from the gateway's Clock. */
  ts: string;
  event_type: string;
  source: string;
  tool_name: string;
  outcome: SelOutcome;
  metadata: Record<string, unknown>;
}

/**
 * Longest string kept in a record, in chars (after redaction); longer ones end in `…`. Keeps lines
 * readable and a 100 000-char task from filling the log.
 * @default 4096
 */
export const SEL_STRING_MAX_CHARS = 4096;
/** Metadata nested deeper than this is replaced by `"[nested too deep]"`. */
const MAX_DEPTH = 6;

/** The record for `event` at `nowMs`: time stamped, every string redacted and bounded. */
export function toSelRecord(event: SelEvent, nowMs: number): SelRecord {
  const stamped = typeof event.ts === 'string' && !Number.isNaN(Date.parse(event.ts));
  return {
    ts: stamped ? new Date(Date.parse(event.ts as string)).toISOString() : new Date(nowMs).toISOString(),
    event_type: clean(event.event_type),
    source: clean(event.source),
    tool_name: clean(event.tool_name),
    outcome: clean(event.outcome),
    metadata: sanitizeObject(event.metadata ?? {}, 0),
  };
}

function clean(text: string): string {
  const redacted = redactDecoded(String(text));
  return countChars(redacted) > SEL_STRING_MAX_CHARS
    ? `${takeHead(redacted, SEL_STRING_MAX_CHARS - 1)}…`
    : redacted;
}

/**
 * A string with percent escapes (a request path) is redacted in its decoded form too: when that masks
 * something, the decoded, masked form is kept, so no encoded secret (`ghp%5F…`, `%2567hp_…`) survives.
 */
function redactDecoded(text: string): string {
  if (!text.includes('%')) return redact(text);
  const decoded = decodePercentSafely(text);
  if (decoded !== text) {
    const masked = redact(decoded);
    if (masked !== decoded) return masked;
  }
  return redact(text);
}

function sanitizeObject(value: Record<string, unknown>, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[clean(key)] = sanitize(item, depth + 1);
  return out;
}

/** A JSON-safe, redacted copy: strings masked, numbers kept, cycles and exotic values made strings. */
function sanitize(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return clean(value);
  if (value === null || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (value === undefined) return null;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value !== 'object') return clean(String(value));
  if (depth > MAX_DEPTH) return '[nested too deep]';
  if (Array.isArray(value)) return value.map((item) => sanitize(item, depth + 1));
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (value instanceof Error) return clean(value.message);
  return sanitizeObject(value as Record<string, unknown>, depth);
}
