import { describe, expect, it } from 'vitest';
import { aliveOf, listingsOf, RegistryWatch } from '../../src/cluster/dead-gateways.js';

const entry = (at: number, runs: string[]) => JSON.stringify({ cap: 2, running: runs.length, runs, at });

describe('aliveOf', () => {
  it('names the gateways whose entries are at most the stalled interval old, and the reader itself', () => {
    const entries = {
      me: entry(0, ['r0']),
      silent: entry(1000, ['r1', 'r2']),
      justInTime: entry(3000, ['r3']),
      idle: entry(0, []),
      fresh: entry(4900, []),
    };
    // At 5000 with a 2000 ms interval: `silent` is 4000 ms old; `justInTime` exactly 2000 (not older).
    expect(aliveOf(entries, 'me', 5000, 2000)).toEqual(['me', 'justInTime', 'fresh']);
    expect(aliveOf(entries, 'me', 5001, 2000)).toEqual(['me', 'fresh']);
  });

  it('always names the reading gateway, however old or absent its own entry; a gateway with no entry is not alive', () => {
    expect(aliveOf({ me: entry(0, ['r0']) }, 'me', 1_000_000, 2000)).toEqual(['me']);
    expect(aliveOf({}, 'me', 5000, 2000)).toEqual(['me']);
    expect(aliveOf({ other: 'not json' }, 'me', 5000, 2000)).toEqual(['me']);
  });
});

describe('listingsOf', () => {
  it('tells whether a fresh entry lists the run (alive) and which stale ones do (presumed dead)', () => {
    const entries = {
      forwarder: entry(1000, ['turn']),
      session: entry(4500, ['turn', 'other']),
      late: entry(0, ['other']),
    };
    expect(listingsOf(entries, 'turn', 5000, 2000)).toEqual({ fresh: true, stale: ['forwarder'] });
    expect(listingsOf(entries, 'other', 5000, 2000)).toEqual({ fresh: true, stale: ['late'] });
    expect(listingsOf(entries, 'other', 7000, 2000)).toEqual({ fresh: false, stale: ['session', 'late'] });
    expect(listingsOf(entries, 'unknown', 5000, 2000)).toEqual({ fresh: false, stale: [] });
  });
});

describe('RegistryWatch', () => {
  it('judges only after reads have run without a gap for the settle time', () => {
    const watch = new RegistryWatch(1000, 1000);
    expect(watch.read(0)).toBe(false);
    expect(watch.read(500)).toBe(false);
    expect(watch.read(1000)).toBe(true);
    expect(watch.read(1500)).toBe(true);
  });

  it('after a gap (Redis paused, or this gateway stalled) it waits the settle time again', () => {
    const watch = new RegistryWatch(1000, 1000);
    for (const now of [0, 500, 1000]) watch.read(now);
    // 1001 ms without a read: every entry may look old although its gateway lives.
    expect(watch.read(2001)).toBe(false);
    expect(watch.read(2500)).toBe(false);
    expect(watch.read(3001)).toBe(true);
    // A gap of exactly the bound is not one.
    expect(watch.read(4001)).toBe(true);
  });
});
