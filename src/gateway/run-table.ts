import type { RunView } from './run-view.js';

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

export function runTable(runs: RunView[]): string {
  if (runs.length === 0) return '(no runs)';
  return table(
    ['ID', 'STATUS', 'AGENT', 'DURATION', 'PEAK MEM', 'OUTPUT', 'DELIVERY', 'TASK'],
    runs.map((r) => [
      r.id,
      statusCell(r),
      r.agent,
      r.duration_secs !== undefined ? `${r.duration_secs.toFixed(1)}s` : '-',
      r.peak_mem_gb !== undefined ? `${(r.peak_mem_gb * 1024).toFixed(0)} MiB` : '-',
      r.result_chars !== undefined ? `${r.result_chars} ch` : '-',
      r.delivery,
      r.task_preview.slice(0, 48),
    ]),
  );
}
