/**
 * The learned per-run cost (DESIGN §5): the p90 of each agent's last N samples, then the worst agent.
 * Pure: the sample log on disk lives in `src/host/cost-samples.ts`.
 */

/** One line of `$CREW_HOME/subagents/cost_samples.jsonl`: a finished run's high-water marks. */
export interface CostSample {
  agent: string;
  /** Peak process-tree RSS over the run, GiB. */
  mem_gb: number;
  /**
   * Peak CPU over the run, cores: the highest rate over any window of `CPU_PEAK_WINDOW_TICKS` sampler ticks
   * (`src/host/sampler.ts`), never more than the host's CPUs. Samples written before issue 28 hold the
   * run's mean, which undercharges a busy-then-idle run; they age out of the last N.
   */
  cpu_cores: number;
  /** When the run ended, epoch seconds. */
  ts: number;
}

/**
 * The smallest cost a learned p90 is allowed to be. A run that never showed up on a tick of the CPU
 * clock (or a shared session's tiny share) would otherwise learn a cost of 0 and an unbounded term; these
 * floors are the sampler's resolution: one 4 KiB page and one 100 Hz tick per second.
 */
export const MIN_LEARNED_MEM_GB = 4096 / 1024 ** 3;
export const MIN_LEARNED_CPU_CORES = 0.01;

/** A well-formed sample: a named agent, finite non-negative usage, a finite time. */
export function isCostSample(value: unknown): value is CostSample {
  if (value === null || typeof value !== 'object') return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.agent === 'string' &&
    v.agent.length > 0 &&
    isFiniteNonNegative(v.mem_gb) &&
    isFiniteNonNegative(v.cpu_cores) &&
    typeof v.ts === 'number' &&
    Number.isFinite(v.ts)
  );
}

function isFiniteNonNegative(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

/**
 * The 90th percentile by nearest rank: the smallest sample with at least 90% of the samples at or below
 * it. Nearest rank always answers an observed value and never interpolates below a real outlier, which
 * keeps the cost conservative for small N. `undefined` for no samples.
 */
export function p90(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil(0.9 * sorted.length);
  return sorted[rank - 1];
}

function mean(values: readonly number[]): number {
  let total = 0;
  for (const value of values) total += value;
  return values.length === 0 ? 0 : total / values.length;
}

/** Population standard deviation (the samples are the whole window the gate learns from). */
export function standardDeviation(values: readonly number[]): number {
  const m = mean(values);
  return Math.sqrt(mean(values.map((value) => (value - m) ** 2)));
}

/** Keeps the last `perAgent` samples of each agent, in their original order (FIFO per agent). */
export function compactSamples(samples: readonly CostSample[], perAgent: number): CostSample[] {
  const seen = new Map<string, number>();
  const kept: CostSample[] = [];
  for (let i = samples.length - 1; i >= 0; i--) {
    const sample = samples[i] as CostSample;
    const count = seen.get(sample.agent) ?? 0;
    if (count >= perAgent) continue;
    seen.set(sample.agent, count + 1);
    kept.push(sample);
  }
  return kept.reverse();
}

export interface AgentCost {
  /** The p90 peak, GiB. */
  memGb: number;
  /** The mean peak, GiB: what the reservation gate expects of one run. The fallback until learned. */
  memMeanGb: number;
  /** The peaks' standard deviation, GiB: the reservation gate's spread. 0 until learned. */
  memSdGb: number;
  cpuCores: number;
  /** Samples considered (at most N). */
  samples: number;
  /** False while the agent has fewer than `agent.cost_min_samples` samples: it is charged the fallbacks. */
  learned: boolean;
}

export interface LearnedCosts {
  /** The worst agent's p90 peak, or the fallback with no samples. */
  memCostGb: number;
  /** The worst agent's mean peak, or the fallback with no samples (what the reservation gate expects). */
  memMeanCostGb: number;
  cpuCostCores: number;
  perAgent: Record<string, AgentCost>;
  /** The agent whose memory cost was chosen; absent when the fallback was (no samples at all). */
  worstMemAgent?: string;
  worstCpuAgent?: string;
}

export interface CostOptions {
  /** `agent.cost_samples_per_agent`. */
  perAgent: number;
  /** `agent.cost_min_samples`. */
  minSamples: number;
  /** `agent.subagent_cost_gb`. */
  fallbackMemGb: number;
  /** `agent.subagent_cpu_cost_cores`. */
  fallbackCpuCores: number;
  /**
   * The host's CPUs: each CPU sample is clamped to it, since no tree can use more. A sample above it is a
   * measurement artefact (a reaped child's time landing in one tick) or came from a larger host, and one
   * such sample would otherwise be the p90 of a short log. Absent (unknown): samples stand as written.
   */
  cpuCount?: number;
}

/**
 * Each agent's cost is the p90 of its last N samples once it has `minSamples` of them, else the
 * fallbacks (an agent not yet learned is assumed to cost what an unknown agent costs); the divisor is the
 * worst agent for memory and, separately, the worst for CPU. No samples at all: the fallbacks. The mean
 * peak and its spread come with it, for the reservation gate and the gated count cap.
 */
export function learnCosts(samples: readonly CostSample[], options: CostOptions): LearnedCosts {
  const byAgent = new Map<string, CostSample[]>();
  for (const sample of compactSamples(samples, options.perAgent)) {
    const list = byAgent.get(sample.agent) ?? [];
    list.push(sample);
    byAgent.set(sample.agent, list);
  }
  const { cpuCount } = options;
  const clampCores = (cores: number) =>
    cpuCount !== undefined && Number.isFinite(cpuCount) && cpuCount > 0 ? Math.min(cores, cpuCount) : cores;
  const result: LearnedCosts = {
    memCostGb: options.fallbackMemGb,
    memMeanCostGb: options.fallbackMemGb,
    cpuCostCores: options.fallbackCpuCores,
    perAgent: {},
  };
  let worstMem = Number.NEGATIVE_INFINITY;
  let worstMean = Number.NEGATIVE_INFINITY;
  let worstCpu = Number.NEGATIVE_INFINITY;
  for (const [agent, list] of [...byAgent].sort(([a], [b]) => a.localeCompare(b))) {
    const learned = list.length >= options.minSamples;
    const peaks = list.map((s) => s.mem_gb);
    const cost: AgentCost = learned
      ? {
          memGb: Math.max(MIN_LEARNED_MEM_GB, p90(peaks) ?? 0),
          memMeanGb: Math.max(MIN_LEARNED_MEM_GB, mean(peaks)),
          memSdGb: standardDeviation(peaks),
          cpuCores: Math.max(MIN_LEARNED_CPU_CORES, p90(list.map((s) => clampCores(s.cpu_cores))) ?? 0),
          samples: list.length,
          learned,
        }
      : {
          memGb: options.fallbackMemGb,
          memMeanGb: options.fallbackMemGb,
          memSdGb: 0,
          cpuCores: options.fallbackCpuCores,
          samples: list.length,
          learned,
        };
    if (cost.memMeanGb > worstMean) {
      worstMean = cost.memMeanGb;
      result.memMeanCostGb = cost.memMeanGb;
    }
    result.perAgent[agent] = cost;
    if (cost.memGb > worstMem) {
      worstMem = cost.memGb;
      result.memCostGb = cost.memGb;
      result.worstMemAgent = agent;
    }
    if (cost.cpuCores > worstCpu) {
      worstCpu = cost.cpuCores;
      result.cpuCostCores = cost.cpuCores;
      result.worstCpuAgent = agent;
    }
  }
  return result;
}
