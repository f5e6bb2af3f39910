import { describe, expect, it } from 'vitest';
import { capInWords, learnedCostsInWords } from '../../src/cli/cap-in-words.js';
import { type CrewConfig, defaultConfig } from '../../src/core/config-schema.js';
import type { CostSample } from '../../src/core/cost.js';
import { sizeCapAtStart } from '../../src/host/cap-at-start.js';
import { createHostProbe } from '../../src/host/create-host-probe.js';
import { resourceStatus } from '../../src/host/resource-status.js';
import { fixtureRoot } from '../host/fixture-root.js';

function samples(agent: string, memGb: number[], cpuCores: number[]): CostSample[] {
  return memGb.map((mem_gb, i) => ({ agent, mem_gb, cpu_cores: cpuCores[i] ?? 0.1, ts: i }));
}

/** `crew resources` as it would answer on a fixture host (12 GiB free, 4 CPUs) with this history. */
function statusOf(history: CostSample[], overrides: Partial<CrewConfig> = {}, fixture = 'v2-max') {
  const probe = createHostProbe({ hostRoot: fixtureRoot(fixture), platform: 'linux' });
  const config = { ...defaultConfig(), ...overrides };
  const started = sizeCapAtStart({ probe, config, samples: history });
  return resourceStatus({
    probe,
    minMemoryGb: config['agent.spawn_min_memory_gb'],
    cap: started.cap,
    costs: started.costs,
    basis: started.basis,
    running: 0,
    queued: 0,
  });
}

const twelveRuns = (agent: string, memGb: number, cpuCores: number) =>
  samples(agent, Array(12).fill(memGb), Array(12).fill(cpuCores));

describe('crew resources says why the cap is what it is', () => {
  it('names both terms, their inputs, and the agent and samples each cost came from', () => {
    // Without the memory pause the memory term divides by the p90 (with it, by the mean: below).
    const status = statusOf([...twelveRuns('claude', 1.5, 0.2), ...twelveRuns('sim', 0.2, 0.4)], {
      'agent.pause_margin_gb': 0,
    });
    // 12 × 0.8 / 1.5 = 6.4 → 6 by memory; 4 × 0.8 / 0.4 = 8 by CPU.
    expect(capInWords(status)).toBe(
      'cap 6 = min(memory 6: 12 GiB free × 80% ÷ 1.5 GiB per run (p90 of 12 runs of agent claude), ' +
        'CPU 8: 4 CPUs × 80% ÷ 0.4 cores per run (p90 of 12 runs of agent sim))',
    );
  });

  it('with the memory pause on (the default) divides memory by the worst mean peak, and says the pause holds the tail', () => {
    // claude: mean 1.2, p90 2; sim: mean 0.2. 12 × 0.8 / 1.2 = 8 by memory (by the p90 it would be 4).
    const claude = samples('claude', [...Array(8).fill(0.8), ...Array(4).fill(2)], Array(12).fill(0.1));
    const status = statusOf([...claude, ...twelveRuns('sim', 0.2, 0.1)]);
    expect(capInWords(status)).toContain(
      'memory 8: 12 GiB free × 80% ÷ 1.2 GiB per run (mean peak of 12 runs of agent claude; the memory ' +
        'pause, agent.pause_margin_gb, holds the tail)',
    );
    // The worst mean, not the worst p90: here a steady agent has the higher mean, a spiky one the higher p90.
    const spiky = samples('spiky', [...Array(10).fill(0.2), ...Array(2).fill(3)], Array(12).fill(0.1));
    const steady = twelveRuns('steady', 1, 0.1);
    expect(capInWords(statusOf([...spiky, ...steady]))).toContain(
      'memory 9: 12 GiB free × 80% ÷ 1 GiB per run (mean peak of 12 runs of agent steady;',
    );
  });

  it('says when the floor or the ceiling decided, and when a cost is still the fallback', () => {
    const floor = statusOf(twelveRuns('big', 4, 0.1), { 'agent.pause_margin_gb': 0 });
    expect(capInWords(floor)).toBe(
      'cap 3 = min(memory 2: 12 GiB free × 80% ÷ 4 GiB per run (p90 of 12 runs of agent big), ' +
        'CPU 32: 4 CPUs × 80% ÷ 0.1 cores per run (p90 of 12 runs of agent big)), raised to the floor of 3',
    );
    const ceiling = statusOf([], { 'agent.subagent_auto_max': 4, 'agent.subagent_cpu_cost_cores': 0.1 });
    expect(capInWords(ceiling)).toBe(
      'cap 4 = min(memory 19: 12 GiB free × 80% ÷ 0.5 GiB per run (agent.subagent_cost_gb: no agent has 5 runs yet), ' +
        'CPU 32: 4 CPUs × 80% ÷ 0.1 cores per run (agent.subagent_cpu_cost_cores: no agent has 5 runs yet)), ' +
        'held at agent.subagent_auto_max 4',
    );
    const young = statusOf(samples('new', [0.1, 0.1], [0.1, 0.1]));
    expect(capInWords(young)).toContain(
      '0.5 GiB per run (agent.subagent_cost_gb: agent new has 2 of 5 runs)',
    );
  });

  it('takes the warm pool off the memory term', () => {
    const status = statusOf(twelveRuns('sim', 1, 0.2), { 'session.pool_size': 2 });
    // (12 × 0.8 − 2 × 1) / 1 = 7.6 → 7.
    expect(capInWords(status)).toMatch(
      /^cap 7 = min\(memory 7: \(12 GiB free × 80% − 2 GiB for a warm pool of 2\) ÷ 1 GiB per run/,
    );
  });

  it('says a pinned cap is pinned, and a fallback cap why', () => {
    expect(capInWords(statusOf([], { 'agent.max_subagents': 8 }))).toBe(
      'cap 8: pinned by agent.max_subagents',
    );
    expect(capInWords(statusOf([], {}, 'unreadable'))).toBe(
      'cap 3: the fallback, since available memory could not be read',
    );
  });

  it('lists each agent’s learned costs in words', () => {
    const status = statusOf([...twelveRuns('claude', 1.5, 0.2), ...samples('new', [0.1, 0.1], [0.1, 0.1])]);
    expect(learnedCostsInWords(status)).toEqual([
      'claude: 1.5 GiB and 0.2 cores per run (p90 of 12 runs; mean peak 1.5 GiB, sd 0 GiB)',
      'new: not learned yet (2 of 5 runs), charged the fallbacks 0.5 GiB and 1 core',
    ]);
  });
});
