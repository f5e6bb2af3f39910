import type { RunId, SteerMode, StopNote } from '../core/types.js';
import type { RunnerEvent } from '../runners/runner.js';
import type { PageOptions } from '../transcripts/transcript-store.js';

/** How a run ended, as its runner reports it. */
type RunEnd = Pick<Extract<RunnerEvent, { type: 'ended' }>, 'status' | 'stop' | 'error'>;

/**
 * What travels on a gateway's streams: on its outcome stream the `started` / `ended` reports of the runs
 * it admitted, on its command stream the `cancel` / `steer` of runs it executes (and the kept
 * conversations' `turn` / `release`, docs/decisions.md, kept conversations in cluster mode). Flat string fields (a
 * Redis stream entry); {@link parseMessage} drops what it does not recognise.
 */
export type ClusterMessage =
  | { type: 'started'; runId: RunId; host: string }
  /** `text`: the transcript (bounded), for the origin's completion event. */
  | ({ type: 'ended'; runId: RunId; host: string; text: string } & RunEnd)
  | { type: 'cancel'; runId: RunId }
  | { type: 'steer'; runId: RunId; message: string; mode: SteerMode }
  /**
   * On the executing gateway's command stream: `replyTo` asks for a page of the transcript of its copy of
   * `runId`; `options` is {@link PageOptions} as JSON.
   */
  | { type: 'page'; runId: RunId; requestId: string; replyTo: string; options: string }
  /** On the asker's outcome stream: the answer to `requestId` is in its key (`<ns>:page:<requestId>`). */
  | { type: 'paged'; runId: RunId; requestId: string }
  /**
   * On the command stream of the gateway that holds a kept conversation's session: run the continuation
   * job `runId` here (read from the queue); `replyTo`, whose worker took the job, holds its cluster slot
   * until told the turn ended.
   */
  | { type: 'turn'; runId: RunId; replyTo: string }
  /** On the outcome stream of the gateway holding the slot: the forwarded turn ended (`error`: it never ran). */
  | { type: 'turn_ended'; runId: RunId; error?: string }
  /** On the command stream of the gateway holding the session: release kept conversation `runId` (its first run). */
  | { type: 'release'; runId: RunId }
  /** On the origin's outcome stream: the gateway holding the session released conversation `runId` itself. */
  | { type: 'released'; runId: RunId; reason: ReleasedReason };

/** Why a gateway released a kept conversation on its own (its reaper): `agent.keep_ttl_secs` or LRU. */
export type ReleasedReason = 'expired' | 'evicted';

/** The most characters one page carries between gateways (it rests in Redis until read, briefly). */
export const MAX_PAGE_CHARS = 1_000_000;
const DEFAULT_PAGE_CHARS = 200_000;

/**
 * A page request's options as another gateway sent them: well-typed fields only, `maxChars` within
 * (0, {@link MAX_PAGE_CHARS}]. Anything else is dropped rather than trusted.
 */
export function pageOptionsOf(json: string): PageOptions {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    raw = undefined;
  }
  const o =
    raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  const count = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined);
  const offset = count(o.offset);
  const limit = count(o.limit);
  const maxChars = count(o.maxChars);
  return {
    ...(offset !== undefined ? { offset } : {}),
    ...(limit !== undefined && limit > 0 ? { limit } : {}),
    ...(typeof o.grep === 'string' ? { grep: o.grep } : {}),
    maxChars:
      maxChars !== undefined && maxChars > 0 ? Math.min(maxChars, MAX_PAGE_CHARS) : DEFAULT_PAGE_CHARS,
  };
}

export function toFields(message: ClusterMessage): string[] {
  const fields: string[] = [];
  for (const [key, value] of Object.entries(message)) {
    if (value !== undefined) fields.push(key, String(value));
  }
  return fields;
}

const ENDED = new Set(['completed', 'failed', 'cancelled', 'lost']);

export function parseMessage(fields: readonly string[]): ClusterMessage | undefined {
  const f = new Map<string, string>();
  for (let i = 0; i + 1 < fields.length; i += 2) f.set(fields[i] as string, fields[i + 1] as string);
  const runId = f.get('runId');
  if (!runId) return undefined;
  switch (f.get('type')) {
    case 'started': {
      const host = f.get('host');
      return host ? { type: 'started', runId, host } : undefined;
    }
    case 'ended': {
      const status = f.get('status') ?? '';
      if (!ENDED.has(status)) return undefined;
      const stop = f.get('stop');
      const error = f.get('error');
      return {
        type: 'ended',
        runId,
        status: status as 'completed',
        ...(stop !== undefined ? { stop: stop as StopNote } : {}),
        ...(error !== undefined ? { error } : {}),
        host: f.get('host') ?? '?',
        text: f.get('text') ?? '',
      };
    }
    case 'cancel':
      return { type: 'cancel', runId };
    case 'steer': {
      const message = f.get('message');
      const mode = f.get('mode') === 'follow_up' ? 'follow_up' : 'interrupt';
      return message !== undefined ? { type: 'steer', runId, message, mode } : undefined;
    }
    case 'page': {
      const requestId = f.get('requestId');
      const replyTo = f.get('replyTo');
      return requestId && replyTo
        ? { type: 'page', runId, requestId, replyTo, options: f.get('options') ?? '{}' }
        : undefined;
    }
    case 'paged': {
      const requestId = f.get('requestId');
      return requestId ? { type: 'paged', runId, requestId } : undefined;
    }
    case 'turn': {
      const replyTo = f.get('replyTo');
      return replyTo ? { type: 'turn', runId, replyTo } : undefined;
    }
    case 'turn_ended': {
      const error = f.get('error');
      return { type: 'turn_ended', runId, ...(error !== undefined ? { error } : {}) };
    }
    case 'release':
      return { type: 'release', runId };
    case 'released': {
      const reason = f.get('reason');
      return reason === 'expired' || reason === 'evicted' ? { type: 'released', runId, reason } : undefined;
    }
    default:
      return undefined;
  }
}
