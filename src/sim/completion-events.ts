import { COMPLETION_EVENT_TAG } from '../core/completion-text.js';

/**
 * Reading Crew's completion events the way a parent model would: from their text. Pure. A single event
 * has one header line, a digest one per member; the simulator only needs each run's id and status.
 */

/** One run as a completion event reports it. */
export interface RunEnd {
  id: string;
  status: string;
}

/** The status of a run whose event carries no header for it (Crew's "preview unavailable" fallback). */
export const UNKNOWN_STATUS = 'unknown';

// `status=` is searched after `agent=`, so a reason (`error=…`, last on the line) cannot shadow it.
const HEADER = /^(?:id=(\S+)\s.*?\bstatus=(\S+)|runs=(\S+))/;

/**
 * Every run a text's completion event header lines name, in order, each id once (the first header wins:
 * a later one can only be a preview quoting another event). Headers count only at the start of a line.
 */
export function parseRunEnds(text: string): RunEnd[] {
  const ends = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    if (!line.startsWith(COMPLETION_EVENT_TAG)) continue;
    const match = HEADER.exec(line.slice(COMPLETION_EVENT_TAG.length).trimStart());
    if (!match) continue;
    const [, id, status, runs] = match;
    if (id !== undefined && status !== undefined) {
      if (!ends.has(id)) ends.set(id, status);
    } else {
      for (const runId of (runs ?? '').split(',').filter(Boolean))
        if (!ends.has(runId)) ends.set(runId, UNKNOWN_STATUS);
    }
  }
  return [...ends].map(([id, status]) => ({ id, status }));
}

/**
 * The runs one event delivered: its `run_ids` are authoritative (a header in a preview names no run of
 * this event), each with the status its header line gives.
 */
export function runEndsOf(event: { run_ids: readonly string[]; text: string }): RunEnd[] {
  const statuses = new Map(parseRunEnds(event.text).map((end) => [end.id, end.status]));
  return event.run_ids.map((id) => ({ id, status: statuses.get(id) ?? UNKNOWN_STATUS }));
}

/** `summary: r1=completed r2=failed`, or `summary: none` when no run was admitted. */
export function summaryLine(ends: readonly RunEnd[]): string {
  const body = ends.map((end) => `${end.id}=${end.status}`).join(' ');
  return `summary: ${body === '' ? 'none' : body}\n`;
}
