import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isTerminal } from '../../src/core/types.js';
import { numRuns } from '../helpers/fc-runs.js';
import { action, apply, limits } from './scheduler-actions.js';
import { Harness } from './scheduler-harness.js';

describe('scheduler invariants over random histories (DESIGN §3)', () => {
  it('holds every invariant after every step, and everything ends exactly once', () => {
    fc.assert(
      fc.property(limits, fc.array(action, { maxLength: 40 }), (lim, actions) => {
        const h = new Harness(lim);
        for (const a of actions) apply(h, a);
        h.finish();
        if (h.violations.length > 0) throw new Error(h.violations.join('\n'));
        for (const run of h.runs.values()) expect(isTerminal(run.status)).toBe(true);
      }),
      { numRuns: numRuns(10_000) },
    );
  });

  it('the harness catches a broken invariant (a run ended twice)', () => {
    const h = new Harness({
      cap: 1,
      staggerMs: 0,
      maxQueued: 1,
      maxQueuedWaveMembers: 1,
      maxDepth: 1,
      maxChildren: 0,
      timeoutMs: 1000,
    });
    h.step({ type: 'spawn', parent: 'mcp:a', members: [{ id: 'x', agent: 'sim', keep: false }] });
    h.step({ type: 'ended', runId: 'x', status: 'completed' });
    expect(h.violations).toEqual([]);
    // Feed a forged second terminal record through the observer: the check must object.
    h.terminalCount.set('x', 2);
    h.check();
    expect(h.violations.join()).toMatch(/ended 2 times/);
  });
});
