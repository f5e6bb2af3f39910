// What an operator does: select a run, read its transcript, ack, cancel, rerun, steer and chat, with a toast
// for each answer.

import { api, reloadNotifications, scheduleRefresh } from './feed.js';
import { renderNotifications } from './render-capacity.js';
import { renderChats, renderDetail } from './render-detail.js';
import { renderBulk } from './render-runs.js';
import { $, state, TRANSCRIPT_LINES, writeUrl } from './state.js';

let toastTimer;
export function toast(text, kind = 'info') {
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

export async function select(id) {
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

export async function loadTranscript() {
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

export async function ack(id) {
  const answer = await api('POST', `/api/runs/${encodeURIComponent(id)}/ack`);
  if (!answer.ok) return toast(refusalText(answer), 'error');
  state.notifications.items = state.notifications.items.filter((n) => n.run_id !== id);
  renderNotifications();
  toast(`acknowledged ${id}`);
  void reloadNotifications();
}

export async function cancel(id) {
  const descendants = state.detail?.live_descendants ?? 0;
  state.cancelConfirm = false;
  renderDetail();
  const answer = await api('POST', `/api/runs/${encodeURIComponent(id)}/cancel`);
  if (!answer.ok) return toast(refusalText(answer), 'error');
  toast(descendants ? `cancelled ${id} and ${descendants} nested runs` : `cancelled ${id}`);
}

/** Cancels every ticked run (each through the run API, as one cancel would); says what failed. */
export async function bulkCancel() {
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
export async function ackAll() {
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
export async function rerun(id) {
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

export async function steer(id) {
  const message = $('steer-text').value;
  const mode = $('steer-mode').value;
  const answer = await api('POST', `/api/runs/${encodeURIComponent(id)}/steer`, { message, mode });
  if (!answer.ok) return toast(refusalText(answer), 'error');
  toast(`steered ${id} (${mode})`);
  $('steer-text').value = '';
}

export async function loadChats() {
  const answer = await api('GET', '/api/chats');
  if (!answer.ok) return;
  state.chats = answer.chats;
  renderChats();
}

let chatStream;
export function openChat(id) {
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

export async function sendChat() {
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
