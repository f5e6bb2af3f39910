import { CAP_FLOOR, type CapResult, computeCap, countCapMemCostGb, isMemoryPauseOn } from '../core/cap.js';
import type { CrewConfig } from '../core/config-schema.js';
import { type AgentCost, type CostSample, type LearnedCosts, learnCosts } from '../core/cost.js';
import type { HostProbe, MemoryReading } from './host-probe.js';

/** Where one divisor of the cap came from: an agent's learned p90, or the configured fallback. */
export interface CapCostBasis {
  /** The divisor: GiB for memory, cores for CPU. */
  value: number;
  /**
   * `p90`: the agent's p90 over `samples` runs; `mean`: its mean peak (the memory term while the memory
   * pause is on); `fallback`: the config key, the agent (if any) not learned yet.
   */
  from: 'p90' | 'mean' | 'fallback';
  /** The worst agent, whose cost was taken; null when no agent has a sample. */
  agent: string | null;
  /** That agent's samples considered. */
  samples: number;
}

/**
 * What the cap was sized from (`crew resources` says it in words): the readings at start, the config
 * that shapes the formula, and where each cost came from. Wire names are snake_case like the rest of
 * `resource_status`.
 */
export interface CapBasis {
  available_memory_gb: number | null;
  cpu_count: number | null;
  buffer_pct: number;
  pool_size: number;
  floor: number;
  ceiling: number;
  /** `agent.cost_min_samples`: the runs an agent needs before its p90 replaces the fallbacks. */
  min_samples: number;
  /** The key that pinned the cap, when it is pinned. */
  pinned_by: 'agent.max_subagents' | 'cluster.host_cap' | null;
  mem_cost: CapCostBasis;
  cpu_cost: CapCostBasis;
}

export interface StartupCap {
  cap: CapResult;
  costs: LearnedCosts;
  /** The readings the cap was sized from. */
  memory: MemoryReading;
  cpuCount: number | undefined;
  basis: CapBasis;
}

/**
 * The learned costs under this config's bounds and fallbacks; each CPU sample clamped to `cpuCount`
 * (the host's CPUs) when it is known.
 */
export function learnCostsFor(
  samples: readonly CostSample[],
  config: CrewConfig,
  cpuCount?: number,
): LearnedCosts {
  return learnCosts(samples, {
    perAgent: config['agent.cost_samples_per_agent'],
    minSamples: config['agent.cost_min_samples'],
    fallbackMemGb: config['agent.subagent_cost_gb'],
    fallbackCpuCores: config['agent.subagent_cpu_cost_cores'],
    ...(cpuCount !== undefined && { cpuCount }),
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

function costBasis(
  value: number,
  agent: string | undefined,
  cost: AgentCost | undefined,
  statistic: 'p90' | 'mean' = 'p90',
): CapCostBasis {
  return {
    value,
    from: cost?.learned ? statistic : 'fallback',
    agent: agent ?? null,
    samples: cost?.samples ?? 0,
  };
}

/**
 * Sizes the cap once, at gateway start (DESIGN §5): host readings from the probe, costs learned from
 * the sample log (CPU samples clamped to the CPUs read). A pinned cap skips nothing here: the readings
 * still feed `crew resources`.
 */
export function sizeCapAtStart(input: {
  probe: Pick<HostProbe, 'memory' | 'cpuCount'>;
  config: CrewConfig;
  samples: readonly CostSample[];
}): StartupCap {
  const { config } = input;
  const memory = input.probe.memory();
  const cpuCount = input.probe.cpuCount();
  const costs = learnCostsFor(input.samples, config, cpuCount);
  // With the memory pause on the memory term divides by the worst mean peak: the pause holds the tail
  // (command runs and ACP runs on their own process pause, D-325); with it off, by the worst p90 (D-332).
  const isPauseOn = isMemoryPauseOn(config);
  const memCostGb = countCapMemCostGb(costs, { isPauseOn });
  const capInput: Parameters<typeof computeCap>[0] = {
    config,
    memCostGb,
    cpuCostCores: costs.cpuCostCores,
  };
  if (memory.availableGb !== undefined) capInput.availableGb = memory.availableGb;
  if (cpuCount !== undefined) capInput.cpuCount = cpuCount;
  const memAgent = isPauseOn ? worstMeanAgent(costs) : costs.worstMemAgent;
  const cpuAgent = costs.worstCpuAgent;
  const basis: CapBasis = {
    available_memory_gb: memory.availableGb ?? null,
    cpu_count: cpuCount ?? null,
    buffer_pct: config['agent.subagent_mem_buffer_pct'],
    pool_size: config['session.pool_size'],
    floor: CAP_FLOOR,
    ceiling: Math.max(CAP_FLOOR, config['agent.subagent_auto_max']),
    min_samples: config['agent.cost_min_samples'],
    pinned_by: config['agent.max_subagents'] > 0 ? 'agent.max_subagents' : null,
    mem_cost: costBasis(
      memCostGb,
      memAgent,
      memAgent === undefined ? undefined : costs.perAgent[memAgent],
      isPauseOn ? 'mean' : 'p90',
    ),
    cpu_cost: costBasis(
      costs.cpuCostCores,
      cpuAgent,
      cpuAgent === undefined ? undefined : costs.perAgent[cpuAgent],
    ),
  };
  return { cap: computeCap(capInput), costs, memory, cpuCount, basis };
}

/** The agent with the highest mean peak (the count cap's memory divisor while the pause is on). */
function worstMeanAgent(costs: LearnedCosts): string | undefined {
  let worst: string | undefined;
  for (const [agent, cost] of Object.entries(costs.perAgent)) {
    if (worst === undefined || cost.memMeanGb > (costs.perAgent[worst]?.memMeanGb ?? 0)) worst = agent;
  }
  return worst;
}
