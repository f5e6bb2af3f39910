import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isTerminal } from '../../src/core/types.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { numRuns } from '../helpers/fc-runs.js';
import { type Action, action, apply, limits } from './scheduler-actions.js';
import { Harness } from './scheduler-harness.js';

describe('scheduler invariants across restarts over the SQLite store (DESIGN §3, after a restart)', () => {
  it('queued runs resume in order, executing ones end lost once, nothing is announced twice', () => {
    const withRestart: fc.Arbitrary<Action | { kind: 'restart' }> = fc.oneof(
      { weight: 12, arbitrary: action },
      { weight: 1, arbitrary: fc.constant({ kind: 'restart' as const }) },
    );
    fc.assert(
      fc.property(limits, fc.array(withRestart, { maxLength: 40 }), (lim, actions) => {
        const store = new SqliteStore(':memory:');
        try {
          const h = new Harness(lim);
          h.useStore(store);
          for (const a of actions) {
            if (a.kind === 'restart') h.restart();
            else apply(h, a);
          }
          h.finish();
          if (h.violations.length > 0) throw new Error(h.violations.join('\n'));
          // The store agrees: every run ended, and each is named by exactly one outbox event.
          const runs = store.runs({ limit: 100_000 });
          expect(runs.every((r) => isTerminal(r.run.status))).toBe(true);
          const named = new Map<string, number>();
          for (const event of store.outbox({}))
            for (const id of event.runIds) named.set(id, (named.get(id) ?? 0) + 1);
          for (const r of runs) expect(named.get(r.run.id)).toBe(1);
        } finally {
          store.close();
        }
      }),
      { numRuns: numRuns(1500) },
    );
  });
});
