import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunId } from '../../src/core/types.js';
import type { Gateway } from '../../src/gateway/gateway.js';
import type { FakeWorld } from '../helpers/fake-gateway.js';

/** One gateway on a placement, as the suite drives it (fake runner, fake clock). */
export interface PlacementUnderTest {
  world: FakeWorld;
  /** Lets what is due happen: the fake clock moves `ms`, and whatever the placement pumps runs. */
  settle(ms?: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * The {@link Placement} contract (src/gateway/placement.ts), one suite the local placement and the cluster
 * placement both pass (issue 30): through the gateway's own API, a placement changes where a run executes
 * and nothing a parent sees. A spawn's run ends once with its output in one event; a wave's members end
 * in one digest; a cancel ends a run cancelled once; a nested spawn executes under its ancestor; bad
 * arguments are refused before anything is admitted; a kept conversation continues in its session;
 * `spawn_status` reads the transcript; the header counts what runs and what waits.
 */
export function placementConformance(name: string, make: () => Promise<PlacementUnderTest>): void {
  describe(`${name} keeps the Placement contract`, () => {
    let under: PlacementUnderTest;
    let gateway: Gateway;
    beforeEach(async () => {
      under = await make();
      gateway = under.world.gateway;
    });
    afterEach(async () => {
      await under.close();
    });

    const idsOf = (answer: Awaited<ReturnType<Gateway['admit']>>): RunId[] =>
      answer.ok ? answer.runs.map((r) => r.id) : [];

    it("a spawn's run ends once, completed, with its output in one event to its parent", async () => {
      const [id] = idsOf(await gateway.admit('cli:p', { task: 'sleep=50 hello' }));
      expect(id).toBeDefined();
      await under.settle(200);
      expect(gateway.statusOf(id as RunId)).toBe('completed');
      const events = await gateway.waitForEvents('cli:p', 0);
      expect(events.map((e) => [e.kind, e.run_ids])).toEqual([['completion', [id]]]);
      expect(events[0]?.text).toMatch(/out:sleep=50 hello/);
      await under.settle(200);
      expect(await gateway.waitForEvents('cli:p', 0)).toEqual([]);
    });

    it("a wave's members all end, in one digest", async () => {
      const answer = await gateway.admit('cli:p', { tasks: ['sleep=20 a', 'sleep=30 b', 'sleep=40 fail c'] });
      expect(answer).toMatchObject({ ok: true });
      const ids = idsOf(answer);
      await under.settle(200);
      expect(ids.map((id) => gateway.statusOf(id))).toEqual(['completed', 'completed', 'failed']);
      const events = await gateway.waitForEvents('cli:p', 0);
      expect(events).toHaveLength(1);
      expect(new Set(events[0]?.run_ids)).toEqual(new Set(ids));
    });

    it('bad arguments are refused, audited once, and admit nothing', async () => {
      const { records } = under.world.sel;
      for (const bad of [null, 'x', { tasks: 'not a list' }, { task: 1 }, { task: 'x', hostile: true }]) {
        const before = records.length;
        const refused = await gateway.admit('cli:p', bad);
        expect(refused.ok, JSON.stringify(bad)).toBe(false);
        // One SEL line, with the refusal's code, per refused call.
        expect(records.slice(before).map((r) => r.metadata?.code)).toEqual([
          refused.ok ? undefined : refused.refusal.code,
        ]);
      }
      expect(gateway.list({ kind: 'operator' }).runs).toEqual([]);
    });

    it('a cancel ends a run cancelled, once, with its event', async () => {
      const [id] = idsOf(await gateway.admit('cli:p', { task: 'hang' }));
      await under.settle(100);
      expect(gateway.cancel(id as RunId, { kind: 'operator' })).toEqual({ ok: true });
      await under.settle(100);
      expect(gateway.statusOf(id as RunId)).toBe('cancelled');
      const events = await gateway.waitForEvents('cli:p', 0);
      expect(events.map((e) => e.run_ids)).toEqual([[id]]);
    });

    it('a kept run continues in its session; status reads its transcript', async () => {
      const [first] = idsOf(await gateway.admit('cli:p', { task: 'sleep=10 first', keep: true }));
      await under.settle(100);
      await gateway.waitForEvents('cli:p', 0);
      const next = await gateway.admitContinue('cli:p', { conversation: first, task: 'sleep=10 second' });
      expect(next).toMatchObject({ ok: true });
      await under.settle(100);
      const [second] = idsOf(next);
      expect(gateway.statusOf(second as RunId)).toBe('completed');
      expect(await gateway.waitForEvents('cli:p', 0)).toHaveLength(1);
      const status = await gateway.status(second as RunId, { kind: 'operator' });
      expect(status).toMatchObject({ ok: true, run: { status: 'completed' } });
      expect(status.ok && status.text).toMatch(/out:sleep=10 second/);
    });

    it('the header counts a run that runs and one that waits; a queued run shows queued', async () => {
      const cap = under.world.gateway.cap;
      const ids = idsOf(
        await gateway.admit('cli:p', { tasks: Array.from({ length: cap + 1 }, () => 'hang') }),
      );
      await under.settle(100);
      const list = gateway.list({ kind: 'operator' });
      expect(list.queued).toBe(1);
      const statuses = ids.map((id) => list.runs.find((r) => r.id === id)?.status);
      expect(statuses.filter((s) => s === 'running')).toHaveLength(cap);
      expect(statuses.filter((s) => s === 'queued')).toHaveLength(1);
      for (const id of ids) gateway.cancel(id, { kind: 'operator' });
      await under.settle(100);
      expect(ids.map((id) => gateway.statusOf(id))).toEqual(ids.map(() => 'cancelled'));
    });
  });
}
