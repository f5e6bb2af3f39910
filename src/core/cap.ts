import type { CrewConfig } from './config-schema.js';
import type { LearnedCosts } from './cost.js';

/**
 * The concurrent-run cap (DESIGN §5). Pure: the host readings and the learned costs come in as numbers,
 * so the formula is tested as a table and the host adapters stay in `src/host/`.
 */

/** Bytes in one GiB: "GB" means GiB everywhere in Crew. */
export const BYTES_PER_GIB = 1024 ** 3;

/**
 * The floor of every cap. The auto cap never goes below it, a failed host read falls back to it (never to
 * a configured value), and a pin below it is raised to it.
 */
export const CAP_FLOOR = 3;

export type CapSource = 'auto' | 'pinned' | 'fallback';

export interface CapInput {
  /** Effective available memory, GiB: min(MemAvailable, cgroup headroom). Absent = the read failed. */
  availableGb?: number;
  /** CPUs this process may use. Absent = the read failed. */
  cpuCount?: number;
  config: CrewConfig;
  /** Memory cost of one run, GiB (learned p90 or `agent.subagent_cost_gb`). */
  memCostGb: number;
  /** CPU cost of one run, cores (learned p90 or `agent.subagent_cpu_cost_cores`). */
  cpuCostCores: number;
}

export interface CapResult {
  cap: number;
  capSource: CapSource;
  /** How many runs fit in memory; absent when pinned or when memory is unknown. */
  memTerm?: number;
  /** How many runs fit on the CPUs; absent when pinned or when the CPU count is unknown. */
  cpuTerm?: number;
}

function isUsable(value: number | undefined): value is number {
  return value !== undefined && Number.isFinite(value) && value >= 0;
}

function isPositive(value: number): boolean {
  return Number.isFinite(value) && value > 0;
}

/**
 * floor() that forgives binary rounding: 0.3 / 0.1 is 2.9999999999999996 in IEEE doubles, and a run
 * that fits exactly must count.
 */
function floorTerm(value: number): number {
  return Math.max(0, Math.floor(value + 1e-9));
}

/**
 * ```
 * mem_term = floor((effective_available_GB * (1 - buffer%) - pool_reserve) / mem_cost)
 * cpu_term = floor((cpu_count * (1 - buffer%)) / cpu_cost)
 * cap      = clamp(min(mem_term, cpu_term), 3, subagent_auto_max)
 * ```
 * `pool_reserve = session.pool_size × mem_cost`. A pin (`agent.max_subagents` > 0) wins and is floored
 * at 3, the loader's backstop. An unknown reading, or a cost that is not a positive number, gives the
 * fallback cap 3: a wrong input must never size the cap larger than the floor.
 */
export function computeCap(input: CapInput): CapResult {
  const { config } = input;
  const pinned = config['agent.max_subagents'];
  if (pinned > 0) return { cap: Math.max(CAP_FLOOR, pinned), capSource: 'pinned' };

  const keep = 1 - config['agent.subagent_mem_buffer_pct'] / 100;
  const costsOk = isPositive(input.memCostGb) && isPositive(input.cpuCostCores);
  const result: CapResult = { cap: CAP_FLOOR, capSource: 'fallback' };
  if (costsOk && isUsable(input.availableGb)) {
    const poolReserveGb = config['session.pool_size'] * input.memCostGb;
    // A negative term means "nothing fits"; report 0 rather than a count below zero.
    result.memTerm = floorTerm((input.availableGb * keep - poolReserveGb) / input.memCostGb);
  }
  if (costsOk && isUsable(input.cpuCount)) {
    result.cpuTerm = floorTerm((input.cpuCount * keep) / input.cpuCostCores);
  }
  if (result.memTerm === undefined || result.cpuTerm === undefined) return result;

  const ceiling = Math.max(CAP_FLOOR, config['agent.subagent_auto_max']);
  result.cap = Math.min(ceiling, Math.max(CAP_FLOOR, Math.min(result.memTerm, result.cpuTerm)));
  result.capSource = 'auto';
  return result;
}

/**
 * The `mem_cost` the gateway sizes the count cap with. Without the memory pause: the worst agent's p90 peak
 * (DESIGN §5, the seed's rule; item 6 of issue 28), the same statistic as the CPU term's: a cap by the mean
 * over-commits by design, half the runs peak above it, and nothing stops one that grows into the tail.
 * With the pause on ({@link isMemoryPauseOn}): the worst agent's mean peak. The pause stops a run that grows
 * into the tail before the host runs out, so the cap need not hold the tail; holding it cost a third of the
 * throughput on 16 GiB in capsim (docs/decisions.md, "The count cap by the mean under the pause").
 */
export function countCapMemCostGb(
  costs: Pick<LearnedCosts, 'memCostGb' | 'memMeanCostGb'>,
  options: { isPauseOn?: boolean } = {},
): number {
  return options.isPauseOn === true ? costs.memMeanCostGb : costs.memCostGb;
}

/** Whether the memory pause is on: `agent.pause_margin_gb` > 0 (every run is pausable, ACP ones too). */
export function isMemoryPauseOn(config: Pick<CrewConfig, 'agent.pause_margin_gb'>): boolean {
  return config['agent.pause_margin_gb'] > 0;
}

export type MemoryPosture = 'ok' | 'low' | 'critical' | 'unknown';

/**
 * `critical` below `minGb` (`agent.spawn_min_memory_gb`), `low` below twice that, else `ok`; `unknown`
 * when memory could not be read. A `minGb` of 0 (the gate disabled) is always `ok`.
 */
export function memoryPosture(availableGb: number | undefined, minGb: number): MemoryPosture {
  if (!isUsable(availableGb)) return 'unknown';
  if (availableGb < minGb) return 'critical';
  if (availableGb < 2 * minGb) return 'low';
  return 'ok';
}
