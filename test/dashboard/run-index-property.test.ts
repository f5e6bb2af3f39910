import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RunIndex } from '../../src/dashboard/run-index.js';
import type { RunView } from '../../src/gateway/run-view.js';
import { numRuns } from '../helpers/fc-runs.js';

const STATUSES = ['queued', 'starting', 'running', 'completed', 'failed', 'cancelled'] as const;
const LIVE = new Set(['queued', 'starting', 'running']);

/** A random history: runs (top-level singles, wave members, nested) and later status changes and acks. */
const history = fc.array(
  fc.record({
    kind: fc.constantFrom('single', 'wave', 'nested', 'update'),
    pick: fc.nat(),
    batch: fc.nat(3),
    status: fc.constantFrom(...STATUSES),
    acked: fc.boolean(),
    person: fc.boolean(),
    undeliverable: fc.boolean(),
  }),
  { maxLength: 60 },
);

describe('the run index’s kept counters', () => {
  it('running, queued, live and notifications owed to a person always equal a count over every run, through changes and eviction', () => {
    fc.assert(
      fc.property(history, fc.integer({ min: 3, max: 40 }), (steps, max) => {
        const index = new RunIndex(max);
        const runs = new Map<string, RunView>();
        let n = 0;
        for (const step of steps) {
          const ids = [...runs.keys()];
          let view: RunView;
          if (step.kind === 'update' && ids.length > 0) {
            const old = runs.get(ids[step.pick % ids.length] as string) as RunView;
            view = {
              ...old,
              status: step.status,
              ...(step.acked && !LIVE.has(step.status) ? { acked_at: '2026-01-01T00:00:00.000Z' } : {}),
              ...(step.undeliverable && !LIVE.has(step.status) ? { delivery: 'undeliverable' } : {}),
            };
          } else {
            const id = `r${n++}`;
            const parents = ids.filter((i) => (runs.get(i)?.depth ?? 9) < 3);
            const nested = step.kind === 'nested' && parents.length > 0;
            const parentRun = nested ? runs.get(parents[step.pick % parents.length] as string) : undefined;
            view = {
              id,
              status: step.status,
              agent: 'sim',
              // A person (the CLI) or an agent session: only some of an agent's completions are owed an ack.
              parent: parentRun ? `run:${parentRun.id}` : step.person ? 'cli:a' : 'mcp:agent@proj',
              depth: parentRun ? parentRun.depth + 1 : 1,
              ...(step.kind === 'wave' ? { batch_id: `b${step.batch}` } : {}),
              task_preview: id,
              created_at: '2026-01-01T00:00:00.000Z',
              delivery: 'pending',
            };
          }
          runs.set(view.id, view);
          index.upsert([view]);
        }
        // What the index still holds, counted the slow way.
        const held = [...runs.values()]
          .filter((r) => index.get(r.id) !== undefined)
          .map((r) => index.get(r.id) as RunView);
        const running = held.filter((r) => r.status === 'running' || r.status === 'starting');
        expect(index.running()).toEqual({
          top_level: running.filter((r) => r.depth === 1).length,
          nested: running.filter((r) => r.depth > 1).length,
        });
        const queued = held.filter((r) => r.status === 'queued' && r.depth === 1);
        expect(index.queued()).toEqual({
          singles: queued.filter((r) => r.batch_id === undefined).length,
          wave_members: queued.filter((r) => r.batch_id !== undefined).length,
        });
        const groups = new Map<string, RunView[]>();
        for (const r of held.filter((r) => r.depth === 1)) {
          const key = r.batch_id ?? r.id;
          groups.set(key, [...(groups.get(key) ?? []), r]);
        }
        const owed = [...groups.values()].filter(
          (g) =>
            g.every((r) => !LIVE.has(r.status) && r.acked_at === undefined) &&
            g.some(
              (r) =>
                r.parent === 'cli:a' ||
                r.delivery === 'undeliverable' ||
                ['failed', 'timed_out', 'lost'].includes(r.status),
            ),
        );
        // `live` lists every live top-level run (wave members each), however many rows it spans.
        expect(index.page({ tab: 'live', limit: 200 }).total).toBe(
          held.filter((r) => r.depth === 1 && LIVE.has(r.status)).length,
        );
        expect(index.notifications(1000).total).toBe(owed.length);
        expect(index.notifications(1000).items).toHaveLength(owed.length);
        expect(index.counts().all).toBe(held.length);
        expect(index.size).toBeLessThanOrEqual(max);
      }),
      { numRuns: numRuns(500) },
    );
  });
});
