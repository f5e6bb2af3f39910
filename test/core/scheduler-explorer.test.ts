import { describe, expect, it } from 'vitest';
import { Scheduler } from '../../src/core/scheduler.js';
import type { SchedulerLimits } from '../../src/core/scheduler-types.js';
import { spawnNested, spawnSingles } from './explorer/admission-moves.js';
import {
  CancelDropsNeighbour,
  DeadlinesNeverFire,
  DoubleAnnouncement,
  EarlyPermitReturn,
  LostLaunch,
  TurnLimitEndsCancelled,
} from './explorer/broken-schedulers.js';
import { deepClone } from './explorer/deep-clone.js';
import type { Bounds, MoveContext } from './explorer/move.js';
import { MOVE_KINDS, movesOf } from './explorer/moves.js';
import { exploreAndReport, exploreHalf } from './explorer/report.js';
import { endRuns, startRuns } from './explorer/runner-moves.js';
import { ParentSymmetry, stateKey } from './explorer/state-key.js';
import { World } from './explorer/world.js';

const limits: SchedulerLimits = {
  cap: 1,
  staggerMs: 0,
  maxQueued: 8,
  maxQueuedWaveMembers: 8,
  maxDepth: 2,
  maxChildren: 2,
  timeoutMs: 1_000_000,
};
const bounds: Bounds = {
  maxRuns: 3,
  parents: ['mcp:a'],
  waveSizes: [],
  nestedSizes: [1],
  spawnWhileStopping: false,
  maxTurns: 0,
  keep: false,
  maxRestarts: 0,
};

// The other half is in scheduler-explorer-more.test.ts.
exploreHalf(1, 'bounded exhaustive exploration of the admission core (DESIGN §3), first half');

describe('the explorer forks and merges states soundly', () => {
  const context: MoveContext = {
    bounds: { ...bounds, parents: ['mcp:a', 'mcp:b'] },
    kinds: MOVE_KINDS,
    makeScheduler: (l) => new Scheduler(l),
  };
  const symmetry = new ParentSymmetry(context.bounds.parents);
  const play = (world: World, ...labels: string[]): World => {
    for (const label of labels) {
      const move = movesOf(world, context).find((m) => m.label === label);
      if (!move) throw new Error(`no move ${label}`);
      move.apply(world, context);
    }
    return world;
  };
  const fresh = () => new World(Object.freeze({ ...limits }), new Scheduler(limits));

  it('a fork is independent of the state it was forked from', () => {
    const world = play(fresh(), 'spawn mcp:a', 'started r1');
    const before = stateKey(world, symmetry);
    const fork = play(deepClone(world), 'nested run:r1 ×1', 'cancel r1');
    expect(stateKey(world, symmetry)).toBe(before);
    expect(world.scheduler.subtree('r1')).toEqual(['r1']);
    expect(fork.scheduler.subtree('r1')).toEqual(['r1', 'r2']);
  });

  it('time passing alone, or a swap of parents, changes no state; an event that matters does', () => {
    const world = play(fresh(), 'spawn mcp:a', 'started r1');
    const key = stateKey(world, symmetry);
    expect(stateKey(play(deepClone(world), 'steer r1'), symmetry)).toBe(key);
    expect(stateKey(play(fresh(), 'spawn mcp:b', 'started r1'), symmetry)).toBe(key);
    expect(stateKey(play(deepClone(world), 'spawn mcp:a'), symmetry)).not.toBe(key);
    expect(stateKey(play(deepClone(world), 'spawn mcp:b'), symmetry)).not.toBe(
      stateKey(play(deepClone(world), 'spawn mcp:a'), symmetry),
    );
  });
});

describe('the explorer catches planted bugs with a shortest counterexample', () => {
  it('a permit returned while a descendant still runs', () => {
    const result = exploreAndReport({
      name: 'early permit return',
      limits,
      bounds,
      makeScheduler: (l) => new EarlyPermitReturn(l),
    });
    expect(result.counterexample?.kind).toBe('violation');
    expect(result.counterexample?.violations.join('\n')).toMatch(
      /tree of r1 is in flight without its permit/,
    );
    expect(result.counterexample?.labels).toEqual([
      'spawn mcp:a',
      'started r1',
      'nested run:r1 ×1',
      'ended r1 completed',
    ]);
  });

  it('a cancel that drops the queued run behind it', () => {
    const result = exploreAndReport({
      name: 'cancel drops its neighbour',
      limits,
      bounds: { ...bounds, nestedSizes: [] },
      makeScheduler: (l) => new CancelDropsNeighbour(l),
    });
    expect(result.counterexample?.violations.join('\n')).toMatch(/cancel of r2 ended queued r3/);
    expect(result.counterexample?.labels).toEqual(['spawn mcp:a', 'spawn mcp:a', 'spawn mcp:a', 'cancel r2']);
  });

  it('a completion announced twice', () => {
    const result = exploreAndReport({
      name: 'double announcement',
      limits,
      bounds,
      makeScheduler: (l) => new DoubleAnnouncement(l),
    });
    expect(result.counterexample?.violations.join('\n')).toMatch(/run r1 announced twice/);
    expect(result.counterexample?.labels).toEqual(['spawn mcp:a', 'ended r1 completed']);
  });

  it('a deadline that never fires', () => {
    const result = exploreAndReport({
      name: 'deadlines never fire',
      limits,
      bounds,
      makeScheduler: (l) => new DeadlinesNeverFire(l),
    });
    expect(result.counterexample?.violations.join('\n')).toMatch(/r1's deadline passed at the tick/);
    expect(result.counterexample?.labels).toEqual(['spawn mcp:a', 'tick at the next wake']);
  });

  it('a turn-limit stop that ends the run cancelled instead of completed', () => {
    const result = exploreAndReport({
      name: 'turn limit ends cancelled',
      limits,
      bounds: { ...bounds, nestedSizes: [], maxTurns: 1 },
      makeScheduler: (l) => new TurnLimitEndsCancelled(l),
    });
    expect(result.counterexample?.violations.join('\n')).toMatch(
      /r1 reported cancelled ended cancelled, expected completed/,
    );
    expect(result.counterexample?.labels).toEqual([
      'spawn mcp:a',
      'tool_call r1',
      'ended r1 cancelled (confirms the turn_limit)',
    ]);
  });

  it('a lost launch: a deadlock, found by the reverse reachability pass', () => {
    const result = exploreAndReport({
      name: 'lost launch',
      limits: { ...limits, cap: 2 },
      bounds,
      // Runner progress only: a timeout or a cancel would trip a per-step check before the pass.
      kinds: [spawnSingles, spawnNested, startRuns, endRuns],
      makeScheduler: (l) => new LostLaunch(l),
    });
    expect(result.counterexample?.kind).toBe('deadlock');
    expect(result.counterexample?.labels).toEqual(['spawn mcp:a', 'spawn mcp:a']);
    expect(result.counterexample?.live).toContain('r2 starting');
  });
});

/**
 * Two races this explorer found in an earlier scheduler, pinned with their shortest traces: each
 * configuration above now explores them, and these check they stay fixed.
 */
describe('found by the explorer, fixed', () => {
  it('a run told to stop cannot spawn: its child would escape the cascade', () => {
    const result = exploreAndReport({
      name: 'spawn while stopping',
      limits,
      bounds: { ...bounds, spawnWhileStopping: true },
    });
    expect(result.counterexample).toBeUndefined();
    expect(result.incomplete).toBe(false);
  });

  it('a conversation whose run was queued at a restart stays busy and continues once that run completes', () => {
    const result = exploreAndReport({
      name: 'conversation queued across a restart',
      limits,
      bounds: { ...bounds, keep: true, nestedSizes: [], maxRestarts: 1 },
    });
    expect(result.counterexample).toBeUndefined();
    expect(result.incomplete).toBe(false);
  });
});
