import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, openDashboardOf, type PageFaults } from '../helpers/browser.js';
import { api } from '../helpers/daemon-process.js';
import { redisSkipReason } from '../helpers/redis-server.js';
import {
  type ClusterRig,
  collect,
  SHARED_SIM_CONFIG,
  sampleCaps,
  spawnVia,
  startCluster,
} from './cluster-rig.js';

/**
 * A gateway whose host is short of memory, end to end: two real `crew serve` gateways on one Redis, g1
 * configured with a per-spawn memory minimum no host has (`agent.spawn_min_memory_gb`), so its memory gate
 * reads critical from the start. g1 must take no cluster job (its BullMQ worker never fetches one, not even
 * the first), runs admitted through g1 must run on g0 and come back to their parent on g1, resource_status
 * must say g1 is short of memory, and the dashboard must show it in a real browser.
 */

const skip = redisSkipReason();
const faults: PageFaults = { offHost: [], consoleErrors: [] };

describe.skipIf(skip !== undefined)(
  `cluster mode: a gateway short of memory${skip ? ` (skipped: ${skip})` : ''}`,
  () => {
    let rig: ClusterRig;
    let browser: Browser | undefined;

    beforeAll(async () => {
      rig = await startCluster({
        hostCaps: [2, 2],
        providerCap: 4,
        config: SHARED_SIM_CONFIG,
        configOf: (i) => (i === 1 ? { 'agent.spawn_min_memory_gb': 1_000_000 } : {}),
      });
    }, 60_000);

    afterAll(async () => {
      await browser?.close();
      await rig?.close();
      expect(faults).toEqual({ offHost: [], consoleErrors: [] });
    });

    it('takes no cluster job; runs admitted through it execute on the other gateway and return to their parent there once', async () => {
      const entry = async (name: string) =>
        JSON.parse((await rig.client.hget(`crew:${rig.name}:gateways`, name)) ?? '{}') as {
          memoryShort?: boolean;
        };
      expect((await entry('g1')).memoryShort).toBe(true);
      expect((await entry('g0')).memoryShort).toBeUndefined();

      const stopSampling = sampleCaps(rig, 2);
      const parent = 'cli:short-parent';
      const ids: string[] = [];
      for (let k = 0; k < 6; k++) {
        const answer = await spawnVia(rig.gateways[1]!, parent, { task: `#sim sleep=300ms through g1 ${k}` });
        expect(answer.ok, JSON.stringify(answer)).toBe(true);
        ids.push(answer.runs![0]!.id);
      }
      const events = await collect(rig, 1, parent, (seen) => seen.flatMap((e) => e.run_ids).length >= 6);
      const samples = await stopSampling();

      const announced = events.flatMap((e) => e.run_ids);
      expect(announced.sort()).toEqual([...ids].sort());
      expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
      for (const e of events) expect(e.text).toMatch(/status=completed/);
      expect(samples.errors).toEqual([]);
      // g1's worker never held a job and g1 executed nothing; g0 did all of it, within its host cap.
      expect(samples.perGateway[1]).toBe(0);
      expect(samples.executingMax[1]).toBe(0);
      expect(samples.perGateway[0]).toBeGreaterThan(0);
      expect(samples.perGateway[0]).toBeLessThanOrEqual(2);
      // The log says why.
      expect(rig.gateways[1]!.stderr()).toMatch(/host memory is critical; this gateway takes no cluster job/);

      // resource_status on either gateway names g1 short of memory, g0 not.
      for (const g of rig.gateways) {
        const status = (await api(g, 'GET', '/api/resources')).body as {
          cluster?: { gateways: { name: string; memory_short?: boolean }[] };
        };
        expect(status.cluster?.gateways.map((x) => [x.name, x.memory_short === true])).toEqual([
          ['g0', false],
          ['g1', true],
        ]);
      }
    }, 90_000);

    it('the dashboard marks g1 "memory short" in its gateway table, and g0 not', async () => {
      browser = await launchChromium();
      const page = await openDashboardOf(browser, rig.gateways[0]!.home, faults);
      const rows = page.locator('#cluster tr.gateway');
      await expect.poll(() => rows.count(), { timeout: 20_000 }).toBe(2);
      const badges = () =>
        rows.evaluateAll((trs) =>
          trs.map((tr) => [
            tr.querySelector('.gw-name')?.textContent ?? '',
            tr.querySelector('.gw-memory-short')?.textContent ?? null,
          ]),
        );
      await expect.poll(badges, { timeout: 20_000 }).toEqual([
        ['g0', null],
        ['g1', 'memory short'],
      ]);
      // g0 has room, so nothing binds the cluster's next start.
      expect(await page.locator('#cap-binds .cap-value').textContent()).toBe('nothing (room)');
      await page.context().close();
    }, 60_000);
  },
);
