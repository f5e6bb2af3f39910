// Crew's operator dashboard: one hand-written ES module, no framework, no build step. The server embeds a
// snapshot in the page; this renders it, then follows the live feed at /api/ws (typed messages with a
// sequence number, resumed after a reconnect) and re-reads a page of rows when runs change. Every text
// goes into the DOM as text (never as HTML), and at most one page of rows is in the DOM at once.

const TABS = ['live', 'queued', 'completed', 'failed', 'timed_out', 'cancelled', 'lost', 'all'];
const TERMINAL = new Set(['completed', 'failed', 'timed_out', 'cancelled', 'lost']);
const LIVE = new Set(['queued', 'starting', 'running']);
const PAGE_SIZE = 50;
const TRANSCRIPT_LINES = 200;

const csrf = document.querySelector('meta[name="crew-csrf"]')?.getAttribute('content') ?? '';
const initial = JSON.parse(document.getElementById('crew-snapshot')?.textContent ?? '{}');

const state = {
  epoch: initial.epoch,
  seq: initial.seq,
  readOnly: initial.read_only === true,
  capacity: initial.capacity ?? {},
  counts: initial.counts ?? {},
  page: initial.page ?? { rows: [], total: 0, offset: 0, limit: PAGE_SIZE },
  notifications: initial.notifications ?? { items: [], total: 0 },
  refusals: initial.refusals ?? [],
  tab: 'all',
  query: '',
  offset: 0,
  expanded: new Set(),
  paused: false,
  connection: 'connecting',
  /** Messages applied since load, and gaps found (a gap reloads the snapshot). */
  received: 0,
  gaps: 0,
  selected: undefined,
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

function fmtSecs(secs) {
  if (secs === undefined || secs === null || Number.isNaN(secs)) return '';
  if (secs < 60) return `${secs.toFixed(1)}s`;
  const m = Math.floor(secs / 60);
  if (m < 60) return `${m}m${Math.floor(secs % 60)}s`;
  return `${Math.floor(m / 60)}h${m % 60}m`;
}
function durationOf(run) {
  if (run.duration_secs !== undefined) return run.duration_secs;
  if (run.started_at && !run.ended_at) return (Date.now() - Date.parse(run.started_at)) / 1000;
  return undefined;
}
function fmtChars(n) {
  if (n === undefined) return '';
  if (n < 1000) return `${n} ch`;
  if (n < 1_000_000) return `${(n / 1000).toFixed(1)} k`;
  return `${(n / 1_000_000).toFixed(1)} M`;
}
const fmtGb = (gb) =>
  gb === undefined || gb === null ? '' : gb < 1 ? `${Math.round(gb * 1024)} MiB` : `${gb.toFixed(2)} GiB`;

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
  return q.toString();
}

async function reloadRuns() {
  const answer = await api('GET', `/api/dashboard/runs?${pageQuery()}`);
  if (!answer.ok) return;
  state.counts = answer.counts;
  state.page = answer.page;
  renderTabs();
  renderRuns();
}

async function reloadNotifications() {
  const answer = await api('GET', '/api/dashboard/notifications');
  if (!answer.ok) return;
  state.notifications = { items: answer.items, total: answer.total };
  renderNotifications();
}

async function reloadSnapshot() {
  const answer = await api('GET', `/api/dashboard?${pageQuery()}`);
  if (!answer.ok) return;
  state.capacity = answer.capacity;
  state.counts = answer.counts;
  state.page = answer.page;
  state.notifications = answer.notifications;
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
      scheduleRefresh();
      return;
    case 'refusal':
      state.refusals = [message.refusal, ...state.refusals].slice(0, 100);
      if (!state.paused) renderRefusals();
      return;
    case 'capacity':
      state.capacity = message.capacity;
      if (!state.paused) renderCapacity();
      return;
  }
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
    h('div', { class: 'notes-title' }, `Completions to acknowledge: ${total}`),
    ...items.map((n) =>
      h(
        'div',
        { class: 'note', dataset: { runId: n.run_id, status: n.status } },
        h('span', { class: `status s-${n.status}` }, n.status),
        h('button', { class: 'link run-id', onclick: () => select(n.run_id) }, n.run_id),
        n.batch_id ? h('span', { class: 'muted' }, ` wave of ${n.members}`) : '',
        h('span', { class: 'muted' }, ` ${n.agent} · ${n.parent} · `),
        h('span', { class: 'preview' }, n.task_preview),
        state.readOnly ? '' : h('button', { class: 'ack', onclick: () => ack(n.run_id) }, 'Ack'),
      ),
    ),
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
  return [
    h(
      'td',
      { class: 'id', style: undefined },
      h('span', { class: 'indent', dataset: { depth: String(depth) } }),
      h('button', { class: 'link run-id', onclick: () => select(run.id) }, run.id),
    ),
    h('td', {}, run.agent),
    h('td', {}, h('span', { class: `status s-${run.status}` }, run.status), waitingBadge(run)),
    h('td', { class: 'num' }, fmtSecs(durationOf(run))),
    h('td', { class: 'num' }, fmtGb(run.peak_mem_gb)),
    h('td', { class: 'num' }, fmtChars(run.result_chars)),
    h('td', {}, run.acked_at ? 'acked' : run.delivery),
    h('td', { class: 'preview', title: run.task_preview }, run.task_preview),
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
      h('tr', { class: 'more' }, h('td', { colspan: '8' }, `… ${node.more_children} more nested runs`)),
    );
}

function renderRuns() {
  const out = [];
  let parent;
  for (const row of state.page.rows) {
    if (row.parent !== parent) {
      parent = row.parent;
      out.push(h('tr', { class: 'group' }, h('td', { colspan: '8' }, parent)));
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
          { colspan: '8' },
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
        out.push(h('tr', { class: 'more' }, h('td', { colspan: '8' }, `… ${row.more_members} more members`)));
    }
  }
  if (out.length === 0) out.push(h('tr', { class: 'empty' }, h('td', { colspan: '8' }, 'No runs here.')));
  $('runs-body').replaceChildren(...out);
  const { offset, total, rows } = state.page;
  $('pager-text').textContent =
    total === 0 ? '0 rows' : `rows ${offset + 1}–${offset + rows.length} of ${total}`;
  $('prev').disabled = offset === 0;
  $('next').disabled = offset + rows.length >= total;
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
              ` ${r.parent || ''} `,
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
  const fields = Object.entries(run).map(([k, v]) => [
    h('dt', {}, k),
    h('dd', {}, typeof v === 'object' ? JSON.stringify(v) : String(v)),
  ]);
  const live = LIVE.has(run.status);
  const actions = state.readOnly
    ? []
    : [
        live
          ? h(
              'button',
              { id: 'cancel', class: 'danger', onclick: () => cancel(run.id) },
              detail.live_descendants ? `Cancel (+${detail.live_descendants} nested)` : 'Cancel',
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
    h('dl', { class: 'shape' }, ...fields.flat()),
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
  state.transcript = { offset: 0, grep: '', tail: true, header: '', text: '', total: 0 };
  const answer = await api('GET', `/api/dashboard/runs/${encodeURIComponent(id)}`);
  if (!answer.ok) return toast(refusalText(answer), 'error');
  state.detail = { run: answer.run, live_descendants: answer.live_descendants };
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
  const answer = await api('POST', `/api/runs/${encodeURIComponent(id)}/cancel`);
  if (!answer.ok) return toast(refusalText(answer), 'error');
  toast(descendants ? `cancelled ${id} and ${descendants} nested runs` : `cancelled ${id}`);
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
              e.target.textContent = state.paused ? 'Resume live updates' : 'Pause live updates';
              e.target.setAttribute('aria-pressed', String(state.paused));
              setConnection(state.connection);
              if (!state.paused) void reloadSnapshot();
            },
          },
          'Pause live updates',
        ),
        state.readOnly ? h('span', { class: 'badge' }, 'read-only') : '',
      ),
    ),
    h('section', { id: 'cluster', class: 'cluster', hidden: true, 'aria-label': 'cluster' }),
    h('div', { id: 'notifications', class: 'notifications', hidden: true }),
    h(
      'main',
      { class: 'grid' },
      h(
        'section',
        { class: 'runs-pane' },
        h('div', { id: 'tabs', class: 'tabs', role: 'tablist' }),
        filter,
        h(
          'table',
          { class: 'runs' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ...['id', 'agent', 'status', 'duration', 'peak mem', 'output', 'delivery', 'task'].map((c) =>
                h('th', {}, c),
              ),
            ),
          ),
          h('tbody', { id: 'runs-body' }),
        ),
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
renderAll();
markFeed();
document.getElementById('app').dataset.state = 'ready';
connect();
void loadChats();
// Durations of running runs tick.
setInterval(() => {
  if (!state.paused && (state.counts.live ?? 0) > 0) renderRuns();
}, 5000);
