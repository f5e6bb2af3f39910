import type { SchedulerLimits } from '../../../src/core/scheduler-types.js';
import { spawnSingles, spawnWaves } from './admission-moves.js';
import type { ExplorerConfig } from './explorer.js';
import type { Bounds } from './move.js';
import { cancelRuns } from './operator-moves.js';
import { confirmStops, endRuns, startRuns, tickToWake, toolCalls } from './runner-moves.js';

const limits: SchedulerLimits = {
  cap: 1,
  staggerMs: 0,
  // Large enough that only the configurations that mean to hit a queue bound do.
  maxQueued: 8,
  maxQueuedWaveMembers: 8,
  maxDepth: 1,
  maxChildren: 2,
  // Far longer than any path (one time unit per event), so only the order of deadlines matters.
  timeoutMs: 1_000_000,
};

const bounds: Bounds = {
  maxRuns: 4,
  parents: ['mcp:a', 'mcp:b'],
  waveSizes: [2],
  nestedSizes: [],
  spawnWhileStopping: true,
  maxTurns: 0,
  keep: false,
  maxRestarts: 0,
};

/**
 * The configurations `npm test` explores, each small enough to close in seconds: the state space
 * grows with every run and every kind of event, so each one spends its runs on one area of DESIGN §3
 * and together they cover cap ≤ 3, two parents, depth ≤ 2 and up to six runs.
 */
export const CONFIGS: readonly ExplorerConfig[] = [
  {
    // Six runs through three permits: FIFO order, the cap, the queue bounds (a second queued wave is
    // refused whole) and waves' digests under every interleaving of admissions, starts and ends (no
    // cancels or timeouts, which multiply the states of each run).
    name: 'cap 3, 6 runs, waves of 3, tight queue bounds: admission and ends',
    limits: { ...limits, cap: 3, maxQueued: 2, maxQueuedWaveMembers: 3 },
    bounds: { ...bounds, maxRuns: 6, waveSizes: [3] },
    kinds: [spawnSingles, spawnWaves, startRuns, endRuns],
  },
  {
    // The cap's edge with every event, a restart included; one parent, which halves the states (the
    // other configurations cover a second parent).
    name: 'cap 3, 4 runs, waves of 3, one restart: every event',
    limits: { ...limits, cap: 3 },
    bounds: { ...bounds, parents: ['mcp:a'], waveSizes: [3], maxRestarts: 1 },
  },
  {
    // The queue across a restart with two parents: each queued run resumes in order, each run that
    // was executing ends lost with an event for its own parent.
    name: 'cap 2, 4 runs, waves of 2, one restart: every event',
    limits: { ...limits, cap: 2 },
    bounds: { ...bounds, maxRestarts: 1 },
  },
  {
    // Nesting: permits held by a tree until its last descendant ends, nested waves, cascades.
    name: 'cap 1, depth 2, 4 runs, nested waves: every event',
    limits: { ...limits, maxDepth: 2 },
    bounds: { ...bounds, nestedSizes: [1, 2] },
  },
  {
    name: 'cap 2, depth 2, 3 runs, one restart: every event',
    limits: { ...limits, cap: 2, maxDepth: 2 },
    bounds: { ...bounds, maxRuns: 3, nestedSizes: [1, 2], maxRestarts: 1 },
  },
  {
    // Kept conversations: continue, release and busy refusals, across a restart.
    name: 'cap 1, 3 runs, conversations, one restart: every event',
    limits,
    bounds: { ...bounds, maxRuns: 3, parents: ['mcp:a'], waveSizes: [], keep: true, maxRestarts: 1 },
  },
  {
    // The turn budget against timeouts and cancels: whichever stop is asked first decides the end.
    name: 'cap 2, 3 runs, a budget of 1 tool call: starts, tool calls, timeouts, cancels',
    limits: { ...limits, cap: 2 },
    bounds: { ...bounds, maxRuns: 3, waveSizes: [], maxTurns: 1 },
    kinds: [spawnSingles, startRuns, toolCalls, endRuns, confirmStops, tickToWake, cancelRuns],
  },
  {
    // A stagger holds permitted runs back: cancelling and restarting them before they launch.
    name: 'cap 2, stagger, depth 2, 3 runs, one restart: every event',
    limits: { ...limits, cap: 2, maxDepth: 2, staggerMs: 100_000 },
    bounds: { ...bounds, maxRuns: 3, nestedSizes: [1], maxRestarts: 1 },
  },
];
