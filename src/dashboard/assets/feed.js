// The data: the JSON API, the live feed at /api/ws (typed messages with a sequence number, resumed after
// a reconnect) and the re-reads of a page of rows, the history and the notifications when runs change.

import { toast } from './actions.js';
import { renderAll, renderCapacity, renderChart, renderNotifications } from './render-capacity.js';
import { renderDetail, renderRefusals } from './render-detail.js';
import { liveIdsOnPage, renderBulk, renderRuns, renderTabs } from './render-runs.js';
import { $, csrf, PAGE_SIZE, state, writeUrl } from './state.js';

// ── API ──────────────────────────────────────────────────────────────────────────────────────────────
export async function api(method, path, body) {
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

export async function reloadRuns() {
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

export async function reloadHistory() {
  const answer = await api('GET', '/api/dashboard/capacity/history');
  if (!answer.ok) return;
  state.history = { samples: answer.samples, bucket_secs: answer.bucket_secs };
  renderChart();
}

export async function reloadNotifications() {
  const answer = await api('GET', '/api/dashboard/notifications');
  if (!answer.ok) return;
  state.notifications = { items: answer.items, total: answer.total };
  learnNames(answer.parent_names);
  renderNotifications();
}

export async function reloadSnapshot() {
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
export function scheduleRefresh() {
  if (state.paused || refreshTimer !== undefined) return;
  refreshTimer = setTimeout(async () => {
    refreshTimer = undefined;
    await Promise.all([reloadRuns(), reloadNotifications()]);
  }, 150);
}

// ── the live feed ────────────────────────────────────────────────────────────────────────────────────
let socket;
let retryMs = 250;
export function connect() {
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

export function markFeed() {
  document.body.dataset.seq = String(state.seq);
  document.body.dataset.received = String(state.received);
  document.body.dataset.gaps = String(state.gaps);
}

export function setConnection(connection) {
  state.connection = connection;
  const el = $('connection');
  if (el) {
    el.textContent = state.paused ? 'paused' : connection;
    el.dataset.state = state.paused ? 'paused' : connection;
  }
}
