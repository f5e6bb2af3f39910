// The runs list: tabs, one page of run rows (a tree of parents and children), the bulk bar and the
// sortable head.

import { bulkCancel, select } from './actions.js';
import { reloadRuns } from './feed.js';
import { $, COLUMNS, durationOf, fmtGb, fmtSecs, h, LIVE, span, state, TABS } from './state.js';
import { fmtChars, parentLabel } from './view.js';

export function renderTabs() {
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

export function renderRuns() {
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
export function liveIdsOnPage() {
  const ids = [];
  for (const row of state.page.rows) {
    const nodes = row.kind === 'run' ? [row.node] : row.members;
    for (const node of nodes) if (LIVE.has(node.run.status)) ids.push(node.run.id);
  }
  return ids;
}

/** The bulk bar: how many runs are ticked, cancel them (after a confirm step), or clear the ticks. */
export function renderBulk() {
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

export function renderHead() {
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
export function setSort(sort) {
  state.sort = sort;
  state.offset = 0;
  renderHead();
  void reloadRuns();
}
