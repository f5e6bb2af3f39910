import { describe, expect, it } from 'vitest';
import { type CapInput, type CapResult, computeCap, memoryPosture } from '../../src/core/cap.js';
import { type CrewConfig, defaultConfig } from '../../src/core/config-schema.js';

function config(overrides: Partial<CrewConfig> = {}): CrewConfig {
  return { ...defaultConfig(), ...overrides };
}

interface Case {
  name: string;
  input: Omit<CapInput, 'config'> & { config?: Partial<CrewConfig> };
  expected: CapResult;
}

// Defaults: 20% buffer, auto max 32, fallback costs 0.5 GiB and 1.0 core.
const cases: Case[] = [
  {
    name: 'big host: subagent_auto_max binds',
    input: { availableGb: 256, cpuCount: 64, memCostGb: 0.5, cpuCostCores: 1 },
    expected: { cap: 32, capSource: 'auto', memTerm: 409, cpuTerm: 51 },
  },
  {
    name: 'small host: memory binds',
    input: { availableGb: 4, cpuCount: 16, memCostGb: 0.5, cpuCostCores: 1 },
    expected: { cap: 6, capSource: 'auto', memTerm: 6, cpuTerm: 12 },
  },
  {
    name: 'tiny host: memory term below the floor gives 3',
    input: { availableGb: 1, cpuCount: 16, memCostGb: 0.5, cpuCostCores: 1 },
    expected: { cap: 3, capSource: 'auto', memTerm: 1, cpuTerm: 12 },
  },
  {
    name: 'CPU-bound host',
    input: { availableGb: 64, cpuCount: 8, memCostGb: 0.5, cpuCostCores: 1 },
    expected: { cap: 6, capSource: 'auto', memTerm: 102, cpuTerm: 6 },
  },
  {
    name: 'learned cheap shared sessions reach the ceiling',
    input: { availableGb: 16, cpuCount: 8, memCostGb: 0.05, cpuCostCores: 0.1 },
    expected: { cap: 32, capSource: 'auto', memTerm: 256, cpuTerm: 64 },
  },
  {
    name: 'pool reserve: pool_size × mem_cost comes off the memory term',
    input: {
      availableGb: 8,
      cpuCount: 16,
      memCostGb: 0.5,
      cpuCostCores: 1,
      config: { 'session.pool_size': 4 },
    },
    expected: { cap: 8, capSource: 'auto', memTerm: 8, cpuTerm: 12 },
  },
  {
    name: 'a pool larger than memory leaves a term of 0 and the floor',
    input: {
      availableGb: 8,
      cpuCount: 16,
      memCostGb: 0.5,
      cpuCostCores: 1,
      config: { 'session.pool_size': 100 },
    },
    expected: { cap: 3, capSource: 'auto', memTerm: 0, cpuTerm: 12 },
  },
  {
    name: 'buffer applies to memory and CPU alike',
    input: {
      availableGb: 10,
      cpuCount: 4,
      memCostGb: 1,
      cpuCostCores: 0.5,
      config: { 'agent.subagent_mem_buffer_pct': 50 },
    },
    expected: { cap: 4, capSource: 'auto', memTerm: 5, cpuTerm: 4 },
  },
  {
    name: 'a lower ceiling',
    input: {
      availableGb: 256,
      cpuCount: 64,
      memCostGb: 0.5,
      cpuCostCores: 1,
      config: { 'agent.subagent_auto_max': 8 },
    },
    expected: { cap: 8, capSource: 'auto', memTerm: 409, cpuTerm: 51 },
  },
  {
    name: 'a ceiling below 3 is raised to 3',
    input: {
      availableGb: 256,
      cpuCount: 64,
      memCostGb: 0.5,
      cpuCostCores: 1,
      config: { 'agent.subagent_auto_max': 1 },
    },
    expected: { cap: 3, capSource: 'auto', memTerm: 409, cpuTerm: 51 },
  },
  {
    name: 'binary rounding does not lose a run that fits exactly (2 × 0.7 / 0.1 is 13.999…8 in doubles)',
    input: {
      availableGb: 100,
      cpuCount: 2,
      memCostGb: 1,
      cpuCostCores: 0.1,
      config: { 'agent.subagent_mem_buffer_pct': 30 },
    },
    expected: { cap: 14, capSource: 'auto', memTerm: 70, cpuTerm: 14 },
  },
  {
    name: 'GiB in, GiB out: 7 GiB at 20% buffer and 1.5 GiB per run fits 3',
    input: { availableGb: 7, cpuCount: 4, memCostGb: 1.5, cpuCostCores: 0.3 },
    expected: { cap: 3, capSource: 'auto', memTerm: 3, cpuTerm: 10 },
  },
  {
    name: 'pinned wins over any reading',
    input: {
      availableGb: 1,
      cpuCount: 1,
      memCostGb: 0.5,
      cpuCostCores: 1,
      config: { 'agent.max_subagents': 12 },
    },
    expected: { cap: 12, capSource: 'pinned' },
  },
  {
    name: 'pinned holds even when memory is unknown',
    input: { cpuCount: 4, memCostGb: 0.5, cpuCostCores: 1, config: { 'agent.max_subagents': 5 } },
    expected: { cap: 5, capSource: 'pinned' },
  },
  {
    name: 'a pin of 2 that got past the loader is floored at 3',
    input: {
      availableGb: 64,
      cpuCount: 16,
      memCostGb: 0.5,
      cpuCostCores: 1,
      config: { 'agent.max_subagents': 2 },
    },
    expected: { cap: 3, capSource: 'pinned' },
  },
  {
    name: 'unknown memory falls back to 3, not to the ceiling',
    input: { cpuCount: 64, memCostGb: 0.5, cpuCostCores: 1 },
    expected: { cap: 3, capSource: 'fallback', cpuTerm: 51 },
  },
  {
    name: 'unknown CPUs fall back to 3',
    input: { availableGb: 64, memCostGb: 0.5, cpuCostCores: 1 },
    expected: { cap: 3, capSource: 'fallback', memTerm: 102 },
  },
  {
    name: 'a non-finite reading is unknown',
    input: { availableGb: Number.NaN, cpuCount: 8, memCostGb: 0.5, cpuCostCores: 1 },
    expected: { cap: 3, capSource: 'fallback', cpuTerm: 6 },
  },
  {
    name: 'a zero cost cannot make the cap unbounded',
    input: { availableGb: 64, cpuCount: 8, memCostGb: 0, cpuCostCores: 1 },
    expected: { cap: 3, capSource: 'fallback' },
  },
];

describe('computeCap', () => {
  it.each(cases)('$name', ({ input, expected }) => {
    const { config: overrides, ...rest } = input;
    expect(computeCap({ ...rest, config: config(overrides) })).toEqual(expected);
  });

  it('falls back to 3 even when a pinned-looking ceiling is configured', () => {
    const result = computeCap({
      config: config({ 'agent.subagent_auto_max': 100 }),
      memCostGb: 0.5,
      cpuCostCores: 1,
    });
    expect(result).toEqual({ cap: 3, capSource: 'fallback' });
  });
});

describe('memoryPosture', () => {
  it.each([
    [undefined, 4, 'unknown'],
    [3.99, 4, 'critical'],
    [4, 4, 'low'],
    [7.99, 4, 'low'],
    [8, 4, 'ok'],
    [0, 0, 'ok'],
    [0.5, 0, 'ok'],
  ] as const)('available %s GiB with minimum %s → %s', (availableGb, minGb, posture) => {
    expect(memoryPosture(availableGb, minGb)).toBe(posture);
  });
});
