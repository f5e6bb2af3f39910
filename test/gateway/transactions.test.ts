import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DeliveredEvent } from '../../src/gateway/relay.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { type FakeWorld, fakeWorld, planFromTask } from '../helpers/fake-gateway.js';

/**
 * DESIGN §3 and issue 12 §3: a durable run is cheap. Counted by the store itself (`stats().transactions`)
 * through a real gateway on a real SQLite file: a single spawn costs at most 4 write transactions
 * (admitted and launched; started with its pid; ended with its result and event; delivered), a wave
 * member about 2 (its start and its end; the wave's admission and its digest's settle are shared).
 */
describe('SQLite transactions per run, counted by the store', () => {
  let dir: string;
  let world: FakeWorld | undefined;

  afterEach(async () => {
    await world?.gateway.close();
    world?.store.close();
    world = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  function open(): { world: FakeWorld; delivered: DeliveredEvent[] } {
    dir = mkdtempSync(join(tmpdir(), 'crew-tx-'));
    const store = new SqliteStore(join(dir, 'crew.db'));
    // Each run reports a process identity at start, as a dedicated agent does: the pid is written too.
    world = fakeWorld({
      store,
      cap: 8,
      plan: (request) => ({ ...planFromTask(request), pid: { pid: 4242, startTime: 99 } }),
    });
    const delivered: DeliveredEvent[] = [];
    world.gateway.attachSink('cli:tx', {
      deliver: async (event) => {
        delivered.push(event);
      },
    });
    return { world, delivered };
  }

  it('a single spawn costs at most 4, from admission to delivery', async () => {
    const { world, delivered } = open();
    const before = world.store.stats().transactions;
    for (let i = 0; i < 10; i++) {
      const r = world.gateway.spawn('cli:tx', { task: `sleep=100 task ${i}` });
      expect(r.ok).toBe(true);
    }
    await world.clock.advance(1000);
    expect(delivered).toHaveLength(10);
    const records = world.store.runs({ limit: 100 });
    expect(records.every((r) => r.run.status === 'completed' && r.delivery === 'delivered')).toBe(true);
    expect(records.every((r) => r.pid === 4242 && r.startTime === 99)).toBe(true);
    expect(records.every((r) => r.resultPath !== undefined && r.resultChars !== undefined)).toBe(true);
    const perRun = (world.store.stats().transactions - before) / 10;
    expect(perRun).toBeLessThanOrEqual(4);
  });

  it('a wave member costs at most 2 plus its share of the admission and the digest', async () => {
    const { world, delivered } = open();
    const before = world.store.stats().transactions;
    const tasks = Array.from({ length: 8 }, (_, i) => `sleep=${100 + i} member ${i}`);
    const r = world.gateway.spawn('cli:tx', { tasks });
    expect(r.ok).toBe(true);
    await world.clock.advance(1000);
    expect(delivered).toHaveLength(1);
    expect(delivered[0]?.kind).toBe('digest');
    const total = world.store.stats().transactions - before;
    // 1 admission + 8 × (started, ended) + 1 digest settle.
    expect(total).toBeLessThanOrEqual(2 + 2 * tasks.length);
  });
});
