import { describe, expect, it } from 'vitest';
import { HOSTS, type Outcome, type Policy } from '../../bench/capsim/model.js';
import { againstCapSafeOnEverySeed, judgePolicy, type SeedRun } from '../../bench/capsim/verdict.js';

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
  it('the judged rule compares each seed with that seed’s best safe fixed cap, lucky or not', () => {
    const v = judgePolicy(host, runs, isAuto);
    expect(v.seedsShort).toEqual([2]); // 170 of fixed 4's 200 on seed 2
    expect(v.isMet).toBe(false);
  });

  it('the other reading takes the best fixed cap safe on every seed as the reference', () => {
    const other = againstCapSafeOnEverySeed(runs, isAuto);
    expect(other?.reference.policy).toEqual({ kind: 'fixed', cap: 2 });
    expect(other?.minRatio).toBeCloseTo(1.7);
    expect(other?.medianRatio).toBeCloseTo(1.7);
  });

  it('says there is none when no fixed cap is safe on every seed', () => {
    const unsafe: SeedRun[] = [
      { seed: 1, outcomes: [fixed(1, 50, 1), auto(40)] },
      { seed: 2, outcomes: [fixed(1, 50, 0), auto(40)] },
    ];
    expect(againstCapSafeOnEverySeed(unsafe, isAuto)).toBeUndefined();
  });
});
