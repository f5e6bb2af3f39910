// The page's shared state and small helpers: constants, the `state` object, `h` and `$`, and the
// query-string state read and written on every change (a reload keeps tab, filter, sort, page, selection).

import { fmtDuration, fmtMemory } from './view.js';

export const TABS = ['live', 'queued', 'completed', 'failed', 'timed_out', 'cancelled', 'lost', 'all'];
export const TERMINAL = new Set(['completed', 'failed', 'timed_out', 'cancelled', 'lost']);
export const LIVE = new Set(['queued', 'starting', 'running']);
export const PAGE_SIZE = 50;
export const TRANSCRIPT_LINES = 200;
/** The runs table's columns: their header, the sort key the server knows (if any), and a class. */
export const COLUMNS = [
  { label: '', cls: 'col-select' },
  { label: 'id', cls: 'col-id' },
  { label: 'agent', sort: 'agent', cls: 'col-agent' },
  { label: 'status', sort: 'status', cls: 'col-status' },
  { label: 'duration', sort: 'duration', cls: 'col-num col-duration' },
  { label: 'peak mem', sort: 'peak_mem', cls: 'col-num col-mem' },
  { label: 'output', sort: 'output', cls: 'col-num col-output col-opt' },
  { label: 'delivery', cls: 'col-delivery col-opt' },
  { label: 'task', cls: 'col-task' },
];
/**
 * Output and delivery give way below 1,400 px (app.css): a full-width row must span only the columns
 * shown, or the table grows empty columns that squeeze the task.
 */
export const NARROW = matchMedia('(max-width: 1400px)');
export const span = () => String(NARROW.matches ? COLUMNS.length - 2 : COLUMNS.length);
export const SORTS = ['created', 'status', 'agent', 'duration', 'peak_mem', 'output'];
export const SVG = 'http://www.w3.org/2000/svg';

export const csrf = document.querySelector('meta[name="crew-csrf"]')?.getAttribute('content') ?? '';
const initial = JSON.parse(document.getElementById('crew-snapshot')?.textContent ?? '{}');
const fromUrl = readUrl();

export const state = {
  epoch: initial.epoch,
  seq: initial.seq,
  readOnly: initial.read_only === true,
  capacity: initial.capacity ?? {},
  counts: initial.counts ?? {},
  page: initial.page ?? { rows: [], total: 0, offset: 0, limit: PAGE_SIZE },
  notifications: initial.notifications ?? { items: [], total: 0 },
  /** Names MCP clients gave themselves, by parent key (sessions that are their own parent). */
  parentNames: new Map(initial.parent_names ?? []),
  refusals: initial.refusals ?? [],
  tab: fromUrl.tab,
  query: fromUrl.query,
  sort: fromUrl.sort,
  offset: fromUrl.offset,
  expanded: new Set(),
  /** Live runs ticked for a bulk cancel, and whether its confirm step is showing. */
  picked: new Set(),
  bulkConfirm: false,
  /** The selected run's cancel waits for a second click. */
  cancelConfirm: false,
  history: { samples: [], bucket_secs: 60 },
  paused: false,
  connection: 'connecting',
  /** Messages applied since load, and gaps found (a gap reloads the snapshot). */
  received: 0,
  gaps: 0,
  selected: fromUrl.run,
  detail: undefined,
  transcript: { offset: 0, grep: '', tail: true, header: '', text: '', total: 0 },
  chats: [],
  chatOpen: undefined,
  chatLog: [],
};

// ── DOM helpers ──────────────────────────────────────────────────────────────────────────────────────
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === false || value === null) continue;
    if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}
export const $ = (id) => document.getElementById(id);

/** The page's state from the query string, each value checked (anything else is the default). */
function readUrl() {
  const q = new URLSearchParams(location.search);
  const tab = q.get('tab') ?? 'all';
  const sort = q.get('sort') ?? '';
  const offset = Number(q.get('offset') ?? 0);
  const run = q.get('run') ?? '';
  return {
    tab: TABS.includes(tab) ? tab : 'all',
    query: (q.get('q') ?? '').slice(0, 200),
    sort: SORTS.includes(sort.replace(/^-/, '')) ? sort : '',
    offset: Number.isInteger(offset) && offset >= 0 ? offset : 0,
    run: /^[\w.:-]{1,128}$/.test(run) ? run : undefined,
  };
}

/** Writes the page's state into the address (no new history entry): a reload comes back to it. */
export function writeUrl() {
  const q = new URLSearchParams();
  if (state.tab !== 'all') q.set('tab', state.tab);
  if (state.query) q.set('q', state.query);
  if (state.sort) q.set('sort', state.sort);
  if (state.offset) q.set('offset', String(state.offset));
  if (state.selected) q.set('run', state.selected);
  const search = q.toString();
  history.replaceState(null, '', search ? `?${search}` : location.pathname);
}

export const fmtSecs = fmtDuration;
export function durationOf(run) {
  if (run.duration_secs !== undefined) return run.duration_secs;
  if (run.started_at && !run.ended_at) return (Date.now() - Date.parse(run.started_at)) / 1000;
  return undefined;
}
export const fmtGb = fmtMemory;
