import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { computeCap } from '../../src/core/cap.js';
import { defaultConfig } from '../../src/core/config-schema.js';
import { sizeCapAtStart } from '../../src/host/cap-at-start.js';
import { createHostProbe } from '../../src/host/create-host-probe.js';
import { copyFixture, fixtureRoot } from './fixture-root.js';

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

function probeOf(name: string, parallelism = 64) {
  return createHostProbe({
    hostRoot: fixtureRoot(name),
    platform: 'linux',
    availableParallelism: () => parallelism,
  });
}

describe('Linux probe on fixture trees', () => {
  it.each([
    // name, effective available GiB, MemAvailable GiB, cgroup headroom GiB (undefined = no limit)
    ['v2-limited', 3, 16, 3],
    ['v2-max', 12, 12, undefined],
    ['v1-limited', 1, 30, 1],
    ['v1-no-limit', 6, 6, undefined],
    ['hybrid', 5, 8, 5],
    ['v2-parent-tighter', 0.75, 32, 0.75],
    [
      'v2-page-cache',
      (4 * GiB - (Math.trunc(3.9 * GiB) - 3 * GiB)) / GiB,
      16,
      (4 * GiB - (Math.trunc(3.9 * GiB) - 3 * GiB)) / GiB,
    ],
    ['no-cgroupns', (3 * GiB - (GiB - 512 * MiB)) / GiB, 60, 2.5],
    ['v2-cpu-tiny-quota', 16, 16, undefined],
  ] as const)('%s: available %s GiB', async (name, availableGb, memAvailableGb, headroomGb) => {
    const probe = probeOf(name);
    const reading = probe.memory();
    expect(reading.availableGb).toBeCloseTo(availableGb, 9);
    expect(reading.memAvailableGb).toBeCloseTo(memAvailableGb, 9);
    if (headroomGb === undefined) expect(reading.cgroupHeadroomGb).toBeUndefined();
    else expect(reading.cgroupHeadroomGb).toBeCloseTo(headroomGb, 9);
    await probe.close();
  });

  it('subtracts inactive_file: page cache filling memory.current is not pressure', () => {
    // Without the subtraction the headroom would be 0.1 GiB and the cap would sit on the floor.
    expect(probeOf('v2-page-cache').memory().availableGb).toBeGreaterThan(3);
  });

  it.each([
    ['v2-limited', 8],
    ['v2-cpu-quota', 2],
    ['v2-cpu-tiny-quota', 1],
    ['v1-limited', 1],
    ['v1-no-limit', 4],
    ['hybrid', 4],
    ['no-cgroupns', 4],
  ] as const)('%s: %s CPUs', (name, cpus) => {
    expect(probeOf(name).cpuCount()).toBe(cpus);
  });

  it('uses os.availableParallelism() when Cpus_allowed_list cannot be read, still clamped by quota', () => {
    const copy = copyFixture('v2-cpu-quota');
    try {
      rmSync(join(copy.root, 'proc/self/status'));
      const probe = (parallelism: number) =>
        createHostProbe({ hostRoot: copy.root, platform: 'linux', availableParallelism: () => parallelism });
      expect(probe(1).cpuCount()).toBe(1);
      expect(probe(6).cpuCount()).toBe(2);
    } finally {
      copy.dispose();
    }
  });

  it('reads the CPU count as unknown when a quota cannot be parsed', () => {
    const copy = copyFixture('v2-cpu-quota');
    try {
      writeFileSync(join(copy.root, 'sys/fs/cgroup/app.scope/cpu.max'), 'lots\n');
      expect(createHostProbe({ hostRoot: copy.root, platform: 'linux' }).cpuCount()).toBeUndefined();
    } finally {
      copy.dispose();
    }
  });

  it('reads the load average', () => {
    expect(probeOf('v2-limited').loadAverage()).toEqual([0.52, 0.61, 0.7]);
  });

  it('reads unknown when meminfo cannot be read, and the cap falls back to 3', () => {
    const probe = probeOf('unreadable');
    expect(probe.memory()).toEqual({ availableGb: undefined });
    const sized = sizeCapAtStart({ probe, config: defaultConfig(), samples: [] });
    expect(sized.cap).toMatchObject({ cap: 3, capSource: 'fallback' });
  });

  it('reads unknown when a limited level hides its usage', () => {
    expect(probeOf('v2-usage-unreadable').memory().availableGb).toBeUndefined();
  });

  it('reads unknown for a host root that does not exist', () => {
    const probe = createHostProbe({
      hostRoot: '/nonexistent/crew-host',
      platform: 'linux',
      availableParallelism: () => 4,
    });
    expect(probe.memory().availableGb).toBeUndefined();
    expect(probe.cpuCount()).toBeUndefined();
    expect(probe.loadAverage()).toBeUndefined();
  });

  it('sizes the cap from a limited container, not from the host', () => {
    const sized = sizeCapAtStart({ probe: probeOf('v2-limited'), config: defaultConfig(), samples: [] });
    // 3 GiB × 0.8 / 0.5 = 4 by memory; 8 CPUs × 0.8 / 1 = 6 by CPU.
    expect(sized.cap).toEqual(
      computeCap({ availableGb: 3, cpuCount: 8, config: defaultConfig(), memCostGb: 0.5, cpuCostCores: 1 }),
    );
    expect(sized.cap).toEqual({ cap: 4, capSource: 'auto', memTerm: 4, cpuTerm: 6 });
  });

  it('sizes the memory term by the learned p90 peak with the memory pause off, by the mean peak with it on', () => {
    // Peaks 0.2 ×8 and 2 ×2: p90 (rank 9 of 10) is 2, the mean 0.56.
    const peaks = [0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 2, 2];
    const samples = peaks.map((mem_gb, ts) => ({ agent: 'sim', mem_gb, cpu_cores: 0.1, ts }));
    const noPause = { ...defaultConfig(), 'agent.pause_margin_gb': 0 };
    const sized = sizeCapAtStart({ probe: probeOf('v2-limited'), config: noPause, samples });
    expect(sized.costs).toMatchObject({ memCostGb: 2, memMeanCostGb: expect.closeTo(0.56, 12) });
    // 3 GiB × 0.8 / 2 = 1.2 → 1 by memory, raised to the floor 3.
    expect(sized.cap).toMatchObject({ cap: 3, capSource: 'auto', memTerm: 1 });
    expect(sized.basis.mem_cost).toMatchObject({ from: 'p90', value: 2 });
    // The pause on (the default) holds the tail, so the cap need not: 3 GiB × 0.8 / 0.56 = 4.3 → 4.
    const paused = sizeCapAtStart({ probe: probeOf('v2-limited'), config: defaultConfig(), samples });
    expect(paused.cap).toMatchObject({ cap: 4, memTerm: 4 });
    expect(paused.basis.mem_cost).toMatchObject({
      from: 'mean',
      agent: 'sim',
      value: expect.closeTo(0.56, 12),
    });
  });

  it('clamps each learned CPU sample to the CPUs the host has', () => {
    // One sample of 12 cores on an 8-CPU host (a reaped child's time landing at once) with four at 0.5.
    const cores = [0.5, 0.5, 0.5, 0.5, 12];
    const samples = cores.map((cpu_cores, ts) => ({ agent: 'sim', mem_gb: 0.2, cpu_cores, ts }));
    const sized = sizeCapAtStart({ probe: probeOf('v2-limited', 8), config: defaultConfig(), samples });
    expect(sized.costs.cpuCostCores).toBe(8);
    expect(sized.costs.perAgent.sim?.cpuCores).toBe(8);
  });

  it('reads this machine under the real root without failing', async () => {
    const probe = createHostProbe({ platform: 'linux' });
    expect(probe.memory().availableGb).toBeGreaterThan(0);
    expect(probe.cpuCount()).toBeGreaterThanOrEqual(1);
    await probe.close();
  });
});
