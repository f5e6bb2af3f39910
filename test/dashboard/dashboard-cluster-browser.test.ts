import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClusterRig, SHARED_SIM_CONFIG, spawnVia, startCluster } from '../cluster/cluster-rig.js';
import { launchChromium, openDashboardAt, type PageFaults } from '../helpers/browser.js';
import { redisSkipReason } from '../helpers/redis-server.js';

/**
 * The dashboard's cluster panel in a real browser (Debian's chromium, headless) against Redis and two real
 * `crew serve` gateways (host caps 2 and 2, provider cap 3): both gateways with their caps, the provider
 * cap, the running and queued totals rising and falling live as runs execute, a hostile gateway name
 * (written into the registry as any Redis client could) shown as text, and Redis going away and back. The single-host page shows no
 * panel: `dashboard-browser.test.ts` checks that.
 */

const skip = redisSkipReason();
const HOSTILE = '<img src=x onerror="document.body.dataset.pwned=1">';

const faults: PageFaults = { offHost: [], consoleErrors: [] };

interface PanelView {
  available: string | undefined;
  provider: { running: string; cap: string; queued: string } | undefined;
  gateways: { name: string; cap: string; running: string; self: boolean }[];
}

/** g0's page with nothing running: both gateways at cap 2 (g0 this one), provider cap 3. */
const IDLE_ON_G0: PanelView = {
  available: 'true',
  provider: { running: '0', cap: '3', queued: '0' },
  gateways: [
    { name: 'g0', cap: '2', running: '0', self: true },
    { name: 'g1', cap: '2', running: '0', self: false },
  ],
};

/** The few DOM members read below (the tests compile without the DOM library). */
interface El {
  hidden: boolean;
  dataset: Record<string, string | undefined>;
  textContent: string | null;
  querySelector(selector: string): El | null;
  querySelectorAll(selector: string): ArrayLike<El>;
}

/** What the cluster panel shows now, read from its DOM in one step (no render in between). */
function panel(page: Page): Promise<PanelView | undefined> {
  return page.locator('#cluster').evaluate((node) => {
    const box = node as unknown as El;
    if (box.hidden) return undefined;
    const provider = box.querySelector('#cluster-provider');
    const text = (el: El | null, selector: string) => el?.querySelector(selector)?.textContent ?? '';
    return {
      available: box.dataset.available,
      provider: provider
        ? {
            running: text(provider, '.cl-running'),
            cap: text(provider, '.cl-cap'),
            queued: text(provider, '.cl-queued'),
          }
        : undefined,
      gateways: Array.from(box.querySelectorAll('tr.gateway')).map((tr) => ({
        name: text(tr, '.gw-name'),
        cap: text(tr, '.gw-cap'),
        running: text(tr, '.gw-running'),
        self: tr.dataset.self === 'true',
      })),
    };
  });
}

/** The header's cluster-mode figures: this gateway against its host cap, the cluster against the provider cap. */
interface HeaderView {
  here: string;
  cluster: string;
  binds: string;
}

function header(page: Page): Promise<HeaderView> {
  return page.locator('#capacity').evaluate((node) => {
    const box = node as unknown as El;
    const value = (id: string) => box.querySelector(`#${id} .cap-value`)?.textContent ?? '';
    return { here: value('cap-host'), cluster: value('cap-cluster'), binds: value('cap-binds') };
  });
}

/** g0's header with nothing running: host cap 2 (`cluster.host_cap`), provider cap 3, room. */
const IDLE_HEADER: HeaderView = {
  here: '0 of host cap 2 (pinned) · 0 nested',
  cluster: '0 of provider cap 3 · 0 waiting',
  binds: 'nothing (room)',
};

describe.skipIf(skip !== undefined)(
  `the dashboard's cluster panel in a real browser${skip ? ` (skipped: ${skip})` : ''}`,
  () => {
    let rig: ClusterRig;
    let browser: Browser;

    beforeAll(async () => {
      rig = await startCluster({ hostCaps: [2, 2], providerCap: 3, config: SHARED_SIM_CONFIG });
      browser = await launchChromium();
    }, 60_000);

    afterAll(async () => {
      await browser?.close();
      await rig?.close();
      expect(faults).toEqual({ offHost: [], consoleErrors: [] });
    });

    // Signed in through the daemon's API: the CLI's own login link is dashboard-browser.test.ts's.
    const openDashboard = (i: number): Promise<Page> => openDashboardAt(browser, rig.gateways[i]!, faults);

    it('shows the cluster, both gateways with their caps and the provider cap; the running and queued totals rise and fall live', async () => {
      const page = await openDashboard(0);
      const loads: string[] = [];
      page.on('load', () => loads.push(page.url()));

      await expect.poll(() => panel(page), { timeout: 20_000 }).toEqual(IDLE_ON_G0);
      expect(await header(page)).toEqual(IDLE_HEADER);
      expect(await page.locator('#cluster-name').textContent()).toBe('test');
      expect(await page.locator('#cluster-redis').textContent()).toMatch(/Redis available/);

      // Four runs through g0 under a provider cap of 3: three execute (across both gateways), one waits.
      const parent = 'cli:dashboard-watcher';
      for (let k = 0; k < 4; k++) {
        const answer = await spawnVia(rig.gateways[0]!, parent, { task: `#sim sleep=6s watched ${k}` });
        expect(answer.ok, JSON.stringify(answer)).toBe(true);
      }
      await expect
        .poll(
          async () => {
            const view = await panel(page);
            return `${view?.provider?.running} running, ${view?.provider?.queued} queued`;
          },
          { timeout: 30_000, interval: 100 },
        )
        .toBe('3 running, 1 queued');
      // The header: the cluster's three against the provider cap, which binds; g0 counts only the runs it
      // executes (its row in the panel), not the proxies of the four it admitted as well.
      await expect
        .poll(
          async () => {
            const [view, head] = [await panel(page), await header(page)];
            const g0 = view?.gateways.find((g) => g.name === 'g0')?.running;
            return {
              ...head,
              here: head.here === `${g0} of host cap 2 (pinned) · 0 nested` ? 'g0 row' : head.here,
            };
          },
          { timeout: 30_000, interval: 100 },
        )
        .toEqual({ here: 'g0 row', cluster: '3 of provider cap 3 · 1 waiting', binds: 'the provider cap' });
      const during = (await panel(page))!;
      // No gateway past its cap, none together past the provider cap, and the work is on the panel's rows.
      for (const g of during.gateways) expect(Number(g.running)).toBeLessThanOrEqual(2);
      const sum = during.gateways.reduce((n, g) => n + Number(g.running), 0);
      expect(sum).toBeGreaterThan(0);
      expect(sum).toBeLessThanOrEqual(3);

      // Then everything ends: back to nothing running, nothing queued, without a reload.
      await expect.poll(() => panel(page), { timeout: 40_000, interval: 200 }).toEqual(IDLE_ON_G0);
      await expect.poll(() => header(page), { timeout: 10_000, interval: 200 }).toEqual(IDLE_HEADER);
      expect(loads).toEqual([]);
      await page.context().close();
    }, 120_000);

    it('on g1’s page g1 is this gateway; a hostile name from the registry renders as text', async () => {
      // Written as any Redis client could; its `at` is in the future, so no gateway drops it as stale.
      const entry = JSON.stringify({ cap: 1, running: 0, runs: [], at: Date.now() + 3_600_000 });
      await rig.client.hset(`crew:${rig.name}:gateways`, HOSTILE, entry);
      try {
        const page = await openDashboard(1);
        await expect
          .poll(async () => (await panel(page))?.gateways.map((g) => [g.name, g.self]), { timeout: 20_000 })
          .toEqual([
            [HOSTILE, false],
            ['g0', false],
            ['g1', true],
          ]);
        expect(await page.locator('#cluster img').count()).toBe(0);
        expect(await page.locator('body').getAttribute('data-pwned')).toBeNull();

        // It leaves the registry: the panel drops its row live.
        await rig.client.hdel(`crew:${rig.name}:gateways`, HOSTILE);
        await expect
          .poll(async () => (await panel(page))?.gateways.map((g) => g.name), { timeout: 20_000 })
          .toEqual(['g0', 'g1']);
        await page.context().close();
      } finally {
        await rig.client.hdel(`crew:${rig.name}:gateways`, HOSTILE);
      }
    }, 60_000);

    it('Redis stopped: the panel says so live, keeping the last figures; Redis back: available again, both gateways listed', async () => {
      const page = await openDashboard(0);
      await expect.poll(async () => (await panel(page))?.available, { timeout: 20_000 }).toBe('true');
      await rig.redis.stop('SIGKILL');
      try {
        await expect.poll(async () => (await panel(page))?.available, { timeout: 20_000 }).toBe('false');
        expect(await page.locator('#cluster-redis').textContent()).toMatch(/Redis unavailable/);
        expect((await panel(page))?.provider?.cap).toBe('3');
      } finally {
        await rig.redis.start();
      }
      await expect
        .poll(
          async () => {
            const view = await panel(page);
            return [view?.available, view?.gateways.map((g) => g.name)];
          },
          { timeout: 30_000 },
        )
        .toEqual(['true', ['g0', 'g1']]);
      await page.context().close();
    }, 90_000);
  },
);
