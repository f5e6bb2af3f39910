import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { hostRootFromEnv } from '../../src/host/host-fs.js';
import { treeOf } from '../../src/host/process-tree.js';
import { parseCpuTime, parsePsTable } from '../../src/host/ps-table.js';
import { ProcessTreeSampler } from '../../src/host/sampler.js';

// `ps -axo pid=,ppid=,pgid=,rss=,time=,state=,lstart=` as macOS prints it.
const PS = `
    1     0     1  12000   1:02.50 Ss   Mon Nov 30 08:00:00 2026
  500     1   500  40960   0:03.25 Ss   Mon Nov 30 09:15:00 2026
  501   500   500 204800   0:10.00 R    Mon Nov 30 09:15:01 2026
  502   501   500      0   0:00.50 Z    Mon Nov 30 09:15:02 2026
  600     1   600   1024   0:00.01 S    Mon Nov 30 09:20:00 2026
garbage line
`;

describe('macOS ps table', () => {
  it('parses cumulative CPU time', () => {
    expect(parseCpuTime('0:03.25')).toBe(3.25);
    expect(parseCpuTime('12:00.00')).toBe(720);
    expect(parseCpuTime('1:02:03')).toBe(3723);
    expect(parseCpuTime('2-01:00:00')).toBe(176_400);
    expect(parseCpuTime('soon')).toBeUndefined();
  });

  it('parses rows into the shared table shape, with the process group as the session', () => {
    const table = parsePsTable(PS);
    expect([...table.keys()]).toEqual([1, 500, 501, 502, 600]);
    expect(table.get(501)).toEqual({
      pid: 501,
      ppid: 500,
      session: 500,
      startTime: Math.floor(new Date(2026, 10, 30, 9, 15, 1).getTime() / 1000),
      rssBytes: 204800 * 1024,
      cpuSecs: 10,
      state: 'R',
    });
    expect(treeOf(table, 500)).toEqual([500, 501, 502]);
  });

  it('drives the sampler: one ps read per tick for every run', async () => {
    const clock = new FakeClock();
    let reads = 0;
    const sampler = new ProcessTreeSampler({
      hostRoot: '/',
      clock,
      intervalMs: 2000,
      platform: 'darwin',
      readTable: () => {
        reads++;
        return parsePsTable(PS);
      },
    });
    sampler.track('a', 500);
    sampler.track('b', 600);
    await clock.advance(2000);
    expect(reads).toBe(1);
    expect(sampler.untrack('a')?.peakMemGb).toBe(((40960 + 204800) * 1024) / 1024 ** 3);
    expect(sampler.untrack('b')?.cpuCores).toBeCloseTo(0.01 / 2, 12);
    await sampler.close();
    expect(clock.pendingTimers()).toBe(0);
  });
});

describe('hostRootFromEnv', () => {
  it('reads CREW_HOST_ROOT, defaulting to /', () => {
    expect(hostRootFromEnv({ CREW_HOST_ROOT: '/tmp/fixture' })).toBe('/tmp/fixture');
    expect(hostRootFromEnv({ CREW_HOST_ROOT: '' })).toBe('/');
    expect(hostRootFromEnv({})).toBe('/');
  });
});
