import type { CapResult, CapSource, MemoryPosture } from '../core/cap.js';
import { memoryPosture } from '../core/cap.js';
import type { LearnedCosts } from '../core/cost.js';
import type { CapBasis } from './cap-at-start.js';
import type { HostProbe, LoadAverage, MemoryReading } from './host-probe.js';

/**
 * `resource_status` / `crew resources --json` / `resourceStatus()` (DESIGN §5). Wire names are
 * snake_case like every other wire shape; a reading that failed is `null` rather than missing, so a
 * reader can tell "unknown" from "not reported".
 */
export interface ResourceStatus {
  available_memory_gb: number | null;
  cpu_count: number | null;
  load_average: LoadAverage | null;
  posture: MemoryPosture;
  /** The cap sized at start; it changes only on restart. */
  cap: number;
  cap_source: CapSource;
  mem_term: number | null;
  cpu_term: number | null;
  /** What the cap was sized from, to say why it is what it is; null when the caller did not keep it. */
  cap_basis: CapBasis | null;
  learned_costs: {
    /** The memory term's divisor: the worst agent's p90 peak, or the fallback. */
    mem_cost_gb: number;
    /** The worst agent's mean peak, or the fallback: what the reservation gate expects of a run. */
    mem_mean_cost_gb: number;
    /** The CPU term's divisor: the worst agent's p90, or the fallback. */
    cpu_cost_cores: number;
    worst_mem_agent: string | null;
    worst_cpu_agent: string | null;
    /** Per agent: p90 peak, mean peak and spread (what the reservation gate expects), p90 cores. */
    agents: Record<
      string,
      {
        mem_gb: number;
        mem_mean_gb: number;
        mem_sd_gb: number;
        cpu_cores: number;
        samples: number;
        learned: boolean;
      }
    >;
  };
  /** Runs starting or running, nested ones included. */
  running: number;
  /** Of `running`, the top-level runs (each holds one of the `cap` permits). */
  running_top_level: number;
  /** Of `running`, the nested runs (under their top-level ancestor's permit). */
  running_nested: number;
  queued: number;
}

export interface ResourceStatusInput {
  /** Live readings; pass the memory gate's cached reading as `memory` to share its cache. */
  probe: Pick<HostProbe, 'cpuCount' | 'loadAverage'> & { memory(): MemoryReading };
  /** `agent.spawn_min_memory_gb`, for the posture. */
  minMemoryGb: number;
  cap: CapResult;
  costs: LearnedCosts;
  /** What the cap was sized from (`StartupCap.basis`). */
  basis?: CapBasis;
  running: number;
  /** Of `running`, the top-level runs; the rest are nested. @default running */
  runningTopLevel?: number;
  queued: number;
}

/** The resource status now: live readings from the probe, the cap and costs fixed at start. */
export function resourceStatus(input: ResourceStatusInput): ResourceStatus {
  const availableGb = input.probe.memory().availableGb;
  const agents: ResourceStatus['learned_costs']['agents'] = {};
  for (const [name, cost] of Object.entries(input.costs.perAgent)) {
    agents[name] = {
      mem_gb: cost.memGb,
      mem_mean_gb: cost.memMeanGb,
      mem_sd_gb: cost.memSdGb,
      cpu_cores: cost.cpuCores,
      samples: cost.samples,
      learned: cost.learned,
    };
  }
  return {
    available_memory_gb: availableGb ?? null,
    cpu_count: input.probe.cpuCount() ?? null,
    load_average: input.probe.loadAverage() ?? null,
    posture: memoryPosture(availableGb, input.minMemoryGb),
    cap: input.cap.cap,
    cap_source: input.cap.capSource,
    mem_term: input.cap.memTerm ?? null,
    cpu_term: input.cap.cpuTerm ?? null,
    cap_basis: input.basis ?? null,
    learned_costs: {
      mem_cost_gb: input.costs.memCostGb,
      mem_mean_cost_gb: input.costs.memMeanCostGb,
      cpu_cost_cores: input.costs.cpuCostCores,
      worst_mem_agent: input.costs.worstMemAgent ?? null,
      worst_cpu_agent: input.costs.worstCpuAgent ?? null,
      agents,
    },
    running: input.running,
    running_top_level: input.runningTopLevel ?? input.running,
    running_nested: input.running - (input.runningTopLevel ?? input.running),
    queued: input.queued,
  };
}
