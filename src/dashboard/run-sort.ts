import { CrewError, refuse } from '../core/errors.js';
import type { RunView } from '../gateway/run-view.js';

/** The runs table's sortable columns. */
export const SORT_KEYS = ['created', 'status', 'agent', 'duration', 'peak_mem', 'output'] as const;
export type SortKey = (typeof SORT_KEYS)[number];
const KEYS: ReadonlySet<string> = new Set(SORT_KEYS);

export interface RunSort {
  key: SortKey;
  descending: boolean;
}

/** `duration` ascending, `-duration` descending; anything else is a typed refusal. */
export function parseSort(raw: string): RunSort {
  const descending = raw.startsWith('-');
  const key = descending ? raw.slice(1) : raw;
  if (!KEYS.has(key)) {
    throw new CrewError(
      refuse(
        'invalid_argument',
        `sort must be one of ${SORT_KEYS.join(', ')}, with a leading - for descending`,
        { path: 'sort' },
      ),
    );
  }
  return { key: key as SortKey, descending };
}

const STATUS_ORDER = new Map(
  ['running', 'starting', 'queued', 'failed', 'timed_out', 'lost', 'cancelled', 'completed'].map((s, i) => [
    s,
    i,
  ]),
);

/**
 * A row's value for a column, from its runs (a wave's members): the peak duration and memory, the sum
 * of output, the first member's status and agent. Missing values sort as -1 (first ascending).
 */
export function sortValue(key: SortKey, runs: readonly RunView[], now: number): number | string {
  const first = runs[0];
  if (!first) return -1;
  switch (key) {
    case 'created':
      return first.created_at;
    case 'status':
      return STATUS_ORDER.get(first.status) ?? 99;
    case 'agent':
      return first.agent;
    case 'duration':
      return Math.max(...runs.map((r) => r.duration_secs ?? liveSecs(r, now) ?? -1));
    case 'peak_mem':
      return Math.max(...runs.map((r) => r.peak_mem_gb ?? -1));
    case 'output':
      return runs.reduce((sum, r) => sum + (r.result_chars ?? 0), 0);
  }
}

function liveSecs(run: RunView, now: number): number | undefined {
  return run.started_at && !run.ended_at ? (now - Date.parse(run.started_at)) / 1000 : undefined;
}

export function compareValues(a: number | string, b: number | string): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
}
