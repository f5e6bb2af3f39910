import type { LearnedCosts } from '../core/cost.js';
import { type StartupCap, sizeCapAtStart } from '../host/cap-at-start.js';
import { CostSampleLog, costSamplesPath } from '../host/cost-samples.js';
import { createHostProbe } from '../host/create-host-probe.js';
import type { HostProbe } from '../host/host-probe.js';
import { MemoryGate } from '../host/memory-gate.js';
import { ProcessTreeSampler } from '../host/sampler.js';
import type { DaemonBase } from './daemon-parts.js';

/** Each run's and each agent's memory now, GiB, per sampler tick. */
export type MemoryTick = (currentGb: Record<string, number>, settledGb: Record<string, number>) => void;

export interface HostParts {
  /** `CREW_HOST_ROOT` (a fixture root in tests), else `/`. */
  hostRoot: string;
  probe: HostProbe;
  costLog: CostSampleLog;
  /** The cap sized at start, from this host's memory and CPUs and the agents' learned costs. */
  startup: StartupCap;
  gate: MemoryGate;
  sampler: ProcessTreeSampler;
  /** The costs learned so far: relearned at each run end. */
  learned: LearnedCosts;
  /** Set once the gateway exists: each tick feeds its reservation gate. */
  onMemory?: MemoryTick;
}

/** The host's probe, the cap sized at start, the memory gate and the process-tree sampler. */
export function openHost(base: DaemonBase): HostParts {
  const { config, clock, env, cleanups } = base;
  const hostRoot = env.CREW_HOST_ROOT ?? '/';
  const probe = createHostProbe({ hostRoot, clock });
  cleanups.add(() => probe.close());
  const costLog = new CostSampleLog({
    path: costSamplesPath(base.crewHome),
    perAgent: config['agent.cost_samples_per_agent'],
  });
  const startup = sizeCapAtStart({ probe, config, samples: costLog.read() });
  const gate = new MemoryGate({ probe, clock, minGb: config['agent.spawn_min_memory_gb'] });
  // Each tick feeds the reservation gate: what each run holds now, against what its agent is expected to.
  const sampler = new ProcessTreeSampler({
    hostRoot,
    clock,
    intervalMs: config['host.sample_interval_secs'] * 1000,
    ...(startup.cpuCount !== undefined && { cpuCount: startup.cpuCount }),
    onTick: (currentGb, settledGb) => parts.onMemory?.(currentGb, settledGb),
  });
  cleanups.add(() => sampler.close());
  const parts: HostParts = { hostRoot, probe, costLog, startup, gate, sampler, learned: startup.costs };
  return parts;
}
