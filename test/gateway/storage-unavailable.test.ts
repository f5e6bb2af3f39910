import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/store/memory-store.js';
import type { StoreTx } from '../../src/store/store.js';
import { fakeWorld } from '../helpers/fake-gateway.js';

const op = { kind: 'operator' } as const;

/** A memory store whose writes fail while `full` is set, as SQLite's do on a full disk. */
class FullDiskStore extends MemoryStore {
  full = false;
  refused = 0;
  override apply(tx: StoreTx): void {
    if (this.full) {
      this.refused++;
      throw new Error('database or disk is full');
    }
    super.apply(tx);
  }
}

describe('a store that refuses writes (a full disk)', () => {
  it('an admission whose write fails is refused storage_unavailable and leaves nothing behind', async () => {
    const store = new FullDiskStore();
    const { gateway, runner, sel } = fakeWorld({ store, cap: 2 });
    store.full = true;
    const r = gateway.spawn('mcp:p', { task: 'sleep=10 a' });
    expect(r).toMatchObject({ ok: false, refusal: { code: 'storage_unavailable', retry_after_secs: 10 } });
    if (!r.ok) expect(r.refusal.message).toMatch(/database or disk is full.*free disk space/);
    await Promise.resolve();
    expect(runner.started).toHaveLength(0);
    expect(gateway.counts()).toMatchObject({ live: 0, permitsHeld: 0, queued: 0 });
    expect(sel.records.filter((e) => e.outcome === 'refused_storage_unavailable')).toHaveLength(1);
    expect(sel.records.some((e) => e.outcome === 'admitted')).toBe(false);
    store.full = false;
    await gateway.close();
  });

  it('runs that end while writes fail are recorded once writes work again; the events arrive once; admission recovers', async () => {
    const store = new FullDiskStore();
    const { gateway, clock } = fakeWorld({ store, cap: 2 });
    const ids = ['sleep=100 a', 'sleep=100 b', 'sleep=100 c'].map((task) => {
      const r = gateway.spawn('mcp:p', { task });
      if (!r.ok) throw new Error(r.refusal.message);
      return r.runs[0]!.id;
    });
    await clock.advance(10);
    store.full = true;
    await clock.advance(100); // a and b end; c takes a permit; none of it can be written
    expect(store.refused).toBeGreaterThan(0);
    expect(gateway.storageProblem()).toMatch(/disk is full/);
    const refused = gateway.spawn('mcp:p', { task: 'sleep=10 d' });
    expect(!refused.ok && refused.refusal.code).toBe('storage_unavailable');
    // Nothing was announced that the store does not hold.
    expect(await gateway.waitForEvents('mcp:p', 0)).toEqual([]);

    store.full = false;
    await clock.advance(2000); // the retry commits the backlog in order
    expect(gateway.storageProblem()).toBeUndefined();
    const byId = new Map(gateway.list(op).runs.map((run) => [run.id, run.status]));
    expect(byId.get(ids[0]!)).toBe('completed');
    expect(byId.get(ids[1]!)).toBe('completed');
    expect(byId.get(ids[2]!)).toBe('completed');
    const again = gateway.spawn('mcp:p', { task: 'sleep=10 e' });
    expect(again.ok).toBe(true);
    await clock.advance(200);
    const events = await gateway.waitForEvents('mcp:p', 0);
    const named = events.flatMap((e) => e.run_ids);
    expect(new Set(named).size).toBe(named.length);
    expect(named).toEqual(expect.arrayContaining(ids));
    // Scheduler and store agree: nothing live is left on either side.
    expect(gateway.counts().live).toBe(0);
    expect(store.runs({ live: true })).toEqual([]);
    await gateway.close();
  });
});
