import { type CapResult, computeCap, countCapMemCostGb } from '../core/cap.js';
import type { CrewConfig } from '../core/config-schema.js';
import { type CostSample, type LearnedCosts, learnCosts } from '../core/cost.js';
import type { HostProbe, MemoryReading } from './host-probe.js';

export interface StartupCap {
  cap: CapResult;
  costs: LearnedCosts;
  /** The readings the cap was sized from. */
  memory: MemoryReading;
  cpuCount: number | undefined;
}

/** The learned costs under this config's bounds and fallbacks. */
export function learnCostsFor(samples: readonly CostSample[], config: CrewConfig): LearnedCosts {
  return learnCosts(samples, {
    perAgent: config['agent.cost_samples_per_agent'],
    minSamples: config['agent.cost_min_samples'],
    fallbackMemGb: config['agent.subagent_cost_gb'],
    fallbackCpuCores: config['agent.subagent_cpu_cost_cores'],
  });
}

/**
 * What the reservation gate expects of each agent's runs, for the sampler's memory sample: the learned mean
 * peak and the peaks' standard deviation (an agent not yet learned: the fallback and no spread).
 */
export function gateCosts(costs: LearnedCosts): {
  expectedGb: Record<string, number>;
  spreadGb: Record<string, number>;
} {
  const agents = Object.entries(costs.perAgent);
  return {
    expectedGb: Object.fromEntries(agents.map(([agent, cost]) => [agent, cost.memMeanGb])),
    spreadGb: Object.fromEntries(agents.map(([agent, cost]) => [agent, cost.memSdGb])),
  };
}

/**
 * Sizes the cap once, at gateway start (DESIGN §5): host readings from the probe, costs learned from
 * the sample log. A pinned cap skips nothing here: the readings still feed `crew resources`.
 */
export function sizeCapAtStart(input: {
  probe: Pick<HostProbe, 'memory' | 'cpuCount'>;
  config: CrewConfig;
  samples: readonly CostSample[];
}): StartupCap {
  const costs = learnCostsFor(input.samples, input.config);
  const memory = input.probe.memory();
  const cpuCount = input.probe.cpuCount();
  const capInput: Parameters<typeof computeCap>[0] = {
    config: input.config,
    memCostGb: countCapMemCostGb(costs),
    cpuCostCores: costs.cpuCostCores,
  };
  if (memory.availableGb !== undefined) capInput.availableGb = memory.availableGb;
  if (cpuCount !== undefined) capInput.cpuCount = cpuCount;
  return { cap: computeCap(capInput), costs, memory, cpuCount };
}
