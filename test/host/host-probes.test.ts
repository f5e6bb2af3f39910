import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { createHostProbe } from '../../src/host/create-host-probe.js';
import type { HostProbe } from '../../src/host/host-probe.js';
import { createDarwinProbe } from '../../src/host/probe-darwin.js';
import { createWin32Probe } from '../../src/host/probe-win32.js';
import { pollFor } from '../helpers/daemon-process.js';
import { fixtureRoot } from './fixture-root.js';
import { describeHostProbe, type HostProbeCase } from './host-probe-conformance.js';

const GiB = 1024 ** 3;

function linuxCase(
  name: string,
  expect: HostProbeCase['expect'],
  hostRoot = fixtureRoot(name),
): HostProbeCase {
  return {
    name: `cgroup fixture ${name}`,
    create: () => createHostProbe({ hostRoot, platform: 'linux', availableParallelism: () => 64 }),
    expect,
  };
}

const known = { memory: 'known', cpuCount: 'known', loadAverage: 'known' } as const;

describeHostProbe('linux', [
  linuxCase('v2-limited', known),
  linuxCase('v2-max', known),
  linuxCase('v2-parent-tighter', known),
  linuxCase('v2-page-cache', known),
  linuxCase('v2-cpu-tiny-quota', known),
  linuxCase('v1-limited', known),
  linuxCase('v1-no-limit', known),
  linuxCase('hybrid', known),
  linuxCase('no-cgroupns', known),
  linuxCase('unreadable', { ...known, memory: 'unknown' }),
  linuxCase('v2-usage-unreadable', { ...known, memory: 'unknown' }),
  linuxCase('proc-tree', { memory: 'unknown', cpuCount: 'unknown', loadAverage: 'unknown' }),
  linuxCase(
    'missing root',
    { memory: 'unknown', cpuCount: 'unknown', loadAverage: 'unknown' },
    '/nonexistent/crew-host',
  ),
]);

/**
 * A stand-in for `vm_stat 1` that prints a recorded `vm_stat` output, notes its pid so the case can tell
 * whether it still runs, then waits to be killed.
 */
function darwinCase(
  name: string,
  recording: string,
  options: { freeBytes: number; expect: HostProbeCase['expect']; stall?: boolean },
): HostProbeCase {
  let pidFile = '';
  let readerPid: number | undefined;
  let clock = new FakeClock();
  const script = (pidPath: string) => `
    const fs = require('node:fs');
    fs.writeFileSync(${JSON.stringify(pidPath)}, String(process.pid));
    process.stdout.write(fs.readFileSync(${JSON.stringify(join(fixtureRoot('darwin'), recording))}, 'utf8'));
    setInterval(() => {}, 1000);`;
  return {
    name,
    create() {
      const dir = mkdtempSync(join(tmpdir(), 'crew-vm-stat-'));
      pidFile = join(dir, 'pid');
      readerPid = undefined;
      clock = new FakeClock();
      const probe = createDarwinProbe({
        clock,
        availableParallelism: () => 8,
        command: [process.execPath, '-e', script(pidFile)],
        freeBytes: () => options.freeBytes,
      });
      return withCleanup(probe, () => rmSync(dir, { recursive: true, force: true }));
    },
    expect: options.expect,
    async ready(probe) {
      // The first row is in once memory reads something other than the os.freemem() fallback.
      await pollFor('the first vm_stat row', () =>
        probe.memory().availableGb !== toGb(options.freeBytes) ? true : undefined,
      );
      readerPid = Number(readFileSync(pidFile, 'utf8')); // written before the row
      if (options.stall) await clock.advance(3001); // three intervals without a row: stale
    },
    liveReaders: () => (readerPid !== undefined && isAlive(readerPid) ? 1 : 0),
  };
}

describeHostProbe('darwin', [
  darwinCase('vm_stat, 16 KiB pages', 'vm-stat-16k.txt', { freeBytes: GiB, expect: known }),
  darwinCase('vm_stat, the older 4 KiB layout', 'vm-stat-4k-legacy.txt', { freeBytes: GiB, expect: known }),
  darwinCase('vm_stat stalled, os.freemem() failing', 'vm-stat-16k.txt', {
    freeBytes: Number.NaN,
    stall: true,
    expect: { ...known, memory: 'unknown' },
  }),
  {
    name: 'vm_stat cannot start, os.freemem() failing',
    create: () =>
      createDarwinProbe({
        clock: new FakeClock(),
        availableParallelism: () => 0,
        command: ['/nonexistent/vm_stat', '1'],
        freeBytes: () => -1,
      }),
    expect: { ...known, memory: 'unknown' },
  },
]);

describeHostProbe('win32', [
  {
    name: 'os.freemem() reads',
    create: () => createWin32Probe({ availableParallelism: () => 6, freeBytes: () => 6 * GiB }),
    expect: { ...known, loadAverage: 'unknown' },
  },
  {
    name: 'os.freemem() fails, no CPUs reported',
    create: () => createWin32Probe({ availableParallelism: () => 0, freeBytes: () => Number.NaN }),
    expect: { memory: 'unknown', cpuCount: 'known', loadAverage: 'unknown' },
  },
]);

function toGb(bytes: number): number | undefined {
  return Number.isFinite(bytes) && bytes >= 0 ? bytes / GiB : undefined;
}

function withCleanup(probe: HostProbe, cleanup: () => void): HostProbe {
  return {
    ...probe,
    close: async () => {
      await probe.close();
      cleanup();
    },
  };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
