import { describe, expect, it } from 'vitest';
import type { HostProbe, LoadAverage, MemoryReading } from '../../src/host/host-probe.js';

/**
 * The HostProbe contract (the port's doc comment), run against every platform's probe over fixtures: a
 * reading is within its bounds or `undefined`, a failed read is `undefined` rather than a guess, and
 * `close()` may be repeated without the probe failing afterwards.
 */
export interface HostProbeCase {
  /** The host the case stands for: a fixture tree, a `vm_stat` recording, a failing reader. */
  name: string;
  create(): HostProbe;
  /** Which readings the host offers ('known') and which fail ('unknown'). */
  expect: { memory: Reading; cpuCount: Reading; loadAverage: Reading };
  /** Waits until readings that arrive asynchronously (macOS `vm_stat` rows) are in. */
  ready?(probe: HostProbe): Promise<void>;
  /** Long-lived reader processes of the last probe created that still run (none without readers). */
  liveReaders?(): number;
}

type Reading = 'known' | 'unknown';

export function describeHostProbe(platform: string, cases: HostProbeCase[]): void {
  describe(`HostProbe conformance: ${platform}`, () => {
    it('has a host with readings and one whose reads fail', () => {
      expect(cases.some((c) => c.expect.memory === 'known')).toBe(true);
      expect(cases.some((c) => c.expect.memory === 'unknown')).toBe(true);
    });

    describe.each(cases)('$name', (probeCase) => {
      async function withProbe(body: (probe: HostProbe) => void | Promise<void>): Promise<void> {
        const probe = probeCase.create();
        try {
          await probeCase.ready?.(probe);
          await body(probe);
        } finally {
          await probe.close();
        }
      }

      it(`reads memory as ${probeCase.expect.memory}: GiB, never below 0`, () =>
        withProbe((probe) => {
          const reading = probe.memory();
          checkMemory(reading);
          expect(reading.availableGb === undefined ? 'unknown' : 'known').toBe(probeCase.expect.memory);
        }));

      it(`reads the CPU count as ${probeCase.expect.cpuCount}: a whole number, at least 1`, () =>
        withProbe((probe) => {
          const cpus = probe.cpuCount();
          if (cpus !== undefined) {
            expect(Number.isInteger(cpus)).toBe(true);
            expect(cpus).toBeGreaterThanOrEqual(1);
          }
          expect(cpus === undefined ? 'unknown' : 'known').toBe(probeCase.expect.cpuCount);
        }));

      it(`reads the load average as ${probeCase.expect.loadAverage}: three numbers, never below 0`, () =>
        withProbe((probe) => {
          const load = probe.loadAverage();
          if (load !== undefined) checkLoad(load);
          expect(load === undefined ? 'unknown' : 'known').toBe(probeCase.expect.loadAverage);
        }));

      it('closes any number of times, each close resolving once readers exited, and answers after', async () => {
        const probe = probeCase.create();
        await probeCase.ready?.(probe);
        const first = probe.close();
        await probe.close(); // a second close while the first is under way
        expect(probeCase.liveReaders?.() ?? 0).toBe(0);
        await first;
        await probe.close();
        expect(probeCase.liveReaders?.() ?? 0).toBe(0);
        checkMemory(probe.memory());
        const cpus = probe.cpuCount();
        if (cpus !== undefined) expect(cpus).toBeGreaterThanOrEqual(1);
        const load = probe.loadAverage();
        if (load !== undefined) checkLoad(load);
      });
    });
  });
}

function checkMemory(reading: MemoryReading): void {
  for (const key of ['availableGb', 'memAvailableGb', 'cgroupHeadroomGb'] as const) {
    const gb = reading[key];
    if (gb === undefined) continue;
    expect(Number.isFinite(gb), `${key} = ${gb}`).toBe(true);
    expect(gb, key).toBeGreaterThanOrEqual(0);
  }
}

function checkLoad(load: LoadAverage): void {
  expect(load).toHaveLength(3);
  for (const value of load) {
    expect(Number.isFinite(value)).toBe(true);
    expect(value).toBeGreaterThanOrEqual(0);
  }
}
