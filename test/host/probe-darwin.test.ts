import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { createDarwinProbe } from '../../src/host/probe-darwin.js';
import { createWin32Probe } from '../../src/host/probe-win32.js';

const GiB = 1024 ** 3;

/** A stand-in `vm_stat 1` that prints a banner, a header and one row, then waits to be killed. */
const FAKE_VM_STAT = `
process.stdout.write('Mach Virtual Memory Statistics: (page size of 16384 bytes)\\n');
process.stdout.write('    free   active   specul inactive throttle    wired  prgable   faults\\n');
process.stdout.write('  131072   100000    65536   262144        0    50000     65536  123456K\\n');
setInterval(() => {}, 1000);
`;

async function until(predicate: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('macOS probe', () => {
  it('reads available memory from one long-lived vm_stat reader, then stops it', async () => {
    const clock = new FakeClock();
    const probe = createDarwinProbe({
      clock,
      availableParallelism: () => 8,
      command: [process.execPath, '-e', FAKE_VM_STAT],
      freeBytes: () => 1 * GiB,
    });
    // Before the first row: os.freemem().
    expect(probe.memory().availableGb).toBe(1);
    const expectedGb = ((131072 + 262144 + 65536 + 65536) * 16384) / GiB;
    await until(() => probe.memory().availableGb === expectedGb);
    expect(expectedGb).toBe(8);
    expect(probe.cpuCount()).toBe(8);
    await probe.close();
    expect(probe.memory().availableGb).toBe(1);
  });

  it('falls back to os.freemem() when the reading goes stale', async () => {
    const clock = new FakeClock();
    const probe = createDarwinProbe({
      clock,
      availableParallelism: () => 8,
      command: [process.execPath, '-e', FAKE_VM_STAT],
      freeBytes: () => 2 * GiB,
    });
    await until(() => probe.memory().availableGb === 8);
    await clock.advance(3001);
    expect(probe.memory().availableGb).toBe(2);
    await probe.close();
  });

  it('leaves no reader process behind after close', async () => {
    const pids: number[] = [];
    const script = `process.stdout.write(String(process.pid) + '\\n'); setInterval(() => {}, 1000);`;
    const probe = createDarwinProbe({
      clock: new FakeClock(),
      availableParallelism: () => 1,
      command: [process.execPath, '-e', `${script}`],
      freeBytes: () => GiB,
    });
    // The reader prints its pid as a "row" the parser ignores; find it through the process table instead.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const { execFileSync } = await import('node:child_process');
    for (const line of execFileSync('ps', ['-eo', 'pid=,ppid=']).toString().split('\n')) {
      const [pid, ppid] = line.trim().split(/\s+/).map(Number);
      if (ppid === process.pid && pid !== undefined) pids.push(pid);
    }
    expect(pids.length).toBeGreaterThan(0);
    await probe.close();
    for (const pid of pids) expect(isAlive(pid)).toBe(false);
  });

  it('keeps working on os.freemem() when vm_stat cannot start', async () => {
    const probe = createDarwinProbe({
      clock: new FakeClock(),
      availableParallelism: () => 2,
      command: ['/nonexistent/vm_stat', '1'],
      freeBytes: () => 3 * GiB,
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(probe.memory().availableGb).toBe(3);
    await probe.close();
  });
});

describe('Windows probe', () => {
  it('reads os.freemem() and reports no load average', async () => {
    const probe = createWin32Probe({ availableParallelism: () => 0, freeBytes: () => 6 * GiB });
    expect(probe.memory().availableGb).toBe(6);
    expect(probe.cpuCount()).toBe(1);
    expect(probe.loadAverage()).toBeUndefined();
    await probe.close();
  });
});
