import { Scheduler } from '../../../src/core/scheduler.js';
import type { SchedulerLimits } from '../../../src/core/scheduler-types.js';
import { type Counterexample, replay } from './counterexample.js';
import { deepClone } from './deep-clone.js';
import type { Bounds, MoveContext, MoveKind } from './move.js';
import { MOVE_KINDS, movesOf } from './moves.js';
import { ParentSymmetry, stateKey } from './state-key.js';
import { World } from './world.js';

export interface ExplorerConfig {
  name: string;
  limits: SchedulerLimits;
  bounds: Bounds;
  /** The kinds of event to interleave. @default MOVE_KINDS (all) */
  kinds?: readonly MoveKind[];
  /** The scheduler under test; a planted bug passes a broken one. @default a plain `Scheduler` */
  makeScheduler?: (limits: SchedulerLimits) => Scheduler;
  /** Distinct states after which the explorer gives up instead of running on. @default 1_000_000 */
  maxStates?: number;
}

export interface Exploration {
  name: string;
  states: number;
  transitions: number;
  /** Longest shortest path to a state: the BFS depth at which the state space closed. */
  depth: number;
  /** States with no live run. */
  quiescent: number;
  /** The state budget ran out before every state was visited. */
  incomplete: boolean;
  ms: number;
  counterexample?: Counterexample;
}

/**
 * Breadth-first over every interleaving of the moves within the bounds, merging equal states. The
 * first violation found is at the smallest depth, so its trace is a shortest counterexample. When the
 * space closes without one, checks deadlock freedom: every state with live runs reaches a state with
 * none through runner progress alone (starts, ends, ticks; no new spawns, no cancels), found by a
 * reverse reachability pass over the progress edges.
 */
export function explore(config: ExplorerConfig): Exploration {
  const started = performance.now();
  const makeScheduler = config.makeScheduler ?? ((limits: SchedulerLimits) => new Scheduler(limits));
  const context: MoveContext = {
    bounds: config.bounds,
    kinds: config.kinds ?? MOVE_KINDS,
    makeScheduler,
  };
  const maxStates = config.maxStates ?? 1_000_000;
  const symmetry = new ParentSymmetry(config.bounds.parents);
  const index = new Map<string, number>();
  const parentOf: number[] = [];
  const via: string[] = [];
  const depthOf: number[] = [];
  const isLive: boolean[] = [];
  const worlds: (World | undefined)[] = [];
  const progressFrom: number[] = [];
  const progressTo: number[] = [];
  let transitions = 0;

  const add = (key: string, world: World, parent: number, label: string): number => {
    const id = worlds.length;
    index.set(key, id);
    parentOf.push(parent);
    via.push(label);
    depthOf.push(parent < 0 ? 0 : (depthOf[parent] as number) + 1);
    isLive.push(world.live().length > 0);
    worlds.push(world);
    return id;
  };
  const pathTo = (id: number): string[] => {
    const labels: string[] = [];
    for (let at = id; at > 0; at = parentOf[at] as number) labels.push(via[at] as string);
    return labels.reverse();
  };
  const result = (extra: Partial<Exploration>): Exploration => ({
    name: config.name,
    states: worlds.length,
    transitions,
    depth: depthOf[depthOf.length - 1] ?? 0,
    quiescent: isLive.filter((live) => !live).length,
    incomplete: false,
    ms: Math.round(performance.now() - started),
    ...extra,
  });
  const fail = (kind: Counterexample['kind'], labels: string[], violations: string[]) =>
    replay({ kind, labels, violations, context, initial: () => initial() });
  // Frozen, so every forked state shares it.
  const limits = Object.freeze({ ...config.limits });
  const initial = () => new World(limits, makeScheduler(limits));

  const first = initial();
  add(stateKey(first, symmetry), first, -1, '');
  for (let state = 0; state < worlds.length; state++) {
    if (worlds.length > maxStates) return result({ incomplete: true });
    const world = worlds[state] as World;
    worlds[state] = undefined; // expanded once; keeps only the frontier in memory
    for (const move of movesOf(world, context)) {
      const next = deepClone(world);
      move.apply(next, context);
      transitions++;
      if (next.violations.length > 0) {
        const labels = [...pathTo(state), move.label];
        return result({ counterexample: fail('violation', labels, next.violations) });
      }
      const key = stateKey(next, symmetry);
      const target = index.get(key) ?? add(key, next, state, move.label);
      if (move.progress) {
        progressFrom.push(state);
        progressTo.push(target);
      }
    }
  }

  const stuck = firstDeadlock(isLive, progressFrom, progressTo);
  if (stuck === undefined) return result({});
  const labels = pathTo(stuck);
  return result({
    counterexample: fail('deadlock', labels, [
      'runs are live, and no sequence of starts, ends and ticks from here ends them all',
    ]),
  });
}

/** The first state (so the shallowest) with live runs from which no progress path reaches quiescence. */
function firstDeadlock(isLive: boolean[], from: number[], to: number[]): number | undefined {
  const n = isLive.length;
  // Reverse adjacency in compressed form: the predecessors of each state along progress edges.
  const start = new Int32Array(n + 1);
  for (const t of to) (start[t + 1] as number)++;
  for (let i = 0; i < n; i++) start[i + 1] = (start[i + 1] as number) + (start[i] as number);
  const fill = start.slice(0, n);
  const preds = new Int32Array(to.length);
  for (let e = 0; e < to.length; e++) preds[(fill[to[e] as number] as number)++] = from[e] as number;
  const ends = new Uint8Array(n);
  const work: number[] = [];
  for (let i = 0; i < n; i++) {
    if (!isLive[i]) {
      ends[i] = 1;
      work.push(i);
    }
  }
  while (work.length > 0) {
    const t = work.pop() as number;
    for (let e = start[t] as number; e < (start[t + 1] as number); e++) {
      const s = preds[e] as number;
      if (!ends[s]) {
        ends[s] = 1;
        work.push(s);
      }
    }
  }
  for (let i = 0; i < n; i++) if (!ends[i]) return i;
  return undefined;
}
