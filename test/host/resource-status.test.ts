import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/core/config-schema.js';
import type { CostSample } from '../../src/core/cost.js';
import { sizeCapAtStart } from '../../src/host/cap-at-start.js';
import { createHostProbe } from '../../src/host/create-host-probe.js';
import { resourceStatus } from '../../src/host/resource-status.js';
import { fixtureRoot } from './fixture-root.js';

function samples(agent: string, memGb: number, cpuCores: number, n: number): CostSample[] {
  return Array.from({ length: n }, (_, i) => ({ agent, mem_gb: memGb, cpu_cores: cpuCores, ts: i }));
}

describe('resourceStatus', () => {
  it('reports the fields of DESIGN §5 from the probe, the start cap and the learned costs', () => {
    const probe = createHostProbe({ hostRoot: fixtureRoot('v2-max'), platform: 'linux' });
    // The memory pause off: the memory term by the p90, as DESIGN §5 has it (with the pause: the mean).
    const config = { ...defaultConfig(), 'agent.pause_margin_gb': 0 };
    const history = [
      ...samples('sim', 0.4, 0.2, 6),
      // claude: p90 1.2, mean 0.9, sd 0.3.
      ...samples('claude', 0.6, 0.5, 3),
      ...samples('claude', 1.2, 0.5, 3),
      ...samples('new', 0.1, 0.1, 2),
    ];
    const started = sizeCapAtStart({ probe, config, samples: history });
    const status = resourceStatus({
      probe,
      minMemoryGb: config['agent.spawn_min_memory_gb'],
      cap: started.cap,
      costs: started.costs,
      basis: started.basis,
      running: 5,
      runningTopLevel: 2,
      queued: 7,
    });
    // 12 GiB × 0.8 / 1.2 (the worst p90) = 8 by memory; 4 CPUs × 0.8 / 1.0 (the unlearned agent's
    // fallback) = 3 by CPU.
    expect(status).toEqual({
      available_memory_gb: 12,
      cpu_count: 4,
      load_average: [0.52, 0.61, 0.7],
      posture: 'ok',
      cap: 3,
      cap_source: 'auto',
      mem_term: 8,
      cpu_term: 3,
      cap_basis: {
        available_memory_gb: 12,
        cpu_count: 4,
        buffer_pct: 20,
        pool_size: 0,
        floor: 3,
        ceiling: 32,
        min_samples: 5,
        pinned_by: null,
        mem_cost: { value: 1.2, from: 'p90', agent: 'claude', samples: 6 },
        cpu_cost: { value: 1, from: 'fallback', agent: 'new', samples: 2 },
      },
      learned_costs: {
        mem_cost_gb: 1.2,
        mem_mean_cost_gb: expect.closeTo(0.9, 12),
        cpu_cost_cores: 1,
        worst_mem_agent: 'claude',
        worst_cpu_agent: 'new',
        agents: {
          claude: {
            mem_gb: 1.2,
            mem_mean_gb: expect.closeTo(0.9, 12),
            mem_sd_gb: expect.closeTo(0.3, 12),
            cpu_cores: 0.5,
            samples: 6,
            learned: true,
          },
          new: { mem_gb: 0.5, mem_mean_gb: 0.5, mem_sd_gb: 0, cpu_cores: 1, samples: 2, learned: false },
          sim: {
            mem_gb: 0.4,
            mem_mean_gb: expect.closeTo(0.4, 12),
            mem_sd_gb: expect.closeTo(0, 12),
            cpu_cores: 0.2,
            samples: 6,
            learned: true,
          },
        },
      },
      running: 5,
      running_top_level: 2,
      running_nested: 3,
      queued: 7,
    });
    expect(JSON.parse(JSON.stringify(status))).toEqual(status);
  });

  it('shows unknown readings as null and the fallback cap', () => {
    const probe = createHostProbe({ hostRoot: fixtureRoot('unreadable'), platform: 'linux' });
    const config = defaultConfig();
    const started = sizeCapAtStart({ probe, config, samples: [] });
    const status = resourceStatus({
      probe,
      minMemoryGb: 4,
      cap: started.cap,
      costs: started.costs,
      running: 0,
      queued: 0,
    });
    expect(status).toMatchObject({
      available_memory_gb: null,
      posture: 'unknown',
      cap: 3,
      cap_source: 'fallback',
      mem_term: null,
      learned_costs: { mem_cost_gb: 0.5, cpu_cost_cores: 1, worst_mem_agent: null, agents: {} },
    });
  });

  it('reports a pinned cap without terms', () => {
    const probe = createHostProbe({ hostRoot: fixtureRoot('v2-limited'), platform: 'linux' });
    const config = { ...defaultConfig(), 'agent.max_subagents': 10 };
    const started = sizeCapAtStart({ probe, config, samples: [] });
    const status = resourceStatus({
      probe,
      minMemoryGb: 4,
      cap: started.cap,
      costs: started.costs,
      running: 1,
      queued: 0,
    });
    // The container has 3 GiB of headroom: below the 4 GiB gate.
    expect(status).toMatchObject({
      cap: 10,
      cap_source: 'pinned',
      mem_term: null,
      cpu_term: null,
      posture: 'critical',
    });
  });
});
