import { parentLabel } from '../core/parent-label.js';
import type { RunView } from './run-view.js';

/** The widest parent and task cells, in characters: a table line stays readable in a terminal. */
const CELL_MAX = 48;

/** A plain-text table: columns padded to their widest cell. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/** The status, and for a run held back by its provider, that and until when (UTC time of day). */
export function statusCell(run: RunView): string {
  if (run.waiting_for !== 'provider') return run.status;
  return run.hold_until !== undefined
    ? `${run.status} (provider hold until ${run.hold_until.slice(11, 19)}Z)`
    : `${run.status} (provider cap)`;
}

/** A run's parent as a person reads it (see `parentLabel`): "claude-code (session bc5b9186)", "CLI". */
export function parentCell(run: Pick<RunView, 'parent' | 'parent_name'>): string {
  const label = parentLabel(run.parent, run.parent_name).label;
  const chars = Array.from(label);
  return chars.length > CELL_MAX ? `${chars.slice(0, CELL_MAX - 1).join('')}…` : label;
}

/**
 * Runs as a table. `parents: true` adds a PARENT column (`crew list`, where runs of many parents meet);
 * a chat's own list or the demo's leave it out, every row there has the same one.
 */
export function runTable(runs: RunView[], options: { parents?: boolean } = {}): string {
  if (runs.length === 0) return '(no runs)';
  const parents = options.parents === true;
  return table(
    [
      'ID',
      'STATUS',
      'AGENT',
      ...(parents ? ['PARENT'] : []),
      'DURATION',
      'PEAK MEM',
      'OUTPUT',
      'DELIVERY',
      'TASK',
    ],
    runs.map((r) => [
      r.id,
      statusCell(r),
      r.agent,
      ...(parents ? [parentCell(r)] : []),
      r.duration_secs !== undefined ? `${r.duration_secs.toFixed(1)}s` : '-',
      r.peak_mem_gb !== undefined ? `${(r.peak_mem_gb * 1024).toFixed(0)} MiB` : '-',
      r.result_chars !== undefined ? `${r.result_chars} ch` : '-',
      r.delivery,
      r.task_preview.slice(0, CELL_MAX),
    ]),
  );
}
