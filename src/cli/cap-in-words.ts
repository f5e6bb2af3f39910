import type { CapBasis, CapCostBasis } from '../host/cap-at-start.js';
import type { ResourceStatus } from '../host/resource-status.js';

/**
 * `crew resources` says why the cap is what it is, from the `cap_basis` the cap was sized with:
 * `cap 4 = min(memory 6: 11.2 GiB free × 80% ÷ 1.5 GiB per run (p90 of 12 runs of agent X), CPU 4: …)`.
 * `--json` keeps the object; this is only its reading.
 */
export function capInWords(
  status: Pick<ResourceStatus, 'cap' | 'cap_source' | 'mem_term' | 'cpu_term' | 'cap_basis'>,
): string {
  const basis = status.cap_basis;
  if (status.cap_source === 'pinned')
    return `cap ${status.cap}: pinned by ${basis?.pinned_by ?? 'agent.max_subagents'}`;
  if (basis === null) return `cap ${status.cap} (${status.cap_source})`;
  if (status.cap_source === 'fallback' || status.mem_term === null || status.cpu_term === null) {
    const unknown = [
      ...(basis.available_memory_gb === null ? ['available memory'] : []),
      ...(basis.cpu_count === null ? ['the CPU count'] : []),
    ];
    const why =
      unknown.length > 0 ? `${unknown.join(' and ')} could not be read` : 'a cost was not a positive number';
    return `cap ${status.cap}: the fallback, since ${why}`;
  }
  const keep = `${formatNumber(100 - basis.buffer_pct)}%`;
  const free = `${formatNumber(basis.available_memory_gb ?? 0)} GiB free × ${keep}`;
  const poolGb = basis.pool_size * basis.mem_cost.value;
  const memory =
    basis.pool_size > 0
      ? `(${free} − ${formatNumber(poolGb)} GiB for a warm pool of ${basis.pool_size})`
      : free;
  const memTerm = `memory ${status.mem_term}: ${memory} ÷ ${formatNumber(basis.mem_cost.value)} GiB per run (${costSource(basis, basis.mem_cost, 'agent.subagent_cost_gb')})`;
  const cpuTerm = `CPU ${status.cpu_term}: ${basis.cpu_count} CPUs × ${keep} ÷ ${cores(basis.cpu_cost.value)} per run (${costSource(basis, basis.cpu_cost, 'agent.subagent_cpu_cost_cores')})`;
  const least = Math.min(status.mem_term, status.cpu_term);
  const clamp =
    least < basis.floor
      ? `, raised to the floor of ${basis.floor}`
      : least > basis.ceiling
        ? `, held at agent.subagent_auto_max ${basis.ceiling}`
        : '';
  return `cap ${status.cap} = min(${memTerm}, ${cpuTerm})${clamp}`;
}

/** One line per agent: its learned costs, or why it is still charged the fallbacks. */
export function learnedCostsInWords(status: Pick<ResourceStatus, 'learned_costs' | 'cap_basis'>): string[] {
  const minSamples = status.cap_basis?.min_samples;
  return Object.entries(status.learned_costs.agents).map(([agent, cost]) =>
    cost.learned
      ? `${agent}: ${formatNumber(cost.mem_gb)} GiB and ${cores(cost.cpu_cores)} per run (p90 of ${runs(cost.samples)}; mean peak ${formatNumber(cost.mem_mean_gb)} GiB, sd ${formatNumber(cost.mem_sd_gb)} GiB)`
      : `${agent}: not learned yet (${cost.samples}${minSamples === undefined ? '' : ` of ${minSamples}`} runs), charged the fallbacks ${formatNumber(cost.mem_gb)} GiB and ${cores(cost.cpu_cores)}`,
  );
}

function costSource(basis: CapBasis, cost: CapCostBasis, key: string): string {
  if (cost.from === 'p90') return `p90 of ${runs(cost.samples)} of agent ${cost.agent}`;
  if (cost.from === 'mean') {
    return `mean peak of ${runs(cost.samples)} of agent ${cost.agent}; the memory pause, agent.pause_margin_gb, holds the tail`;
  }
  if (cost.agent === null) return `${key}: no agent has ${basis.min_samples} runs yet`;
  return `${key}: agent ${cost.agent} has ${cost.samples} of ${basis.min_samples} runs`;
}

function runs(n: number): string {
  return `${n} run${n === 1 ? '' : 's'}`;
}

function cores(n: number): string {
  return `${formatNumber(n)} core${n === 1 ? '' : 's'}`;
}

/** At most two decimals, without trailing zeros: 12, 1.5, 0.33. */
function formatNumber(n: number): string {
  return String(Number(n.toFixed(2)));
}
