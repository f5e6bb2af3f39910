// The top of the page: capacity cells (host or cluster), the cluster panel, the history chart and the
// notifications list.

import { ack, ackAll, select } from './actions.js';
import { renderChats, renderDetail, renderRefusals } from './render-detail.js';
import { renderRuns, renderTabs } from './render-runs.js';
import { $, fmtGb, h, SVG, state } from './state.js';
import { chartModel, parentLabel } from './view.js';

// ── rendering ────────────────────────────────────────────────────────────────────────────────────────
export function renderAll() {
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

export function renderCapacity() {
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
export function renderChart() {
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

export function renderNotifications() {
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
