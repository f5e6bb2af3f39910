import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type LiveRunMemory,
  type ReservationInput,
  reserveStarts,
  SPREAD_Z,
} from '../../src/core/reservation.js';

const run = (expectedGb: number, currentGb: number): LiveRunMemory => ({ expectedGb, currentGb });

function input(overrides: Partial<ReservationInput>): ReservationInput {
  return { availableGb: 7, runs: [], nextExpectedGb: [], bufferGb: 2, ...overrides };
}

describe('reserveStarts', () => {
  it.each([
    {
      name: 'idle host: three p90s fit in 7 − 2 GiB, a fourth does not',
      over: { nextExpectedGb: [1.5, 1.5, 1.5, 1.5] },
      starts: 3,
    },
    {
      name: 'a run below its expectation is reserved its expectation',
      over: { availableGb: 6, runs: [run(1.5, 1)], nextExpectedGb: [1.5, 1.5, 1.5] },
      starts: 2,
    },
    {
      name: 'a run above its expectation is reserved what it holds',
      over: { availableGb: 4, runs: [run(1.5, 3)], nextExpectedGb: [1.5, 1.5] },
      starts: 1,
    },
    {
      name: 'a run that does not fit is not overtaken by a smaller one behind it',
      over: { availableGb: 4, runs: [run(1, 1)], nextExpectedGb: [3, 0.5] },
      starts: 0,
    },
    {
      name: 'an exact fit counts despite binary rounding (0.1 + 0.2 > 0.3)',
      over: { availableGb: 0.3, bufferGb: 0, runs: [run(0, 0)], nextExpectedGb: [0.1, 0.2] },
      starts: 2,
    },
    {
      name: 'a buffer larger than the memory runs could hold leaves nothing',
      over: { availableGb: 1, bufferGb: 5, runs: [run(0.5, 0.5)], nextExpectedGb: [0.1] },
      starts: 0,
    },
    { name: 'nothing queued: nothing to start', over: { nextExpectedGb: [] }, starts: 0 },
    {
      name: 'unknown reading: no limit from this gate',
      over: { availableGb: undefined, runs: [run(100, 0)], nextExpectedGb: [100, 100] },
      starts: 2,
    },
    {
      name: 'a reading that is not a number is unknown',
      over: { availableGb: Number.NaN, runs: [run(100, 0)], nextExpectedGb: [1] },
      starts: 1,
    },
    {
      name: 'a negative reading is unknown, not "nothing free"',
      over: { availableGb: -1, runs: [run(1, 0)], nextExpectedGb: [1] },
      starts: 1,
    },
    {
      name: 'nothing live: the head starts even when it does not fit, and only the head',
      over: { availableGb: 1, nextExpectedGb: [1.5, 0.1] },
      starts: 1,
    },
    {
      name: 'a NaN expectation in the queue stops the starts there',
      over: { runs: [run(1, 1)], nextExpectedGb: [1, Number.NaN, 1] },
      starts: 1,
    },
    {
      name: 'a NaN expectation of a live run fails closed',
      over: { runs: [run(Number.NaN, 1)], nextExpectedGb: [0.1] },
      starts: 0,
    },
    {
      name: 'negative numbers read as 0',
      over: { availableGb: 2, bufferGb: -3, runs: [run(-1, -1)], nextExpectedGb: [-5, 2, 0.1] },
      starts: 2,
    },
  ])('$name', ({ over, starts }) => {
    expect(reserveStarts(input(over)).startsAllowed).toBe(starts);
  });

  it('explains itself for resource_status', () => {
    const result = reserveStarts(
      input({ availableGb: 4, runs: [run(1.5, 3), run(1.5, 0.5)], nextExpectedGb: [1, 1] }),
    );
    // Reserved 3 (over its p90) + 1.5 (under it) of 4 + 3.5 − 2: room for one 1 GiB run, not two.
    expect(result).toEqual({
      startsAllowed: 1,
      explanation: {
        isLimited: true,
        liveGb: 3.5,
        headroomGb: 5.5,
        reservedGb: 4.5,
        spreadTermGb: 0,
        freeGb: 1,
        isIdleStart: false,
        settledRuns: 0,
      },
    });
    expect(reserveStarts(input({ nextExpectedGb: [1] })).startsAllowed).toBe(1);
    expect(reserveStarts(input({ availableGb: undefined, runs: [run(1, 2)] })).explanation).toEqual({
      isLimited: false,
      liveGb: 2,
      headroomGb: null,
      reservedGb: 2,
      spreadTermGb: 0,
      freeGb: null,
      isIdleStart: false,
      settledRuns: 0,
    });
    expect(reserveStarts(input({ availableGb: 0, nextExpectedGb: [1] })).explanation.isIdleStart).toBe(true);
  });

  it('keeps a margin of SPREAD_Z spreads of the sum, which grows with √n: a big host packs means, not p90s', () => {
    // 15 GiB, 2.5 kept back, runs of mean 0.8 and spread 0.6: 0.8·k + 1.5·0.6·√k ≤ 12.5 holds to k = 11
    // (11.78), not 12 (12.72); a p90 of 1.5 per run and no spread fit 8.
    const queue = (gb: number) => Array.from({ length: 20 }, () => gb);
    const spread = { availableGb: 15, bufferGb: 2.5, nextExpectedGb: queue(0.8), nextSpreadGb: queue(0.6) };
    expect(SPREAD_Z).toBe(1.5);
    expect(reserveStarts(input(spread)).startsAllowed).toBe(11);
    expect(
      reserveStarts(input({ availableGb: 15, bufferGb: 2.5, nextExpectedGb: queue(1.5) })).startsAllowed,
    ).toBe(8);
    // On a small host the same margin is most of the room: 7 GiB holds 0.8·k + 0.9·√k ≤ 4.5 to k = 3.
    expect(reserveStarts(input({ ...spread, availableGb: 7 })).startsAllowed).toBe(3);
  });

  it("counts the live runs' spread in the margin, and explains it", () => {
    // Two live runs of spread 1.2 (0.5 each held): margin 1.5·√(1.44·2) = 2.546; with a third 2.94.
    const live = [
      { expectedGb: 1, spreadGb: 1.2, currentGb: 0.5 },
      { expectedGb: 1, spreadGb: 1.2, currentGb: 0.5 },
    ];
    // headroom 6 + 1 − 2 = 5, reserved 2: a new 1 GiB run needs 3 + 2.94 > 5.
    const held = reserveStarts(
      input({ availableGb: 6, runs: live, nextExpectedGb: [1], nextSpreadGb: [1.2] }),
    );
    expect(held.startsAllowed).toBe(0);
    expect(held.explanation.spreadTermGb).toBeCloseTo(1.5 * Math.sqrt(2 * 1.44), 12);
    // The same runs with no spread: 2 + 1 ≤ 5.
    const bare = live.map(({ expectedGb, currentGb }) => run(expectedGb, currentGb));
    expect(reserveStarts(input({ availableGb: 6, runs: bare, nextExpectedGb: [1] })).startsAllowed).toBe(1);
  });

  it('takes a settled run at its high-water mark, with no expectation and no spread: its peak is seen', () => {
    // 15 GiB, 2.5 kept back, mean 0.8 and spread 0.6. Eight runs still growing (0.3 held each) reserve
    // 8 × 0.8 and a margin 1.5·0.6·√(8 + k); headroom 12.6 + 2.4 − 2.5 = 12.5, so
    // 6.4 + 0.8·k + 0.9·√(8 + k) ≤ 12.5 holds to k = 3 (12.02), not 4 (12.72).
    const growing = { expectedGb: 0.8, spreadGb: 0.6, currentGb: 0.3 };
    const queue = Array.from({ length: 10 }, () => 0.8);
    const spreads = Array.from({ length: 10 }, () => 0.6);
    const base = { availableGb: 15 - 8 * 0.3, bufferGb: 2.5, nextExpectedGb: queue, nextSpreadGb: spreads };
    expect(
      reserveStarts(input({ ...base, runs: Array.from({ length: 8 }, () => growing) })).startsAllowed,
    ).toBe(3);
    // The same eight runs settled at 0.3 (their RSS stopped rising there): 2.4 + 0.8·k + 0.9·√k ≤ 12.5
    // holds to k = 9 (12.3), not 10 (13.25): six more runs than while they grew.
    const settled = { ...growing, settledGb: 0.3 };
    const result = reserveStarts(input({ ...base, runs: Array.from({ length: 8 }, () => settled) }));
    expect(result.startsAllowed).toBe(9);
    expect(result.explanation.reservedGb).toBeCloseTo(2.4, 12);
    expect(result.explanation.spreadTermGb).toBe(0);
    expect(result.explanation.settledRuns).toBe(8);
  });

  it('a settled run above its expectation is reserved its high-water mark, and never less than it holds now', () => {
    // 7 GiB available, 2 kept back, one run settled at 3 now holding 2.5: headroom 7 + 2.5 − 2 = 7.5,
    // reserved 3, so a 4.5 GiB run fits and a 4.6 GiB one does not.
    const high = { expectedGb: 0.8, currentGb: 2.5, settledGb: 3 };
    expect(reserveStarts(input({ runs: [high], nextExpectedGb: [4.5] })).startsAllowed).toBe(1);
    expect(reserveStarts(input({ runs: [high], nextExpectedGb: [4.6] })).startsAllowed).toBe(0);
    // A settled mark below what it holds now (a shared session's share grew): what it holds counts.
    const grown = { expectedGb: 0.8, currentGb: 3, settledGb: 1 };
    expect(reserveStarts(input({ runs: [grown], nextExpectedGb: [4] })).explanation.reservedGb).toBe(3);
  });

  it('a settled mark that is not a number fails closed', () => {
    const live = [{ expectedGb: 0.1, currentGb: 0.1, settledGb: Number.NaN }];
    expect(reserveStarts(input({ availableGb: 100, runs: live, nextExpectedGb: [0.1] })).startsAllowed).toBe(
      0,
    );
  });

  it('a spread that is not a number fails closed', () => {
    const live = [{ expectedGb: 0.1, spreadGb: Number.NaN, currentGb: 0 }];
    expect(reserveStarts(input({ availableGb: 100, runs: live, nextExpectedGb: [0.1] })).startsAllowed).toBe(
      0,
    );
    expect(
      reserveStarts(
        input({
          availableGb: 100,
          runs: [run(0.1, 0)],
          nextExpectedGb: [0.1, 0.1],
          nextSpreadGb: [0, Number.NaN],
        }),
      ).startsAllowed,
    ).toBe(1);
  });

  it('agrees with the formula as written, on every small case', () => {
    // The condition, spelled out: live used + Σ max(0, expected − current) + new ≤ available +
    // live used − buffer. Quarter-GiB values are exact in binary, so no tolerance is needed here.
    const oracle = (i: ReservationInput): number => {
      if (i.availableGb === undefined) return i.nextExpectedGb.length;
      const used = i.runs.reduce((s, r) => s + r.currentGb, 0);
      const growth = i.runs.reduce((s, r) => s + Math.max(0, r.expectedGb - r.currentGb), 0);
      const headroom = i.availableGb + used - i.bufferGb;
      let k = 0;
      let added = 0;
      while (
        k < i.nextExpectedGb.length &&
        used + growth + added + (i.nextExpectedGb[k] as number) <= headroom
      ) {
        added += i.nextExpectedGb[k] as number;
        k++;
      }
      return k === 0 && i.runs.length === 0 && i.nextExpectedGb.length > 0 ? 1 : k;
    };
    const runChoices = [0.5, 1.5].flatMap((e) => [0, 1, 2].map((c) => run(e, c)));
    const runSets: LiveRunMemory[][] = [[], ...runChoices.map((r) => [r])];
    for (const a of runChoices) for (const b of runChoices) runSets.push([a, b]);
    const queues: number[][] = [[]];
    for (let length = 1; length <= 3; length++) {
      for (let bits = 0; bits < 2 ** length; bits++) {
        queues.push(Array.from({ length }, (_, j) => ((bits >> j) & 1 ? 2 : 0.5)));
      }
    }
    let cases = 0;
    for (const availableGb of [undefined, 0, 1, 2, 3, 4, 5, 6, 7.25]) {
      for (const bufferGb of [0, 1, 2.5]) {
        for (const runs of runSets) {
          for (const nextExpectedGb of queues) {
            const i = { availableGb, bufferGb, runs, nextExpectedGb };
            expect(reserveStarts(i).startsAllowed, JSON.stringify(i)).toBe(oracle(i));
            cases++;
          }
        }
      }
    }
    expect(cases).toBe(9 * 3 * 43 * 15);
  });
});

describe('reserveStarts properties', () => {
  const gb = fc.double({ min: 0, max: 64, noNaN: true });
  const liveRun = fc.record({ expectedGb: gb, currentGb: gb });
  const arbInput = fc.record({
    availableGb: gb,
    runs: fc.array(liveRun, { maxLength: 8 }),
    nextExpectedGb: fc.array(gb, { maxLength: 8 }),
    bufferGb: fc.double({ min: 0, max: 8, noNaN: true }),
  });
  const EPS = 1e-9;

  it('more live expectation never allows more starts', () => {
    fc.assert(
      fc.property(arbInput, fc.nat(), gb, liveRun, (i, which, extraGb, added) => {
        const before = reserveStarts(i).startsAllowed;
        if (i.runs.length > 0) {
          const index = which % i.runs.length;
          const runs = i.runs.map((r, j) => (j === index ? { ...r, expectedGb: r.expectedGb + extraGb } : r));
          expect(reserveStarts({ ...i, runs }).startsAllowed).toBeLessThanOrEqual(before);
        }
        // Another live run: it adds what it holds to the headroom but at least as much to the reservations.
        expect(reserveStarts({ ...i, runs: [...i.runs, added] }).startsAllowed).toBeLessThanOrEqual(before);
      }),
    );
  });

  it('never allows a start whose expectation exceeds the remaining headroom, and allows every one that fits', () => {
    fc.assert(
      fc.property(arbInput, (i) => {
        const { startsAllowed, explanation } = reserveStarts(i);
        expect(startsAllowed).toBeLessThanOrEqual(i.nextExpectedGb.length);
        const headroom = explanation.headroomGb as number;
        let committed = explanation.reservedGb;
        i.nextExpectedGb.forEach((expectedGb, j) => {
          committed += expectedGb;
          const fits = committed <= headroom + EPS;
          if (j >= startsAllowed) return;
          // The one exception: with nothing live, the head may start unfitted.
          if (!fits) expect(explanation.isIdleStart && i.runs.length === 0 && j === 0).toBe(true);
        });
        // Maximal: the first run held back does not fit.
        if (startsAllowed < i.nextExpectedGb.length) {
          const first = i.nextExpectedGb.slice(0, startsAllowed + 1).reduce((s, x) => s + x, 0);
          expect(explanation.reservedGb + first).toBeGreaterThan(headroom - EPS);
        }
      }),
    );
  });

  it('settling a live run at a mark no higher than its expectation never allows fewer starts', () => {
    const spreadRun = fc.record({
      expectedGb: gb,
      currentGb: gb,
      spreadGb: fc.double({ min: 0, max: 4, noNaN: true }),
    });
    fc.assert(
      fc.property(
        arbInput,
        fc.array(spreadRun, { minLength: 1, maxLength: 8 }),
        fc.nat(),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (i, runs, which, share) => {
          const index = which % runs.length;
          const target = runs[index] as LiveRunMemory;
          const settled = { ...target, settledGb: share * Math.max(target.expectedGb, target.currentGb) };
          const before = reserveStarts({ ...i, runs }).startsAllowed;
          const after = reserveStarts({ ...i, runs: runs.map((r, j) => (j === index ? settled : r)) });
          expect(after.startsAllowed).toBeGreaterThanOrEqual(before);
          expect(after.explanation.settledRuns).toBe(1);
        },
      ),
    );
  });

  it('an unknown reading lets every queued start through', () => {
    fc.assert(
      fc.property(arbInput, (i) => {
        expect(reserveStarts({ ...i, availableGb: undefined }).startsAllowed).toBe(i.nextExpectedGb.length);
      }),
    );
  });
});
