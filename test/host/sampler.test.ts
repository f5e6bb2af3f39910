import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { CPU_PEAK_WINDOW_TICKS, ProcessTreeSampler, SETTLE_TICKS } from '../../src/host/sampler.js';
import { copyFixture, writeAuxv16k250 } from './fixture-root.js';

const GiB = 1024 ** 3;
const PAGE = 16384;
const HZ = 250;

/** Field offsets after the comm's closing `)`: rest[i] is proc(5) field i + 3. */
const FIELD = { utime: 11, stime: 12, starttime: 19, rss: 21 } as const;

function rewriteStat(root: string, pid: number, changes: Partial<Record<keyof typeof FIELD, number>>): void {
  const path = join(root, `proc/${pid}/stat`);
  const line = readFileSync(path, 'utf8').trimEnd();
  const cut = line.lastIndexOf(')') + 1;
  const rest = line.slice(cut).trim().split(' ');
  for (const [name, value] of Object.entries(changes))
    rest[FIELD[name as keyof typeof FIELD]] = String(value);
  writeFileSync(path, `${line.slice(0, cut)} ${rest.join(' ')}\n`);
}

describe('ProcessTreeSampler on a fixture /proc', () => {
  let root: string;
  let dispose: () => void;
  let clock: FakeClock;
  let sampler: ProcessTreeSampler;

  beforeEach(() => {
    ({ root, dispose } = copyFixture('proc-tree'));
    writeAuxv16k250(root);
    clock = new FakeClock();
    sampler = new ProcessTreeSampler({ hostRoot: root, clock, intervalMs: 2000, platform: 'linux' });
  });

  afterEach(async () => {
    await sampler.close();
    expect(clock.pendingTimers()).toBe(0);
    dispose();
  });

  // Tree of 100: 100 (1000 pages), 101 `a b)` (2000), 102 `(x)` (500), 103 zombie (0), 104 orphan in the
  // session (250). CPU ticks: 750 + 150 + 50 + 50 + 10.
  const treePages = 1000 + 2000 + 500 + 0 + 250;
  const treeTicks = 750 + 150 + 50 + 50 + 10;

  it('sums the tree each tick with the auxv units, and charges the CPU over the observed life', async () => {
    sampler.track('r1', 100, 5000);
    expect(sampler.peek('r1')).toBeUndefined();
    await clock.advance(2000);
    expect(sampler.peek('r1')).toEqual({
      peakMemGb: (treePages * PAGE) / GiB,
      cpuCores: expect.closeTo(treeTicks / HZ / 2, 12),
    });
  });

  it('keeps the RSS high-water mark across ticks', async () => {
    sampler.track('r1', 100, 5000);
    rewriteStat(root, 101, { rss: 6000 });
    await clock.advance(2000);
    rewriteStat(root, 101, { rss: 100 });
    await clock.advance(2000);
    const usage = sampler.untrack('r1');
    expect(usage?.peakMemGb).toBe(((treePages + 4000) * PAGE) / GiB);
  });

  it('reports each run’s current RSS after every tick (the reservation gate’s input), not the high-water mark', async () => {
    const seen: Record<string, number>[] = [];
    await sampler.close();
    sampler = new ProcessTreeSampler({
      hostRoot: root,
      clock,
      intervalMs: 2000,
      platform: 'linux',
      onTick: (current) => seen.push(current),
    });
    sampler.track('r1', 100, 5000);
    rewriteStat(root, 101, { rss: 6000 });
    await clock.advance(2000);
    rewriteStat(root, 101, { rss: 100 });
    await clock.advance(2000);
    expect(seen).toEqual([
      { r1: ((treePages + 4000) * PAGE) / GiB },
      { r1: ((treePages - 1900) * PAGE) / GiB },
    ]);
    expect(sampler.currentGb()).toEqual(seen[1]);
  });

  it('catches PID reuse between two ticks: the new process is not charged', async () => {
    sampler.track('r1', 100, 5000);
    await clock.advance(2000);
    // Run 100 ended and an unrelated process got pid 100: bigger, and born later.
    rewriteStat(root, 100, { starttime: 9000, rss: 500_000, utime: 100_000 });
    await clock.advance(2000);
    expect(sampler.untrack('r1')).toEqual({
      peakMemGb: (treePages * PAGE) / GiB,
      cpuCores: expect.closeTo(treeTicks / HZ / 2, 12),
    });
  });

  it('pins the identity when the runner gave no start time', async () => {
    sampler.track('r1', 100);
    rewriteStat(root, 100, { starttime: 9000 });
    await clock.advance(2000);
    expect(sampler.untrack('r1')).toBeUndefined();
  });

  it('charges each session of a shared runtime its share of the runtime', async () => {
    // Runtime 200 (700 pages, 100 ticks) with child 201 (900 pages, 100 ticks).
    sampler.track('s1', 200, 900, { sharedGroup: 'rt' });
    sampler.track('s2', 200, 900, { sharedGroup: 'rt' });
    await clock.advance(2000);
    const half = ((700 + 900) * PAGE) / GiB / 2;
    // The first tick only sets the baseline: CPU the runtime spent before these sessions is not theirs.
    expect(sampler.peek('s1')).toEqual({ peakMemGb: half, cpuCores: 0 });
    rewriteStat(root, 200, { utime: 50 + 2 * HZ });
    await clock.advance(2000);
    // 2 CPU-seconds over 4 s, split between 2 sessions.
    expect(sampler.peek('s1')).toEqual({ peakMemGb: half, cpuCores: expect.closeTo(1 / 4, 12) });
    expect(sampler.untrack('s2')).toEqual({ peakMemGb: half, cpuCores: expect.closeTo(1 / 4, 12) });
    // One session left: it now carries the whole runtime.
    rewriteStat(root, 200, { utime: 50 + 3 * HZ });
    await clock.advance(2000);
    expect(sampler.untrack('s1')).toEqual({ peakMemGb: half * 2, cpuCores: expect.closeTo((1 + 1) / 6, 12) });
  });

  it('answers undefined for a run no tick saw, and the timer stops with the last run', async () => {
    sampler.track('r1', 100, 5000);
    expect(clock.pendingTimers()).toBe(1);
    expect(sampler.untrack('r1')).toBeUndefined();
    expect(clock.pendingTimers()).toBe(0);
    expect(sampler.untrack('r1')).toBeUndefined();
  });

  it('keeps the last reading of a tree that exited', async () => {
    sampler.track('r1', 100, 5000);
    await clock.advance(2000);
    for (const pid of [100, 101, 102, 103, 104]) rmSync(join(root, `proc/${pid}`), { recursive: true });
    await clock.advance(2000);
    expect(sampler.untrack('r1')?.peakMemGb).toBe((treePages * PAGE) / GiB);
  });

  it('reports a run settled at its high-water mark once that has not risen for SETTLE_TICKS ticks', async () => {
    const settled: Record<string, number>[] = [];
    await sampler.close();
    sampler = new ProcessTreeSampler({
      hostRoot: root,
      clock,
      intervalMs: 2000,
      platform: 'linux',
      onTick: (_current, settledGb) => settled.push(settledGb),
    });
    expect(SETTLE_TICKS).toBe(3);
    sampler.track('r1', 100, 5000);
    rewriteStat(root, 101, { rss: 6000 });
    await clock.advance(2000); // the first tick: the mark rises from nothing
    const mark = ((treePages + 4000) * PAGE) / GiB;
    rewriteStat(root, 101, { rss: 100 });
    await clock.advance(2000); // below the mark: one tick without a rise
    rewriteStat(root, 101, { rss: 6000 });
    await clock.advance(2000); // back to the mark, not above: two
    expect(settled).toEqual([{}, {}, {}]);
    await clock.advance(2000); // three: settled at the mark, not at what it holds
    expect(settled.at(-1)).toEqual({ r1: mark });
    expect(sampler.settledGb()).toEqual({ r1: mark });
    rewriteStat(root, 101, { rss: 6001 });
    await clock.advance(2000); // a new mark: growing again, and the count starts over
    expect(settled.at(-1)).toEqual({});
    await clock.advance(3 * 2000);
    expect(settled.at(-1)).toEqual({ r1: ((treePages + 4001) * PAGE) / GiB });
  });

  describe('CPU: the peak over a window of CPU_PEAK_WINDOW_TICKS ticks, not the mean over the run', () => {
    // Pid 100 does all the work here (HZ ticks per CPU-second); the rest of the tree holds 1.04 s from the start.

    async function ticks(n: number, addTicksEach = 0): Promise<void> {
      for (let i = 0; i < n; i++) {
        utime += addTicksEach;
        rewriteStat(root, 100, { utime });
        await clock.advance(2000);
      }
    }
    let utime = 0;

    beforeEach(() => {
      utime = 0;
      rewriteStat(root, 100, { utime, stime: 0 });
    });

    it('a busy-then-idle run is charged its busy phase, not its average', async () => {
      expect(CPU_PEAK_WINDOW_TICKS).toBe(3);
      sampler.track('r1', 100, 5000);
      await ticks(1);
      await ticks(3, 2 * HZ); // 6 s at one core
      await ticks(30); // then a minute idle
      // The mean over 68 s would be (1.04 + 6) / 68 = 0.1 cores; the busy window is 6 s at 1 core.
      expect(sampler.untrack('r1')?.cpuCores).toBeCloseTo(1, 12);
    });

    it('a one-tick burst is spread over the window: it does not set the peak alone', async () => {
      sampler.track('r1', 100, 5000);
      await ticks(3);
      await ticks(1, 4 * HZ); // 2 cores for one 2 s tick
      await ticks(10);
      expect(sampler.untrack('r1')?.cpuCores).toBeCloseTo(4 / 6, 12);
    });

    it('never charges more cores than the host has', async () => {
      await sampler.close();
      sampler = new ProcessTreeSampler({
        hostRoot: root,
        clock,
        intervalMs: 2000,
        platform: 'linux',
        cpuCount: 2,
      });
      sampler.track('r1', 100, 5000);
      await ticks(1);
      // A reaped child's 30 CPU-seconds land in its parent's cutime in one tick: 5 cores over the window.
      await ticks(1, 30 * HZ);
      await ticks(3);
      expect(sampler.untrack('r1')?.cpuCores).toBe(2);
    });
  });

  it('reads the process table once per tick for all runs', async () => {
    let reads = 0;
    const counting = new ProcessTreeSampler({
      hostRoot: root,
      clock,
      intervalMs: 2000,
      readTable: () => {
        reads++;
        return new Map();
      },
    });
    for (let i = 0; i < 10; i++) counting.track(`r${i}`, 100 + i, undefined, {});
    await clock.advance(6000);
    expect(reads).toBe(3);
    await counting.close();
  });
});
