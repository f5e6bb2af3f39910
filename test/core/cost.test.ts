import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type CostSample,
  compactSamples,
  isCostSample,
  learnCosts,
  MIN_LEARNED_CPU_CORES,
  p90,
} from '../../src/core/cost.js';

function samples(agent: string, memGb: number[], cpuCores?: number[]): CostSample[] {
  return memGb.map((mem, i) => ({
    agent,
    mem_gb: mem,
    cpu_cores: cpuCores?.[i] ?? 0.2,
    ts: 1_700_000_000 + i,
  }));
}

const options = { perAgent: 50, minSamples: 5, fallbackMemGb: 0.5, fallbackCpuCores: 1 };

describe('p90 (nearest rank)', () => {
  it.each([
    [[], undefined],
    [[7], 7],
    [[1, 2, 3, 4, 5], 5],
    [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 9],
    [[10, 9, 8, 7, 6, 5, 4, 3, 2, 1], 9],
    [Array.from({ length: 20 }, (_, i) => i + 1), 18],
    [Array.from({ length: 100 }, (_, i) => (i + 1) / 100), 0.9],
    [[0.4, 0.4, 0.4, 0.4, 0.4, 0.4, 0.4, 0.4, 0.4, 3.2], 0.4],
    [[0.4, 0.4, 0.4, 0.4, 0.4, 0.4, 0.4, 0.4, 3.2, 3.2], 3.2],
  ])('p90(%j) = %s', (values, expected) => {
    expect(p90(values)).toBe(expected);
  });

  it('is a sample with at least 90% of the samples at or below it, and is the smallest such', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 100, noNaN: true }), { minLength: 1, maxLength: 200 }),
        (xs) => {
          const q = p90(xs) as number;
          expect(xs).toContain(q);
          expect(xs.filter((x) => x <= q).length).toBeGreaterThanOrEqual(0.9 * xs.length);
          expect(xs.filter((x) => x < q).length).toBeLessThan(0.9 * xs.length);
        },
      ),
    );
  });
});

describe('compactSamples', () => {
  it('keeps the last N of each agent in file order', () => {
    const mixed = [
      ...samples('a', [1, 2, 3]),
      ...samples('b', [10]),
      ...samples('a', [4, 5]),
      ...samples('b', [20, 30]),
    ];
    const kept = compactSamples(mixed, 2);
    expect(kept.map((s) => `${s.agent}${s.mem_gb}`)).toEqual(['a4', 'a5', 'b20', 'b30']);
  });
});

describe('learnCosts', () => {
  it('uses the fallbacks with no samples', () => {
    expect(learnCosts([], options)).toEqual({
      memCostGb: 0.5,
      memMeanCostGb: 0.5,
      cpuCostCores: 1,
      perAgent: {},
    });
  });

  it('charges an agent the fallbacks until it has cost_min_samples samples', () => {
    const costs = learnCosts(samples('sim', [0.1, 0.1, 0.1, 0.1]), options);
    expect(costs.memCostGb).toBe(0.5);
    expect(costs.cpuCostCores).toBe(1);
    // No spread until learned: the fallback is a guess, not a distribution.
    expect(costs.perAgent.sim).toEqual({
      memGb: 0.5,
      memMeanGb: 0.5,
      memSdGb: 0,
      cpuCores: 1,
      samples: 4,
      learned: false,
    });
  });

  it('learns the p90 once cost_min_samples exist', () => {
    const costs = learnCosts(samples('sim', [0.1, 0.2, 0.3, 0.4, 1.2], [0.1, 0.1, 0.3, 0.2, 0.1]), options);
    // Mean 0.44; deviations −0.34 −0.24 −0.14 −0.04 0.76: variance 0.772 / 5 = 0.1544.
    expect(costs.perAgent.sim).toEqual({
      memGb: 1.2,
      memMeanGb: expect.closeTo(0.44, 12),
      memSdGb: expect.closeTo(Math.sqrt(0.1544), 12),
      cpuCores: 0.3,
      samples: 5,
      learned: true,
    });
    expect(costs).toMatchObject({
      memCostGb: 1.2,
      memMeanCostGb: expect.closeTo(0.44, 12),
      cpuCostCores: 0.3,
      worstMemAgent: 'sim',
      worstCpuAgent: 'sim',
    });
  });

  it('the count cap divides by the worst mean, which need not be the worst p90 agent', () => {
    // wide: p90 3, mean 1.08; steady: p90 1.5, mean 1.5.
    const costs = learnCosts(
      [
        ...samples('wide', [0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 3, 3]),
        ...samples('steady', [1.5, 1.5, 1.5, 1.5, 1.5]),
      ],
      options,
    );
    expect(costs).toMatchObject({ memCostGb: 3, worstMemAgent: 'wide', memMeanCostGb: 1.5 });
    expect(costs.perAgent.steady?.memSdGb).toBe(0);
  });

  it('clamps each CPU sample to cpuCount: a tree cannot use more CPUs than the host has', () => {
    const costs = learnCosts(samples('sim', [0.2, 0.2, 0.2, 0.2, 0.2], [0.2, 0.2, 0.2, 0.2, 4.2]), {
      ...options,
      cpuCount: 2,
    });
    expect(costs.perAgent.sim?.cpuCores).toBe(2);
    expect(costs.cpuCostCores).toBe(2);
    // Without a CPU count the sample stands.
    expect(
      learnCosts(samples('sim', [0.2, 0.2, 0.2, 0.2, 0.2], [0.2, 0.2, 0.2, 0.2, 4.2]), options).cpuCostCores,
    ).toBe(4.2);
  });

  it('takes the worst agent for memory and for CPU separately', () => {
    const costs = learnCosts(
      [
        ...samples('heavy', [2, 2, 2, 2, 2], [0.1, 0.1, 0.1, 0.1, 0.1]),
        ...samples('busy', [0.3, 0.3, 0.3, 0.3, 0.3], [2, 2, 2, 2, 2]),
      ],
      options,
    );
    expect(costs).toMatchObject({
      memCostGb: 2,
      cpuCostCores: 2,
      worstMemAgent: 'heavy',
      worstCpuAgent: 'busy',
    });
  });

  it('an agent not yet learned pulls the cost up to the fallback', () => {
    const costs = learnCosts(
      [...samples('cheap', [0.1, 0.1, 0.1, 0.1, 0.1]), ...samples('new', [0.1])],
      options,
    );
    expect(costs.memCostGb).toBe(0.5);
    expect(costs.worstMemAgent).toBe('new');
  });

  it('uses only the last N samples of an agent', () => {
    const old = samples('sim', Array(20).fill(3));
    const recent = samples('sim', Array(10).fill(0.25));
    expect(learnCosts([...old, ...recent], { ...options, perAgent: 10 }).memCostGb).toBe(0.25);
  });

  it('never learns a cost of zero (a run too short for the CPU clock)', () => {
    const costs = learnCosts(samples('idle', [0.2, 0.2, 0.2, 0.2, 0.2], [0, 0, 0, 0, 0]), options);
    expect(costs.cpuCostCores).toBe(MIN_LEARNED_CPU_CORES);
  });
});

describe('isCostSample', () => {
  it.each([
    [{ agent: 'a', mem_gb: 0.1, cpu_cores: 0.2, ts: 1 }, true],
    [{ agent: '', mem_gb: 0.1, cpu_cores: 0.2, ts: 1 }, false],
    [{ agent: 'a', mem_gb: -1, cpu_cores: 0.2, ts: 1 }, false],
    [{ agent: 'a', mem_gb: 0.1, cpu_cores: Number.POSITIVE_INFINITY, ts: 1 }, false],
    [{ agent: 'a', mem_gb: '0.1', cpu_cores: 0.2, ts: 1 }, false],
    [null, false],
  ])('%j → %s', (value, expected) => {
    expect(isCostSample(value)).toBe(expected);
  });
});
