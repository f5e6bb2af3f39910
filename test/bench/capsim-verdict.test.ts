import { describe, expect, it } from 'vitest';
import { HOSTS, type Outcome, type Policy } from '../../bench/capsim/model.js';
import {
  capSafeOnEverySeed,
  judgePolicy,
  type SeedRun,
  safeOnEverySeed,
  seedsOwnBestSafe,
} from '../../bench/capsim/verdict.js';

const host = HOSTS[0];

function outcome(policy: Policy, tasksPerHour: number, kills: number): Outcome {
  return {
    host,
    policy,
    makespanSecs: 0,
    tasksPerHour,
    kills,
    gateRefusals: 0,
    reservationWaits: 0,
    caps: [],
    peakLiveGb: 0,
    meanRunning: 0,
    secsInFlight: [],
    heldByCapSecs: 0,
    heldByGateSecs: 0,
    killTraces: [],
    pauses: 0,
    pausedSecs: 0,
  };
}

const fixed = (cap: number, tasksPerHour: number, kills: number) =>
  outcome({ kind: 'fixed', cap }, tasksPerHour, kills);
const auto = (tasksPerHour: number) => outcome({ kind: 'auto' }, tasksPerHour, 0);
const isAuto = (o: Outcome) => o.policy.kind === 'auto';

/** Fixed 4 is safe on seed 2 only by luck; fixed 2 is safe on both; fixed 1 always. */
const runs: SeedRun[] = [
  { seed: 1, outcomes: [fixed(1, 50, 0), fixed(2, 100, 0), fixed(4, 200, 3), auto(170)] },
  { seed: 2, outcomes: [fixed(1, 50, 0), fixed(2, 100, 0), fixed(4, 200, 0), auto(170)] },
];

describe('capsim verdict: the two readings of "over all seeds"', () => {
  it('the rule takes as reference the fixed cap safe on every seed, the most tasks per hour of those', () => {
    expect(capSafeOnEverySeed(runs)).toBe(2);
    const v = judgePolicy(host, runs, isAuto, safeOnEverySeed(runs));
    expect(v.ratios).toEqual([1.7, 1.7]);
    expect(v.seedsShort).toEqual([]);
    expect(v.isMet).toBe(true);
  });

  it('the rule misses a seed where auto falls under 90% of that reference, and any seed where auto kills', () => {
    const slow: SeedRun[] = [
      { seed: 1, outcomes: [fixed(1, 50, 0), fixed(2, 100, 0), outcome({ kind: 'auto' }, 95, 0)] },
      { seed: 2, outcomes: [fixed(1, 50, 0), fixed(2, 100, 0), outcome({ kind: 'auto' }, 89, 0)] },
      { seed: 3, outcomes: [fixed(1, 50, 0), fixed(2, 100, 0), outcome({ kind: 'auto' }, 120, 1)] },
    ];
    const v = judgePolicy(host, slow, isAuto, safeOnEverySeed(slow));
    expect(v.seedsShort).toEqual([2]);
    expect(v.seedsWithKills).toEqual([3]);
    expect(v.isMet).toBe(false);
    expect(v.reason).toMatch(
      /1 out-of-memory kills on 1 of 3 seeds \(3\); below 90% of the reference on 1 of 3 seeds \(2; lowest 89.0%\)/,
    );
  });

  it('the stricter reading compares each seed with that seed’s best safe fixed cap, lucky or not', () => {
    const v = judgePolicy(host, runs, isAuto, seedsOwnBestSafe);
    expect(v.ratios).toEqual([1.7, 0.85]); // seed 1: fixed 2 (fixed 4 killed); seed 2: fixed 4, safe by luck
    expect(v.seedsShort).toEqual([2]);
    expect(v.isMet).toBe(false);
  });

  it('has no reference when no fixed cap is safe on every seed: then only the kills count', () => {
    const unsafe: SeedRun[] = [
      { seed: 1, outcomes: [fixed(1, 50, 1), auto(40)] },
      { seed: 2, outcomes: [fixed(1, 50, 0), auto(40)] },
    ];
    expect(capSafeOnEverySeed(unsafe)).toBeUndefined();
    const v = judgePolicy(host, unsafe, isAuto, safeOnEverySeed(unsafe));
    expect(v.ratios).toEqual([undefined, undefined]);
    expect(v.isMet).toBe(true);
  });
});
