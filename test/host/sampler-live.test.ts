import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { readProcStat } from '../../src/host/process-tree.js';
import { ProcessTreeSampler } from '../../src/host/sampler.js';

const MiB = 1024 ** 2;
const GiB = 1024 ** 3;

/** Allocates and touches (fills with 1s, so every page is resident) `mib` MiB, says so, then idles. */
function nodeHolding(mib: number): ChildProcess {
  const script = `
    const held = Buffer.alloc(${mib} * 1024 * 1024, 1);
    process.stdout.write('ready ' + held.length + '\\n');
    setInterval(() => {}, 60_000);
  `;
  return spawn(process.execPath, ['-e', script], { detached: true, stdio: ['ignore', 'pipe', 'inherit'] });
}

async function ready(child: ChildProcess): Promise<void> {
  child.stdout?.setEncoding('utf8');
  let seen = '';
  for await (const chunk of child.stdout as AsyncIterable<string>) {
    seen += chunk;
    if (seen.includes('ready')) return;
  }
  throw new Error('child exited before it was ready');
}

describe('ProcessTreeSampler on real processes', () => {
  const children: ChildProcess[] = [];

  afterEach(async () => {
    for (const child of children) {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit');
        process.kill(-(child.pid as number), 'SIGKILL');
        await exited;
      }
    }
    children.length = 0;
  });

  it('sees a 300 MiB allocation: high-water within 15% of 300 MiB plus an idle node', async () => {
    const idle = nodeHolding(0);
    const big = nodeHolding(300);
    children.push(idle, big);
    await Promise.all([ready(idle), ready(big)]);

    const clock = new FakeClock();
    const sampler = new ProcessTreeSampler({ hostRoot: '/', clock, intervalMs: 60_000 });
    try {
      for (const child of [idle, big]) {
        const pid = child.pid as number;
        sampler.track(`run-${pid}`, pid, readProcStat('/', pid)?.starttime);
      }
      for (let i = 0; i < 3; i++) {
        await clock.advance(1000);
        await sampler.sampleNow();
      }
      const idleGb = sampler.untrack(`run-${idle.pid}`)?.peakMemGb ?? 0;
      const bigGb = sampler.untrack(`run-${big.pid}`)?.peakMemGb ?? 0;
      const expectedGb = (300 * MiB) / GiB + idleGb;
      expect(idleGb).toBeGreaterThan((10 * MiB) / GiB);
      expect(Math.abs(bigGb - expectedGb)).toBeLessThanOrEqual(0.15 * expectedGb);
    } finally {
      await sampler.close();
    }
    expect(clock.pendingTimers()).toBe(0);
  });
});
