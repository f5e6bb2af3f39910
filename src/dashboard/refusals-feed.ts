import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** One typed refusal as the dashboard shows it (DESIGN §6's refusal, with when and for whom). */
export interface RefusalItem {
  ts: string;
  code: string;
  parent: string;
  message: string;
  limit?: number;
  current?: number;
}

/** Reads at most this much of the SEL's tail, however long the log has grown. */
export const SEL_TAIL_BYTES = 256 * 1024;

const num = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;

/** A SEL refusal (`refused_*` / `rejected_*`) as a typed refusal; anything else is undefined. */
export function refusalFromSel(
  outcome: string,
  metadata: Record<string, unknown>,
  ts: string,
  source = '',
): RefusalItem | undefined {
  if (!outcome.startsWith('refused_') && !outcome.startsWith('rejected_')) return undefined;
  const parent = typeof metadata.parent === 'string' ? metadata.parent : source;
  const base = { ts, parent };
  switch (outcome) {
    case 'refused_queue_full': {
      const limit = num(metadata.max_queued) ?? num(metadata.max_queued_wave_members);
      const current = num(metadata.queue_depth) ?? num(metadata.queued_wave_members);
      return {
        ...base,
        code: 'queue_full',
        message: 'the spawn queue was full; retry when a run ends',
        ...(limit !== undefined ? { limit } : {}),
        ...(current !== undefined ? { current } : {}),
      };
    }
    case 'refused_memory_critical': {
      const limit = num(metadata.min_gb);
      const current = num(metadata.available_gb);
      return {
        ...base,
        code: 'memory_critical',
        message: 'available memory was below agent.spawn_min_memory_gb',
        ...(limit !== undefined ? { limit } : {}),
        ...(current !== undefined ? { current } : {}),
      };
    }
    case 'refused_depth': {
      const limit = num(metadata.max_depth);
      const current = num(metadata.depth);
      return {
        ...base,
        code: 'depth_exceeded',
        message: 'nesting deeper than agent.subagent_max_depth',
        ...(limit !== undefined ? { limit } : {}),
        ...(current !== undefined ? { current } : {}),
      };
    }
    case 'refused_children_limit': {
      const current = num(metadata.live_children);
      const limit = num(metadata.max_children);
      return {
        ...base,
        code: 'children_limit',
        message: 'the parent run had agent.subagent_max_children live children',
        ...(limit !== undefined ? { limit } : {}),
        ...(current !== undefined ? { current } : {}),
      };
    }
    case 'rejected_empty_task':
      return { ...base, code: 'empty_task', message: 'the task was empty' };
    case 'refused_storage_unavailable':
      return {
        ...base,
        code: 'storage_unavailable',
        message: `the store refused writes${typeof metadata.reason === 'string' ? `: ${metadata.reason}` : ''}`,
      };
    default: {
      const code = outcome.replace(/^(refused|rejected)_/, '');
      return { ...base, code, message: outcome.replace(/_/g, ' ') };
    }
  }
}

/**
 * The newest `limit` refusals in the SEL at `path`, newest first, from a bounded read of its tail
 * (`SEL_TAIL_BYTES`); a missing log is no refusals.
 */
export function readRefusals(path: string, limit = 100, tailBytes = SEL_TAIL_BYTES): RefusalItem[] {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return [];
  }
  let text: string;
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, tailBytes);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    text = buffer.toString('utf8');
    // A read that starts mid-line drops that partial line.
    if (length < size) text = text.slice(text.indexOf('\n') + 1);
  } finally {
    closeSync(fd);
  }
  const out: RefusalItem[] = [];
  const lines = text.split('\n');
  for (let i = lines.length - 1; i >= 0 && out.length < limit; i--) {
    const line = lines[i];
    if (!line?.includes('"re')) continue;
    try {
      const record = JSON.parse(line) as Record<string, unknown>;
      const item = refusalFromSel(
        String(record.outcome ?? ''),
        (record.metadata as Record<string, unknown> | undefined) ?? {},
        String(record.ts ?? ''),
        String(record.source ?? ''),
      );
      if (item) out.push(item);
    } catch {
      // a torn line is skipped
    }
  }
  return out;
}
