import type { RunId, SteerMode, StopNote } from '../core/types.js';
import type { RunnerEvent } from '../runners/runner.js';

/** How a run ended, as its runner reports it. */
type RunEnd = Pick<Extract<RunnerEvent, { type: 'ended' }>, 'status' | 'stop' | 'error'>;

/**
 * What travels on a gateway's streams: on its outcome stream the `started` / `ended` reports of the runs
 * it admitted, on its command stream the `cancel` / `steer` of runs it executes. Flat string fields (a
 * Redis stream entry); {@link parseMessage} drops what it does not recognise.
 */
export type ClusterMessage =
  | { type: 'started'; runId: RunId; host: string }
  /** `text`: the transcript (bounded), for the origin's completion event. */
  | ({ type: 'ended'; runId: RunId; host: string; text: string } & RunEnd)
  | { type: 'cancel'; runId: RunId }
  | { type: 'steer'; runId: RunId; message: string; mode: SteerMode };

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
    default:
      return undefined;
  }
}
