import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import type { Run } from '../../src/core/types.js';
import { type DashboardHistory, FIRST_RUNS, HistoryFill } from '../../src/dashboard/history-fill.js';
import type { LiveMessage } from '../../src/dashboard/live-feed.js';
import { RunIndex, TABS } from '../../src/dashboard/run-index.js';
import { type RunView, toRunView } from '../../src/gateway/run-view.js';
import type { Store } from '../../src/store/store.js';
import { fakeWorld } from '../helpers/fake-gateway.js';
import { numRuns } from '../helpers/fc-runs.js';
import { worldDashboard } from './world-dashboard.js';

const STATUSES = ['queued', 'running', 'completed', 'failed', 'cancelled'] as const;

/** History over an array (oldest first), read as the store reads it: newest first, from a cursor. */
function arrayHistory(all: RunView[]): DashboardHistory {
  return {
    runs({ before, live, ids, limit }) {
      let end = all.length;
      if (before !== undefined) end = all.findIndex((r) => r.id === before);
      const out: RunView[] = [];
      for (let i = end - 1; i >= 0 && out.length < limit; i--) {
        const run = all[i] as RunView;
        if (live && !['queued', 'starting', 'running'].includes(run.status)) continue;
        if (ids && !ids.includes(run.id)) continue;
        out.push(run);
      }
      return out;
    },
    statusCounts() {
      const by = new Map<string, number>();
      for (const r of all) by.set(r.status, (by.get(r.status) ?? 0) + 1);
      return by;
    },
  };
}

/** Single runs, contiguous waves and nested runs, with their final status. */
const historyArb = fc.array(
  fc.record({
    kind: fc.constantFrom('single', 'wave', 'nested'),
    size: fc.integer({ min: 1, max: 4 }),
    pick: fc.nat(),
    status: fc.constantFrom(...STATUSES),
    person: fc.boolean(),
  }),
  { maxLength: 80 },
);

type Step = typeof historyArb extends fc.Arbitrary<(infer T)[]> ? T : never;

function build(steps: Step[]) {
  const all: RunView[] = [];
  let n = 0;
  for (const step of steps) {
    const members = step.kind === 'wave' ? step.size : 1;
    const parents = all.filter((r) => r.depth < 3);
    const parentRun =
      step.kind === 'nested' && parents.length > 0 ? parents[step.pick % parents.length] : undefined;
    const batch = `b${n}`;
    for (let m = 0; m < members; m++) {
      const id = `r${n++}`;
      all.push({
        id,
        status: m === 0 ? step.status : (STATUSES[(step.pick + m) % STATUSES.length] as string),
        agent: 'sim',
        parent: parentRun ? `run:${parentRun.id}` : step.person ? 'cli:a' : 'mcp:agent@proj',
        depth: parentRun ? parentRun.depth + 1 : 1,
        ...(step.kind === 'wave' ? { batch_id: batch } : {}),
        task_preview: id,
        created_at: new Date(1_700_000_000_000 + n).toISOString(),
        delivery: 'pending',
      });
    }
  }
  return all;
}

describe('filling the read model from history newest first', () => {
  it('gives the same pages, counts and notifications as reading all of history oldest first, whatever the page sizes', () => {
    fc.assert(
      fc.property(
        historyArb,
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 20 }),
        (steps, first, step) => {
          const all = build(steps);
          const whole = new RunIndex(10_000);
          whole.upsert(all);
          const filled = new RunIndex(10_000);
          const fill = new HistoryFill(arrayHistory(all), filled, 10_000, { first, step });
          fill.start();
          // Every live run is in from the start (the live tab and the header need no more history).
          expect(filled.counts().live).toBe(whole.counts().live);
          // (Their nested runs that ended show once the fill reaches them.)
          const liveIds = (index: RunIndex) =>
            index
              .page({ tab: 'live', limit: 200, now: 0 })
              .rows.map((r) => (r.kind === 'run' ? r.node.run.id : ''));
          expect(liveIds(filled)).toEqual(liveIds(whole));
          // The rows in place are the newest rows of the whole.
          // The oldest of them may be a wave whose older members are not read yet.
          const placed = Math.max(0, filled.placedRows - 1);
          expect(filled.page({ limit: Math.max(1, placed) }).rows.slice(0, placed)).toEqual(
            whole.page({ limit: Math.max(1, placed) }).rows.slice(0, placed),
          );
          while (!fill.step()) {}
          for (const tab of TABS) {
            expect(filled.page({ tab, limit: 200, now: 0 })).toEqual(whole.page({ tab, limit: 200, now: 0 }));
          }
          expect(filled.counts()).toEqual(whole.counts());
          expect(filled.notifications(1000)).toEqual(whole.notifications(1000));
        },
      ),
      { numRuns: numRuns(300) },
    );
  });
});

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function seed(store: Store, count: number): void {
  const t0 = 1_700_000_000_000;
  for (let start = 0; start < count; start += 500) {
    const newRuns = [];
    for (let i = start; i < Math.min(count, start + 500); i++) {
      const id = `h${i}`;
      const run: Run = {
        id,
        parent: 'mcp:p',
        agent: 'sim',
        depth: 1,
        rootId: id,
        keep: false,
        createdAt: t0 + i,
        seq: i,
        status: i % 10 === 0 ? 'failed' : 'completed',
        startedAt: t0 + i,
        launchedAt: t0 + i,
        endedAt: t0 + i + 5,
      };
      newRuns.push({ run, spec: { task: `history ${i}`, preview: `history ${i}`, agent: 'sim' } });
    }
    store.apply({ epoch: 0, newRuns });
  }
}

describe('the dashboard’s first page with a long history', () => {
  it('reads the newest runs and the live ones, counts from the store, and fills the rest in a page per turn', async () => {
    const world = fakeWorld();
    const HISTORY = FIRST_RUNS * 4 + 7;
    seed(world.store, HISTORY);
    world.gateway.spawn('cli:a', { task: 'hang' });
    world.gateway.spawn('cli:a', { task: 'hang' });
    await world.clock.advance(1);
    let read = 0;
    const history: DashboardHistory = {
      runs: (query) => {
        const views = world.store.runs(query).map(toRunView);
        read += views.length;
        return views;
      },
      statusCounts: () => world.store.statusCounts(),
    };
    const dashboard = worldDashboard(world, { historyMax: 100_000, history, fillIntervalMs: 1 });
    cleanups.push(async () => {
      dashboard.close();
      await world.gateway.close();
    });
    const messages: LiveMessage[] = [];
    dashboard.feed.subscribe((m) => messages.push(m));

    const first = dashboard.snapshot();
    expect(read).toBeLessThanOrEqual(FIRST_RUNS + 2);
    expect(dashboard.historyComplete).toBe(false);
    expect(first.counts.all).toBe(HISTORY + 2);
    expect(first.counts.failed).toBe(Math.ceil(HISTORY / 10));
    expect(first.counts.live).toBe(2);
    expect(first.page.total).toBe(HISTORY + 2);
    expect(first.page.rows[2]).toMatchObject({ node: { run: { id: `h${HISTORY - 1}` } } });
    // An old run is found though the read model does not hold it yet.
    expect(dashboard.run('h3')?.id).toBe('h3');

    // A run admitted now lands first; one turn later a page more of history is in, and so on to the end.
    world.gateway.spawn('cli:a', { task: 'hang' });
    await world.clock.advance(1);
    expect(read).toBeLessThanOrEqual(FIRST_RUNS + 2 + 1000 + 1);
    expect(dashboard.historyComplete).toBe(false);
    for (let i = 0; i < 10 && !dashboard.historyComplete; i++) await world.clock.advance(1);
    expect(dashboard.historyComplete).toBe(true);
    expect(messages.some((m) => m.type === 'history')).toBe(true);
    expect(dashboard.counts().all).toBe(HISTORY + 3);
    const page = dashboard.page({ limit: 5 });
    expect(page.total).toBe(HISTORY + 3);
    expect(page.rows.map((r) => (r.kind === 'run' ? r.node.run.status : r.kind))).toEqual([
      'running',
      'running',
      'running',
      'completed',
      'completed',
    ]);
    expect(
      dashboard.page({ offset: HISTORY, limit: 5 }).rows.map((r) => (r.kind === 'run' ? r.node.run.id : '')),
    ).toEqual(['h2', 'h1', 'h0']);
  });

  it('reads the rest of history at once for a page that needs all of it (a tab, a filter, a deep page)', () => {
    const world = fakeWorld();
    seed(world.store, FIRST_RUNS * 3);
    const dashboard = worldDashboard(world, {
      historyMax: 100_000,
      history: {
        runs: (query) => world.store.runs(query).map(toRunView),
        statusCounts: () => world.store.statusCounts(),
      },
    });
    cleanups.push(async () => {
      dashboard.close();
      await world.gateway.close();
    });
    dashboard.activate();
    expect(dashboard.historyComplete).toBe(false);
    const failed = dashboard.page({ tab: 'failed', limit: 200 });
    expect(dashboard.historyComplete).toBe(true);
    expect(failed.total).toBe((FIRST_RUNS * 3) / 10);
    expect(dashboard.page({ query: 'history 7', limit: 200 }).total).toBe(111);
  });
});
