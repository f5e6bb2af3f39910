// The selected run: the refusals list, the detail panel and the chats panel.

import { ack, cancel, loadTranscript, openChat, rerun, sendChat, steer } from './actions.js';
import { $, h, LIVE, state, TERMINAL, TRANSCRIPT_LINES } from './state.js';
import { parentLabel, runFields } from './view.js';

export function renderRefusals() {
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

export function renderDetail() {
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

export function renderChats() {
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
