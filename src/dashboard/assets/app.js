// Crew's operator dashboard: hand-written ES modules, no framework, no build step. The server embeds a
// snapshot in the page; this lays the page out and starts it: it renders the snapshot, then follows the live
// feed (feed.js) and re-reads a page of rows when runs change. Every text goes into the DOM as text (never as
// HTML), and at most one page of rows is in the DOM at once. What a person reads (parent names, sizes,
// durations, the chart) is worded in view.js; the page's own state (tab, filter, sort, page, selected run)
// lives in the query string (state.js), so a reload keeps it. The other modules hold only declarations:
// everything runs from the start-up at the end of this file, after every module has evaluated.

import { loadChats, loadTranscript, select } from './actions.js';
import { connect, markFeed, reloadHistory, reloadRuns, reloadSnapshot, setConnection } from './feed.js';
import { renderAll } from './render-capacity.js';
import { renderHead, renderRuns, setSort } from './render-runs.js';
import { $, h, LIVE, NARROW, PAGE_SIZE, SORTS, state } from './state.js';

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

// ── start-up ─────────────────────────────────────────────────────────────────────────────────────────
// While a selected run is live and the tail is on, its transcript is re-read each second.
setInterval(() => {
  const run = state.detail?.run;
  if (!state.paused && run && LIVE.has(run.status) && state.transcript.tail) void loadTranscript();
}, 1000);

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
