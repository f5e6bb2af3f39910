// Crew's operator dashboard: one hand-written ES module, no framework, no build step. The server embeds a
// snapshot in the page; this renders it, then follows the live feed at /api/ws (typed messages with a
// sequence number, resumed after a reconnect) and re-reads a page of rows when runs change. Every text
// goes into the DOM as text (never as HTML), and at most one page of rows is in the DOM at once. What a
// person reads (parent names, sizes, durations, the chart) is worded in view.js; the page's own state
// (tab, filter, sort, page, selected run) lives in the query string, so a reload keeps it.

import { chartModel, fmtChars, fmtDuration, fmtMemory, parentLabel, runFields } from './view.js';

const TABS = ['live', 'queued', 'completed', 'failed', 'timed_out', 'cancelled', 'lost', 'all'];
const TERMINAL = new Set(['completed', 'failed', 'timed_out', 'cancelled', 'lost']);
const LIVE = new Set(['queued', 'starting', 'running']);
const PAGE_SIZE = 50;
const TRANSCRIPT_LINES = 200;
/** The runs table's columns: their header, the sort key the server knows (if any), and a class. */
const COLUMNS = [
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
const NARROW = matchMedia('(max-width: 1400px)');
const span = () => String(NARROW.matches ? COLUMNS.length - 2 : COLUMNS.length);
const SORTS = ['created', 'status', 'agent', 'duration', 'peak_mem', 'output'];
const SVG = 'http://www.w3.org/2000/svg';

const csrf = document.querySelector('meta[name="crew-csrf"]')?.getAttribute('content') ?? '';
const initial = JSON.parse(document.getElementById('crew-snapshot')?.textContent ?? '{}');
const fromUrl = readUrl();

const state = {
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
function h(tag, attrs = {}, ...children) {
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
const $ = (id) => document.getElementById(id);

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
function writeUrl() {
  const q = new URLSearchParams();
  if (state.tab !== 'all') q.set('tab', state.tab);
  if (state.query) q.set('q', state.query);
  if (state.sort) q.set('sort', state.sort);
  if (state.offset) q.set('offset', String(state.offset));
  if (state.selected) q.set('run', state.selected);
  const search = q.toString();
  history.replaceState(null, '', search ? `?${search}` : location.pathname);
}

const fmtSecs = fmtDuration;
function durationOf(run) {
  if (run.duration_secs !== undefined) return run.duration_secs;
  if (run.started_at && !run.ended_at) return (Date.now() - Date.parse(run.started_at)) / 1000;
  return undefined;
}
const fmtGb = fmtMemory;

// ── API ──────────────────────────────────────────────────────────────────────────────────────────────
async function api(method, path, body) {
  const response = await fetch(path, {
    method,
    credentials: 'same-origin',
    headers: {
      ...(method === 'GET' ? {} : { 'x-crew-csrf': csrf }),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const json = await response
    .json()
    .catch(() => ({ ok: false, refusal: { code: 'invalid_argument', message: `HTTP ${response.status}` } }));
  if (response.status === 401) {
    toast('Your session ended; run `crew dashboard` for a new login link.', 'error');
  }
  return json;
}

function pageQuery() {
  const q = new URLSearchParams({ tab: state.tab, offset: String(state.offset), limit: String(PAGE_SIZE) });
  if (state.query) q.set('q', state.query);
  if (state.sort) q.set('sort', state.sort);
  return q.toString();
}

async function reloadRuns() {
  writeUrl();
  const answer = await api('GET', `/api/dashboard/runs?${pageQuery()}`);
  if (!answer.ok) return;
  state.counts = answer.counts;
  state.page = answer.page;
  learnNames(answer.parent_names);
  // Ticked runs that ended leave the selection: a bulk cancel is for live runs only.
  const live = new Set(liveIdsOnPage());
  for (const id of state.picked) if (!live.has(id)) state.picked.delete(id);
  renderTabs();
  renderRuns();
  renderBulk();
}

/** Keeps the client names an answer brings (bounded: the server sends only those of what it shows). */
function learnNames(pairs) {
  if (!Array.isArray(pairs)) return;
  for (const pair of pairs) {
    if (Array.isArray(pair) && typeof pair[0] === 'string' && typeof pair[1] === 'string')
      state.parentNames.set(pair[0], pair[1]);
  }
  while (state.parentNames.size > 1000) state.parentNames.delete(state.parentNames.keys().next().value);
}

async function reloadHistory() {
  const answer = await api('GET', '/api/dashboard/capacity/history');
  if (!answer.ok) return;
  state.history = { samples: answer.samples, bucket_secs: answer.bucket_secs };
  renderChart();
}

async function reloadNotifications() {
  const answer = await api('GET', '/api/dashboard/notifications');
  if (!answer.ok) return;
  state.notifications = { items: answer.items, total: answer.total };
  learnNames(answer.parent_names);
  renderNotifications();
}

async function reloadSnapshot() {
  const answer = await api('GET', `/api/dashboard?${pageQuery()}`);
  if (!answer.ok) return;
  state.capacity = answer.capacity;
  state.counts = answer.counts;
  state.page = answer.page;
  state.notifications = answer.notifications;
  learnNames(answer.parent_names);
  state.refusals = answer.refusals;
  renderAll();
}

// Runs changed: re-read the page and the notifications, at most a few times a second.
let refreshTimer;
function scheduleRefresh() {
  if (state.paused || refreshTimer !== undefined) return;
  refreshTimer = setTimeout(async () => {
    refreshTimer = undefined;
    await Promise.all([reloadRuns(), reloadNotifications()]);
  }, 150);
}

// ── the live feed ────────────────────────────────────────────────────────────────────────────────────
let socket;
let retryMs = 250;
function connect() {
  const params = new URLSearchParams({ epoch: state.epoch ?? '', since: String(state.seq ?? 0) });
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/api/ws?${params}`;
  const ws = new WebSocket(url);
  socket = ws;
  setConnection('connecting');
  ws.addEventListener('message', (event) => {
    let message;
    try {
      message = JSON.parse(event.data);
    } catch {
      return;
    }
    onMessage(message);
  });
  ws.addEventListener('open', () => {
    retryMs = 250;
  });
  ws.addEventListener('close', () => {
    if (socket !== ws) return;
    setConnection('reconnecting');
    setTimeout(connect, retryMs);
    retryMs = Math.min(retryMs * 2, 4000);
  });
}

function onMessage(message) {
  if (message.type === 'hello') {
    setConnection('live');
    if (message.resume === 'snapshot') {
      state.epoch = message.epoch;
      state.seq = message.seq;
      void reloadSnapshot();
    }
    return;
  }
  if (typeof message.seq !== 'number' || message.seq <= state.seq) return;
  if (message.seq !== state.seq + 1) {
    // A message was missed: the snapshot is the truth again.
    state.gaps++;
    state.seq = message.seq;
    void reloadSnapshot();
    markFeed();
    return;
  }
  state.seq = message.seq;
  state.received++;
  apply(message);
  markFeed();
}

function apply(message) {
  switch (message.type) {
    case 'runs':
      for (const run of message.runs) {
        if (state.selected === run.id && state.detail) {
          state.detail.run = run;
          if (!state.paused) renderDetail();
        }
      }
      scheduleRefresh();
      return;
    case 'ack':
    case 'history':
      scheduleRefresh();
      return;
    case 'refusal':
      state.refusals = [message.refusal, ...state.refusals].slice(0, 100);
      if (!state.paused) renderRefusals();
      return;
    case 'capacity':
      state.capacity = message.capacity;
      if (!state.paused) {
        renderCapacity();
        scheduleHistory();
      }
      return;
  }
}

// The chart is re-read on a capacity change, at most every 5 s, and each minute regardless.
let historyTimer;
function scheduleHistory() {
  if (historyTimer !== undefined) return;
  historyTimer = setTimeout(() => {
    historyTimer = undefined;
    void reloadHistory();
  }, 5000);
}

function markFeed() {
  document.body.dataset.seq = String(state.seq);
  document.body.dataset.received = String(state.received);
  document.body.dataset.gaps = String(state.gaps);
}

function setConnection(connection) {
  state.connection = connection;
  const el = $('connection');
  if (el) {
    el.textContent = state.paused ? 'paused' : connection;
    el.dataset.state = state.paused ? 'paused' : connection;
  }
}

// ── rendering ────────────────────────────────────────────────────────────────────────────────────────
function renderAll() {
  renderCapacity();
  renderChart();
  renderNotifications();
  renderTabs();
  renderRuns();
  renderRefusals();
  renderDetail();
  renderChats();
}

function capCell(label, value, title, id) {
  return h(
    'div',
    { class: 'cap-cell', title, ...(id ? { id } : {}) },
    h('span', { class: 'cap-label' }, label),
    h('span', { class: 'cap-value' }, value),
  );
}

function renderCapacity() {
  const c = state.capacity;
  const costs = c.learned_costs ?? {};
  const agents = Object.entries(costs.agents ?? {})
    .map(([name, a]) => `${name} ${fmtGb(a.mem_gb)}${a.learned ? '' : ' (fallback)'}`)
    .join(' · ');
  $('capacity').replaceChildren(
    ...(c.cluster ? clusterCapCells(c) : hostCapCells(c)),
    capCell('terms', `mem ${c.mem_term ?? '?'} · cpu ${c.cpu_term ?? '?'}`, 'mem_term / cpu_term'),
    capCell(
      'queued',
      `${c.queued_singles ?? 0}/${c.max_queued ?? '?'} single · ${c.queued_wave_members ?? 0}/${c.max_queued_wave_members ?? '?'} wave`,
      'queued single spawns and wave members against their bounds',
    ),
    capCell(
      'memory',
      `${c.available_memory_gb === null || c.available_memory_gb === undefined ? '?' : `${c.available_memory_gb.toFixed(1)} GiB`} · ${c.posture ?? '?'}`,
      'available memory and posture',
    ),
    capCell(
      'cost',
      agents || `${fmtGb(costs.mem_cost_gb)} per run`,
      'learned cost per agent (p90 of its samples)',
    ),
  );
  $('capacity').dataset.posture = c.posture ?? 'unknown';
  renderCluster();
}

/** One host: the cap and the runs holding its permits. */
function hostCapCells(c) {
  return [
    capCell(
      'cap',
      `${c.cap ?? '?'} (${c.cap_source ?? '?'})`,
      'the concurrent-run limit and where it came from',
      'cap-host',
    ),
    capCell(
      'running',
      `${c.running_top_level ?? 0} top-level · ${c.running_nested ?? 0} nested`,
      'top-level runs hold a permit; nested runs run under their ancestor’s permit',
      'cap-running',
    ),
  ];
}

const BINDS = {
  provider_hold: 'the provider’s hold',
  provider_cap: 'the provider cap',
  host_caps: 'every gateway’s host cap or memory',
};

/**
 * Cluster mode: what this gateway executes against its host cap (runs admitted here that execute
 * elsewhere are not in it), the cluster's running against the provider cap, and what binds the next start.
 */
function clusterCapCells(c) {
  const cl = c.cluster;
  return [
    capCell(
      'here',
      `${count(c.running_top_level ?? 0)} of host cap ${count(c.cap)} (${c.cap_source ?? '?'}) · ${count(c.running_nested ?? 0)} nested`,
      'runs this gateway executes for the cluster against its host cap (its worker’s concurrency); nested runs run under their ancestor',
      'cap-host',
    ),
    capCell(
      'cluster',
      `${count(cl.running)} of provider cap ${count(cl.provider_cap)} · ${count(cl.queued)} waiting`,
      'runs executing across the cluster against its provider cap, and runs waiting in the cluster queue',
      'cap-cluster',
    ),
    capCell(
      'binds',
      BINDS[c.binds] ?? 'nothing (room)',
      'what holds back the next start in the cluster',
      'cap-binds',
    ),
  ];
}

const count = (v) => (typeof v === 'number' && Number.isFinite(v) ? String(v) : '?');

/**
 * Cluster mode only (`capacity.cluster`, resource_status's): the cluster's name, whether Redis answers,
 * the provider cap with the running and queued totals across the cluster, then each gateway's cap and
 * running, this one marked. Names come from the shared registry, so they go in as text like all else.
 */
function renderCluster() {
  const box = $('cluster');
  const c = state.capacity.cluster;
  if (!c || typeof c !== 'object') {
    box.replaceChildren();
    box.hidden = true;
    return;
  }
  box.hidden = false;
  box.dataset.available = String(c.available === true);
  const gateways = Array.isArray(c.gateways) ? c.gateways : [];
  box.replaceChildren(
    h(
      'div',
      { class: 'cluster-head' },
      h('span', { class: 'cap-label' }, 'cluster'),
      h('span', { id: 'cluster-name', class: 'cluster-name' }, String(c.name ?? '')),
      h(
        'span',
        { id: 'cluster-redis', class: `badge ${c.available ? 'up' : 'down'}` },
        c.available ? 'Redis available' : 'Redis unavailable: figures as last seen',
      ),
      h(
        'span',
        {
          id: 'cluster-provider',
          title: 'runs executing across the cluster against cluster.provider_cap, and runs waiting',
        },
        h('span', { class: 'cl-running' }, count(c.running)),
        ' running of provider cap ',
        h('span', { class: 'cl-cap' }, count(c.provider_cap)),
        ' · ',
        h('span', { class: 'cl-queued' }, count(c.queued)),
        ' queued ',
        meter(c.running, c.provider_cap, 'provider cap in use'),
      ),
    ),
    h(
      'table',
      { class: 'gateways' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', {}, 'gateway'),
          h('th', { class: 'num' }, 'cap'),
          h('th', { class: 'num' }, 'running'),
          h('th', {}),
        ),
      ),
      h(
        'tbody',
        {},
        ...(gateways.length
          ? gateways.map((g) => {
              const self = g.name === c.gateway;
              return h(
                'tr',
                { class: `gateway${self ? ' self' : ''}`, dataset: { self: String(self) } },
                h(
                  'td',
                  {},
                  h('span', { class: 'gw-name' }, String(g.name ?? '')),
                  self ? h('span', { class: 'muted' }, ' (this gateway)') : '',
                ),
                h('td', { class: 'num gw-cap' }, count(g.cap)),
                h('td', { class: 'num gw-running' }, count(g.running)),
                h(
                  'td',
                  {},
                  meter(g.running, g.cap, 'host cap in use'),
                  g.memory_short === true
                    ? h(
                        'span',
                        {
                          class: 'badge gw-memory-short',
                          title:
                            'its host has less free memory than agent.spawn_min_memory_gb: it takes no cluster job until that recovers',
                        },
                        'memory short',
                      )
                    : '',
                ),
              );
            })
          : [h('tr', { class: 'empty' }, h('td', { colspan: '4' }, 'No gateway has published itself yet.'))]),
      ),
    ),
  );
}

function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  for (const child of children)
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return el;
}

/**
 * The capacity chart: running, queued, the host cap and the tightest provider's cap, one point a minute
 * over the last hour (the daemon's ring of samples, kept from its start).
 */
function renderChart() {
  const box = $('capacity-chart');
  if (!box) return;
  const W = 600;
  const H = 120;
  const model = chartModel(state.history.samples, W, H);
  const line = (key, cls) =>
    model.points[key]
      ? svg('polyline', { points: model.points[key], class: `line ${cls}`, 'data-series': key })
      : '';
  const last = model.last;
  const legend = (cls, label, value) =>
    h(
      'span',
      { class: `legend ${cls}` },
      h('span', { class: 'swatch' }),
      ` ${label} `,
      h('b', {}, value ?? '–'),
    );
  box.replaceChildren(
    h(
      'div',
      { class: 'chart-head' },
      h('h2', {}, 'Capacity, last hour'),
      h(
        'div',
        { class: 'legends' },
        legend('running', 'running', last.running),
        legend('queued', 'queued', last.queued),
        legend('cap', 'cap', last.cap),
        legend('provider', 'provider cap', last.provider_cap === null ? 'none' : last.provider_cap),
      ),
    ),
    svg(
      'svg',
      {
        id: 'capacity-svg',
        viewBox: `0 0 ${W} ${H}`,
        preserveAspectRatio: 'none',
        role: 'img',
        'aria-label': `capacity over the last ${model.minutes} minutes: peak ${model.max}`,
      },
      svg('line', { x1: 0, y1: H, x2: W, y2: H, class: 'axis' }),
      line('queued', 'queued'),
      line('cap', 'cap'),
      line('provider_cap', 'provider'),
      line('running', 'running'),
    ),
    h(
      'div',
      { class: 'chart-foot muted' },
      h('span', {}, `${model.minutes} min ago`),
      h('span', {}, `peak ${model.max}`),
      h('span', {}, 'now'),
    ),
  );
}

/** A bar of `value` against `max` (nothing when either is not a number). */
function meter(value, max, label) {
  if (typeof value !== 'number' || typeof max !== 'number' || max <= 0) return '';
  return h('meter', { min: '0', max: String(max), value: String(Math.min(value, max)), 'aria-label': label });
}

function renderNotifications() {
  const { items, total } = state.notifications;
  const box = $('notifications');
  if (!items.length) {
    box.replaceChildren();
    box.hidden = true;
    return;
  }
  box.hidden = false;
  box.replaceChildren(
    h(
      'div',
      { class: 'notes-title' },
      h('span', { id: 'notes-total' }, `Needs your attention: ${total}`),
      h(
        'span',
        { class: 'muted notes-why' },
        ' failed, lost or undelivered runs, and runs for a person (Slack, chat, CLI)',
      ),
      state.readOnly
        ? ''
        : h('button', { id: 'ack-all', class: 'ack', onclick: () => ackAll() }, `Ack all ${total}`),
    ),
    ...items
      .slice(0, 5)
      .map((n) =>
        h(
          'div',
          { class: 'note', dataset: { runId: n.run_id, status: n.status } },
          h('span', { class: `status s-${n.status}` }, n.status),
          h('button', { class: 'link run-id', onclick: () => select(n.run_id) }, n.run_id),
          n.batch_id ? h('span', { class: 'muted' }, ` wave of ${n.members}`) : '',
          h(
            'span',
            { class: 'muted', title: n.parent },
            ` ${n.agent} · ${parentLabel(n.parent, state.parentNames.get(n.parent)).label} · `,
          ),
          h('span', { class: 'preview' }, n.task_preview),
          state.readOnly ? '' : h('button', { class: 'ack', onclick: () => ack(n.run_id) }, 'Ack'),
        ),
      ),
    total > 5 ? h('div', { class: 'muted' }, `… and ${total - 5} more`) : '',
  );
}

function renderTabs() {
  $('tabs').replaceChildren(
    ...TABS.map((tab) =>
      h(
        'button',
        {
          class: `tab${state.tab === tab ? ' active' : ''}`,
          role: 'tab',
          'aria-selected': state.tab === tab ? 'true' : 'false',
          dataset: { tab },
          onclick: () => {
            state.tab = tab;
            state.offset = 0;
            renderTabs();
            void reloadRuns();
          },
        },
        tab.replace('_', ' '),
        h('span', { class: 'count' }, String(state.counts[tab] ?? 0)),
      ),
    ),
  );
}

/** A queued run held back by its provider (cap or a 429's hold) says so, with the hold's end. */
function waitingBadge(run) {
  if (run.waiting_for !== 'provider') return '';
  const until = run.hold_until ? ` until ${new Date(run.hold_until).toLocaleTimeString()}` : ' (cap)';
  return h(
    'span',
    { class: 'badge waiting', dataset: { waitingFor: 'provider' }, title: run.hold_until ?? '' },
    `provider${until}`,
  );
}

function runCells(run, depth) {
  const pickable = !state.readOnly && LIVE.has(run.status) && depth === 0;
  return [
    h(
      'td',
      { class: 'col-select' },
      pickable
        ? h('input', {
            type: 'checkbox',
            class: 'pick',
            'aria-label': `select ${run.id}`,
            checked: state.picked.has(run.id),
            onchange: (e) => {
              if (e.target.checked) state.picked.add(run.id);
              else state.picked.delete(run.id);
              state.bulkConfirm = false;
              renderBulk();
            },
          })
        : '',
    ),
    h(
      'td',
      { class: 'id col-id' },
      h('span', { class: 'indent', dataset: { depth: String(depth) } }),
      h('button', { class: 'link run-id', title: run.id, onclick: () => select(run.id) }, run.id),
      state.tab === 'live' && run.batch_id
        ? h('span', { class: 'chip', title: 'wave' }, `wave ${run.batch_id.slice(0, 8)}`)
        : '',
    ),
    h('td', { class: 'col-agent', dataset: { label: 'agent' } }, run.agent),
    h(
      'td',
      { class: 'col-status' },
      h('span', { class: `status s-${run.status}` }, run.status),
      waitingBadge(run),
    ),
    h('td', { class: 'num col-duration', dataset: { label: 'duration' } }, fmtSecs(durationOf(run))),
    h('td', { class: 'num col-mem', dataset: { label: 'peak mem' } }, fmtGb(run.peak_mem_gb)),
    h('td', { class: 'num col-output col-opt', dataset: { label: 'output' } }, fmtChars(run.result_chars)),
    h(
      'td',
      { class: 'col-delivery col-opt', dataset: { label: 'delivery' } },
      run.acked_at ? 'acked' : run.delivery,
    ),
    h('td', { class: 'preview col-task', title: run.task_preview }, run.task_preview),
  ];
}

function nodeRows(node, depth, out) {
  out.push(
    h(
      'tr',
      { class: `run depth-${Math.min(depth, 4)}`, dataset: { runId: node.run.id, status: node.run.status } },
      runCells(node.run, depth),
    ),
  );
  for (const child of node.children) nodeRows(child, depth + 1, out);
  if (node.more_children > 0)
    out.push(
      h('tr', { class: 'more' }, h('td', { colspan: span() }, `… ${node.more_children} more nested runs`)),
    );
}

function renderRuns() {
  const out = [];
  let parent;
  for (const row of state.page.rows) {
    if (row.parent !== parent) {
      parent = row.parent;
      const named = parentLabel(parent, state.parentNames.get(parent));
      out.push(
        h(
          'tr',
          { class: 'group', dataset: { parent, kind: named.kind } },
          h('td', { colspan: span(), title: named.title }, named.label),
        ),
      );
    }
    if (row.kind === 'run') {
      nodeRows(row.node, 0, out);
      continue;
    }
    const open = state.expanded.has(row.batch_id);
    const summary = Object.entries(row.by_status)
      .map(([s, n]) => h('span', { class: `status s-${s}` }, `${n} ${s}`))
      .flatMap((el) => [el, ' ']);
    out.push(
      h(
        'tr',
        { class: 'wave', dataset: { batchId: row.batch_id } },
        h(
          'td',
          { colspan: span() },
          h(
            'button',
            {
              class: 'link',
              'aria-expanded': open ? 'true' : 'false',
              onclick: () => {
                if (open) state.expanded.delete(row.batch_id);
                else state.expanded.add(row.batch_id);
                renderRuns();
              },
            },
            `${open ? '▾' : '▸'} wave ${row.batch_id} · ${row.size} runs `,
          ),
          ...summary,
        ),
      ),
    );
    if (open) {
      for (const member of row.members) nodeRows(member, 1, out);
      if (row.more_members > 0)
        out.push(
          h('tr', { class: 'more' }, h('td', { colspan: span() }, `… ${row.more_members} more members`)),
        );
    }
  }
  if (out.length === 0) out.push(h('tr', { class: 'empty' }, h('td', { colspan: span() }, 'No runs here.')));
  $('runs-body').replaceChildren(...out);
  $('runs-pane').dataset.tab = state.tab;
  const { offset, total, rows } = state.page;
  $('pager-text').textContent =
    total === 0 ? '0 rows' : `rows ${offset + 1}–${offset + rows.length} of ${total}`;
  $('prev').disabled = offset === 0;
  $('next').disabled = offset + rows.length >= total;
}

/** Ids of the live top-level runs on this page (wave members included): what a bulk cancel may take. */
function liveIdsOnPage() {
  const ids = [];
  for (const row of state.page.rows) {
    const nodes = row.kind === 'run' ? [row.node] : row.members;
    for (const node of nodes) if (LIVE.has(node.run.status)) ids.push(node.run.id);
  }
  return ids;
}

/** The bulk bar: how many runs are ticked, cancel them (after a confirm step), or clear the ticks. */
function renderBulk() {
  const bar = $('bulk');
  if (!bar) return;
  const n = state.picked.size;
  bar.hidden = n === 0;
  if (n === 0) {
    bar.replaceChildren();
    return;
  }
  bar.replaceChildren(
    h('span', { id: 'bulk-count' }, `${n} selected`),
    state.bulkConfirm
      ? h(
          'span',
          { class: 'confirm' },
          h('span', {}, `Cancel ${n} run${n === 1 ? '' : 's'} and what they spawned? `),
          h(
            'button',
            { id: 'bulk-confirm', class: 'danger', onclick: () => bulkCancel() },
            `Yes, cancel ${n}`,
          ),
          h(
            'button',
            {
              id: 'bulk-keep',
              onclick: () => {
                state.bulkConfirm = false;
                renderBulk();
              },
            },
            'Keep them',
          ),
        )
      : h(
          'button',
          {
            id: 'bulk-cancel',
            class: 'danger',
            onclick: () => {
              state.bulkConfirm = true;
              renderBulk();
            },
          },
          'Cancel selected',
        ),
    h(
      'button',
      {
        id: 'bulk-clear',
        onclick: () => {
          state.picked.clear();
          state.bulkConfirm = false;
          renderRuns();
          renderBulk();
        },
      },
      'Clear',
    ),
  );
}

function renderHead() {
  const [key, desc] = state.sort.startsWith('-') ? [state.sort.slice(1), true] : [state.sort, false];
  $('runs-head').replaceChildren(
    h(
      'tr',
      {},
      ...COLUMNS.map((c) => {
        if (!c.sort) return h('th', { class: c.cls }, c.label);
        const active = key === c.sort;
        return h(
          'th',
          { class: c.cls, 'aria-sort': active ? (desc ? 'descending' : 'ascending') : 'none' },
          h(
            'button',
            {
              class: 'sort',
              dataset: { sort: c.sort },
              title: `sort by ${c.label}`,
              onclick: () => setSort(active ? (desc ? '' : `-${c.sort}`) : c.sort),
            },
            c.label,
            active ? (desc ? ' ▼' : ' ▲') : '',
          ),
        );
      }),
    ),
  );
  const select = $('sort-select');
  if (select) select.value = state.sort;
}

/** Sorts by a column (server side, across every page); '' is the tab's own order. */
function setSort(sort) {
  state.sort = sort;
  state.offset = 0;
  renderHead();
  void reloadRuns();
}

function renderRefusals() {
  const list = state.refusals;
  $('refusals').replaceChildren(
    ...(list.length
      ? list
          .slice(0, 50)
          .map((r) =>
            h(
              'li',
              { class: 'refusal' },
              h('code', {}, r.code),
              ` ${r.parent ? parentLabel(r.parent, state.parentNames.get(r.parent)).label : ''} `,
              h('span', { class: 'muted' }, `${r.ts ? new Date(r.ts).toLocaleTimeString() : ''} `),
              r.message,
              r.limit !== undefined || r.current !== undefined
                ? h('span', { class: 'muted' }, ` (${r.current ?? '?'} of ${r.limit ?? '?'})`)
                : '',
            ),
          )
      : [h('li', { class: 'muted' }, 'No refusals.')]),
  );
}

function renderDetail() {
  const pane = $('detail');
  const detail = state.detail;
  if (!detail) {
    pane.replaceChildren(h('p', { class: 'muted' }, 'Select a run to see its shape and transcript.'));
    return;
  }
  const run = detail.run;
  const fields = runFields(run, Date.now(), state.parentNames.get(run.parent)).map(([k, v]) => [
    h('dt', {}, k),
    h('dd', { 'data-field': k }, v),
  ]);
  const live = LIVE.has(run.status);
  const nested = detail.live_descendants ?? 0;
  const actions = state.readOnly
    ? []
    : [
        live && !state.cancelConfirm
          ? h(
              'button',
              {
                id: 'cancel',
                class: 'danger',
                onclick: () => {
                  state.cancelConfirm = true;
                  renderDetail();
                },
              },
              nested ? `Cancel (+${nested} nested)` : 'Cancel',
            )
          : '',
        live && state.cancelConfirm
          ? h(
              'span',
              { class: 'confirm', id: 'cancel-ask' },
              h('span', {}, nested ? `Cancel this run and ${nested} nested? ` : 'Cancel this run? '),
              h(
                'button',
                { id: 'cancel-confirm', class: 'danger', onclick: () => cancel(run.id) },
                'Yes, cancel',
              ),
              h(
                'button',
                {
                  id: 'cancel-keep',
                  onclick: () => {
                    state.cancelConfirm = false;
                    renderDetail();
                  },
                },
                'Keep it running',
              ),
            )
          : '',
        TERMINAL.has(run.status)
          ? h(
              'button',
              {
                id: 'rerun',
                title: 'starts a new run with the same task, agent and limits; this run stays as it is',
                onclick: () => rerun(run.id),
              },
              'Re-run as a new run',
            )
          : '',
        run.status === 'running'
          ? h(
              'form',
              {
                id: 'steer',
                class: 'inline',
                onsubmit: (e) => {
                  e.preventDefault();
                  void steer(run.id);
                },
              },
              h('input', {
                id: 'steer-text',
                placeholder: 'steer: a message to the run',
                'aria-label': 'steer message',
              }),
              h(
                'select',
                { id: 'steer-mode', 'aria-label': 'steer mode' },
                h('option', { value: 'interrupt' }, 'interrupt'),
                h('option', { value: 'follow_up' }, 'follow-up'),
              ),
              h('button', { type: 'submit' }, 'Steer'),
            )
          : '',
        TERMINAL.has(run.status) && !run.acked_at && !run.parent.startsWith('run:')
          ? h('button', { class: 'ack', onclick: () => ack(run.id) }, 'Ack')
          : '',
      ];
  const t = state.transcript;
  pane.replaceChildren(
    h(
      'h2',
      {},
      'Run ',
      h('span', { class: 'run-id' }, run.id),
      ' ',
      h('span', { class: `status s-${run.status}` }, run.status),
    ),
    h('div', { class: 'actions' }, ...actions),
    TERMINAL.has(run.status) && !state.readOnly
      ? h('p', { class: 'muted hint' }, 'Re-run starts a new run with the same arguments; this one is kept.')
      : '',
    h('dl', { class: 'shape' }, ...fields.flat()),
    h(
      'details',
      { class: 'raw' },
      h('summary', {}, 'All fields (JSON)'),
      h('pre', { id: 'raw-json' }, JSON.stringify(run, null, 2)),
    ),
    h(
      'form',
      {
        id: 'transcript-controls',
        class: 'inline',
        onsubmit: (e) => {
          e.preventDefault();
          t.grep = $('grep').value;
          t.offset = 0;
          t.tail = false;
          void loadTranscript();
        },
      },
      h('input', { id: 'grep', placeholder: 'grep (regex)', value: t.grep, 'aria-label': 'grep' }),
      h('button', { type: 'submit' }, 'Grep'),
      h(
        'button',
        {
          type: 'button',
          id: 'page-prev',
          onclick: () => {
            t.tail = false;
            t.offset = Math.max(0, t.offset - TRANSCRIPT_LINES);
            void loadTranscript();
          },
        },
        '◀ lines',
      ),
      h(
        'button',
        {
          type: 'button',
          id: 'page-next',
          onclick: () => {
            t.tail = false;
            t.offset += TRANSCRIPT_LINES;
            void loadTranscript();
          },
        },
        'lines ▶',
      ),
      h(
        'label',
        {},
        h('input', {
          type: 'checkbox',
          id: 'tail',
          checked: t.tail,
          onchange: (e) => {
            t.tail = e.target.checked;
            if (t.tail) {
              t.grep = '';
              void loadTranscript();
            }
          },
        }),
        ' live tail',
      ),
    ),
    h('div', { id: 'transcript-header', class: 'muted' }, t.header),
    h('pre', { id: 'transcript' }, t.text),
  );
}

function renderChats() {
  const box = $('chats');
  if (!box) return;
  const list = state.chats.map((chat) =>
    h(
      'li',
      { dataset: { chatId: chat.id } },
      h('button', { class: 'link', onclick: () => openChat(chat.id) }, chat.id),
      ` ${chat.agent} · ${chat.state} · ${chat.turns} turns`,
    ),
  );
  box.replaceChildren(
    h(
      'ul',
      { class: 'chat-list' },
      ...(list.length ? list : [h('li', { class: 'muted' }, 'No hosted chats.')]),
    ),
    state.chatOpen ? h('pre', { id: 'chat-log' }, state.chatLog.join('')) : '',
    state.readOnly
      ? ''
      : h(
          'form',
          {
            id: 'chat-form',
            class: 'inline',
            onsubmit: (e) => {
              e.preventDefault();
              void sendChat();
            },
          },
          h('input', {
            id: 'chat-text',
            placeholder: state.chatOpen ? 'message the parent' : 'start a chat: ask naturally',
            'aria-label': 'chat message',
          }),
          h('button', { type: 'submit' }, state.chatOpen ? 'Send' : 'Start chat'),
        ),
  );
}

// ── actions ──────────────────────────────────────────────────────────────────────────────────────────
let toastTimer;
function toast(text, kind = 'info') {
  const el = $('toast');
  el.textContent = text;
  el.dataset.kind = kind;
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => {
    el.hidden = true;
  }, 5000);
}
const refusalText = (answer) => `${answer.refusal?.code ?? 'error'}: ${answer.refusal?.message ?? 'failed'}`;

async function select(id) {
  state.selected = id;
  state.cancelConfirm = false;
  writeUrl();
  state.transcript = { offset: 0, grep: '', tail: true, header: '', text: '', total: 0 };
  const answer = await api('GET', `/api/dashboard/runs/${encodeURIComponent(id)}`);
  if (!answer.ok) return toast(refusalText(answer), 'error');
  state.detail = { run: answer.run, live_descendants: answer.live_descendants };
  if (typeof answer.parent_name === 'string') state.parentNames.set(answer.run.parent, answer.parent_name);
  renderDetail();
  void loadTranscript();
}

async function loadTranscript() {
  const id = state.selected;
  if (!id) return;
  const t = state.transcript;
  const q = new URLSearchParams({ limit: String(TRANSCRIPT_LINES) });
  q.set('offset', String(t.tail ? Math.max(0, t.total - TRANSCRIPT_LINES) : t.offset));
  if (t.grep) q.set('grep', t.grep);
  const answer = await api('GET', `/api/runs/${encodeURIComponent(id)}?${q}`);
  if (state.selected !== id) return;
  if (!answer.ok) {
    t.header = refusalText(answer);
    t.text = '';
  } else {
    const text = answer.text ?? '';
    const newline = text.indexOf('\n');
    const first = newline < 0 ? text : text.slice(0, newline);
    const hasHeader = /^\[(lines|no lines)/.test(first);
    t.header = hasHeader
      ? first
      : `lines ${answer.from_line ?? '?'}-${answer.to_line ?? '?'} of ${answer.total_lines ?? '?'}`;
    t.text = hasHeader ? text.slice(newline + 1) : text;
    const grown = (answer.total_lines ?? 0) > t.total;
    t.total = answer.total_lines ?? t.total;
    if (t.tail && grown && t.total > TRANSCRIPT_LINES) return loadTranscript();
    if (answer.run) state.detail.run = answer.run;
  }
  const header = $('transcript-header');
  const pre = $('transcript');
  if (header && pre) {
    header.textContent = t.header;
    pre.textContent = t.text;
    if (t.tail) pre.scrollTop = pre.scrollHeight;
  }
}

// While a selected run is live and the tail is on, its transcript is re-read each second.
setInterval(() => {
  const run = state.detail?.run;
  if (!state.paused && run && LIVE.has(run.status) && state.transcript.tail) void loadTranscript();
}, 1000);

async function ack(id) {
  const answer = await api('POST', `/api/runs/${encodeURIComponent(id)}/ack`);
  if (!answer.ok) return toast(refusalText(answer), 'error');
  state.notifications.items = state.notifications.items.filter((n) => n.run_id !== id);
  renderNotifications();
  toast(`acknowledged ${id}`);
  void reloadNotifications();
}

async function cancel(id) {
  const descendants = state.detail?.live_descendants ?? 0;
  state.cancelConfirm = false;
  renderDetail();
  const answer = await api('POST', `/api/runs/${encodeURIComponent(id)}/cancel`);
  if (!answer.ok) return toast(refusalText(answer), 'error');
  toast(descendants ? `cancelled ${id} and ${descendants} nested runs` : `cancelled ${id}`);
}

/** Cancels every ticked run (each through the run API, as one cancel would); says what failed. */
async function bulkCancel() {
  const ids = [...state.picked];
  state.picked.clear();
  state.bulkConfirm = false;
  renderBulk();
  const answers = await Promise.all(
    ids.map((id) => api('POST', `/api/runs/${encodeURIComponent(id)}/cancel`)),
  );
  const failed = answers.filter((a) => !a.ok);
  if (failed.length)
    toast(`cancelled ${ids.length - failed.length} of ${ids.length}: ${refusalText(failed[0])}`, 'error');
  else toast(`cancelled ${ids.length} runs`);
  scheduleRefresh();
}

/** Acks every completion owed to a person (the server acks at most 500 a call; it says what remains). */
async function ackAll() {
  let acked = 0;
  for (let round = 0; round < 20; round++) {
    const answer = await api('POST', '/api/dashboard/ack-all');
    if (!answer.ok) return toast(refusalText(answer), 'error');
    acked += answer.acked;
    if (answer.remaining === 0 || answer.acked === 0) break;
  }
  toast(`acknowledged ${acked}`);
  await reloadNotifications();
}

/**
 * Starts a new run with an ended run's arguments: read from the dashboard, posted to the spawn API as
 * the operator. The old run is untouched; the new one is selected.
 */
async function rerun(id) {
  const spec = await api('GET', `/api/dashboard/runs/${encodeURIComponent(id)}/rerun`);
  if (!spec.ok) return toast(refusalText(spec), 'error');
  const answer = await api('POST', '/api/spawn', {
    parent: spec.parent,
    args: spec.args,
    ...(spec.cwd !== undefined ? { cwd: spec.cwd } : {}),
  });
  if (!answer.ok) return toast(refusalText(answer), 'error');
  const fresh = answer.runs?.[0]?.id;
  toast(`started a new run ${fresh} (a re-run of ${id})`);
  scheduleRefresh();
  // The dashboard's read of a run brings its read model up to date first, so the new run is there.
  if (fresh) await select(fresh);
}

async function steer(id) {
  const message = $('steer-text').value;
  const mode = $('steer-mode').value;
  const answer = await api('POST', `/api/runs/${encodeURIComponent(id)}/steer`, { message, mode });
  if (!answer.ok) return toast(refusalText(answer), 'error');
  toast(`steered ${id} (${mode})`);
  $('steer-text').value = '';
}

async function loadChats() {
  const answer = await api('GET', '/api/chats');
  if (!answer.ok) return;
  state.chats = answer.chats;
  renderChats();
}

let chatStream;
function openChat(id) {
  chatStream?.close();
  state.chatOpen = id;
  state.chatLog = [];
  chatStream = new EventSource(`/api/chats/${encodeURIComponent(id)}/events`);
  const onEvent = (event) => {
    const e = JSON.parse(event.data);
    if (e.type === 'message') state.chatLog.push(`\n> ${e.text}\n`);
    else if (e.type === 'text') state.chatLog.push(e.text);
    else if (e.type === 'injected')
      state.chatLog.push(`\n[${e.events.length} completion event(s) injected]\n`);
    else if (e.type === 'turn_ended')
      state.chatLog.push(`\n[turn ${e.turn} ended${e.error ? `: ${e.error}` : ''}]\n`);
    else if (e.type === 'notice') state.chatLog.push(`\n[${e.text}]\n`);
    else if (e.type === 'closed') {
      state.chatLog.push(`\n[closed: ${e.reason}]\n`);
      chatStream?.close();
    }
    if (state.chatLog.length > 2000) state.chatLog.splice(0, state.chatLog.length - 2000);
    const log = $('chat-log');
    if (log) log.textContent = state.chatLog.join('');
  };
  for (const type of ['message', 'text', 'injected', 'turn_ended', 'notice', 'closed'])
    chatStream.addEventListener(type, onEvent);
  renderChats();
}

async function sendChat() {
  const text = $('chat-text').value;
  if (!text.trim()) return;
  let id = state.chatOpen;
  if (!id) {
    toast('starting a chat with the hosted parent…');
    const created = await api('POST', '/api/chats', {});
    if (!created.ok) return toast(refusalText(created), 'error');
    id = created.chat.id;
    await loadChats();
    openChat(id);
  }
  const answer = await api('POST', `/api/chats/${encodeURIComponent(id)}/messages`, { text });
  if (!answer.ok) return toast(refusalText(answer), 'error');
  $('chat-text').value = '';
  void loadChats();
}

// ── layout ───────────────────────────────────────────────────────────────────────────────────────────
function layout() {
  const filter = h('input', {
    id: 'filter',
    type: 'search',
    placeholder: 'filter: id, agent, parent, task…',
    'aria-label': 'filter runs',
    value: state.query,
    oninput: (e) => {
      state.query = e.target.value;
      state.offset = 0;
      clearTimeout(filterTimer);
      filterTimer = setTimeout(reloadRuns, 200);
    },
  });
  let filterTimer;
  $('app').replaceChildren(
    h(
      'header',
      { class: 'top' },
      h(
        'div',
        { class: 'brand' },
        h('img', { src: '/favicon.svg', alt: '', width: '20', height: '20' }),
        ' Crew',
      ),
      h('div', { id: 'capacity', class: 'capacity' }),
      h(
        'div',
        { class: 'live' },
        h('span', { id: 'connection', class: 'connection' }, 'connecting'),
        h(
          'button',
          {
            id: 'pause',
            'aria-pressed': 'false',
            onclick: (e) => {
              state.paused = !state.paused;
              e.target.textContent = state.paused ? 'Resume' : 'Pause';
              e.target.title = state.paused ? 'resume live updates' : 'pause live updates';
              e.target.setAttribute('aria-pressed', String(state.paused));
              setConnection(state.connection);
              if (!state.paused) void reloadSnapshot();
            },
            title: 'pause live updates',
          },
          'Pause',
        ),
        state.readOnly ? h('span', { class: 'badge' }, 'read-only') : '',
      ),
    ),
    h('section', { id: 'cluster', class: 'cluster', hidden: true, 'aria-label': 'cluster' }),
    h('div', { id: 'notifications', class: 'notifications', hidden: true }),
    h('section', { id: 'capacity-chart', class: 'chart', 'aria-label': 'capacity over the last hour' }),
    h(
      'main',
      { class: 'grid' },
      h(
        'section',
        { id: 'runs-pane', class: 'runs-pane' },
        h('div', { id: 'tabs', class: 'tabs', role: 'tablist' }),
        h(
          'div',
          { class: 'toolbar' },
          filter,
          h(
            'select',
            { id: 'sort-select', 'aria-label': 'sort runs', onchange: (e) => setSort(e.target.value) },
            h('option', { value: '' }, 'newest first'),
            ...SORTS.filter((k) => k !== 'created').flatMap((k) => [
              h('option', { value: `-${k}` }, `${k.replace('_', ' ')} ▼`),
              h('option', { value: k }, `${k.replace('_', ' ')} ▲`),
            ]),
          ),
        ),
        h('div', { id: 'bulk', class: 'bulk', hidden: true, role: 'region', 'aria-label': 'selected runs' }),
        h('table', { class: 'runs' }, h('thead', { id: 'runs-head' }), h('tbody', { id: 'runs-body' })),
        h(
          'div',
          { class: 'pager' },
          h(
            'button',
            {
              id: 'prev',
              onclick: () => {
                state.offset = Math.max(0, state.offset - PAGE_SIZE);
                void reloadRuns();
              },
            },
            '◀ newer',
          ),
          h('span', { id: 'pager-text' }),
          h(
            'button',
            {
              id: 'next',
              onclick: () => {
                state.offset += PAGE_SIZE;
                void reloadRuns();
              },
            },
            'older ▶',
          ),
        ),
      ),
      h(
        'aside',
        { class: 'side' },
        h('section', { id: 'detail', class: 'panel' }),
        h(
          'section',
          { class: 'panel' },
          h('h2', {}, 'Refusals'),
          h('ul', { id: 'refusals', class: 'refusals' }),
        ),
        h('section', { class: 'panel' }, h('h2', {}, 'Chats'), h('div', { id: 'chats' })),
      ),
    ),
    h('div', { id: 'toast', class: 'toast', role: 'status', hidden: true }),
  );
}

layout();
NARROW.addEventListener('change', () => renderRuns());
renderHead();
renderAll();
markFeed();
connect();
void loadChats();
void reloadHistory();
setInterval(() => {
  if (!state.paused) void reloadHistory();
}, 60_000);
// The address named another tab, filter, sort or page than the snapshot's: read that first.
const urlDiffers = state.tab !== 'all' || state.query !== '' || state.sort !== '' || state.offset !== 0;
void Promise.all([
  urlDiffers ? reloadRuns() : undefined,
  state.selected ? select(state.selected) : undefined,
]).finally(() => {
  document.getElementById('app').dataset.state = 'ready';
});
// Durations of running runs tick.
setInterval(() => {
  if (!state.paused && (state.counts.live ?? 0) > 0) renderRuns();
}, 5000);
