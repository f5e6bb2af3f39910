import { describe, expect, it } from 'vitest';
import { api } from '../helpers/daemon-process.js';
import {
  crew,
  daemon,
  loginUrl,
  openPage,
  row,
  spawnFromCli,
  spawnViaApi,
  useDashboardRig,
} from './browser-rig.js';

/**
 * The dashboard in a real browser (Debian's chromium, headless) against a real `crew serve` running the
 * simulator: login through the printed URL, live updates, notifications and ack, cancel. Transcripts, a
 * cut WebSocket and a provider hold are in dashboard-browser-pages.test.ts, so the two run side by side.
 */

useDashboardRig();

describe('the dashboard in a real browser', () => {
  it('logs in through the printed URL: the code leaves the address bar for an HttpOnly cookie; live runs are listed, ids whole', async () => {
    // It hangs until cancelled below: a loaded machine must not let it end before the page looks.
    const live = await spawnViaApi('#sim hang already live');
    const { context, page } = await openPage(await crew('dashboard', '--print-url'));
    expect(new URL(page.url()).pathname).toBe('/');
    expect(page.url()).not.toContain('code=');
    const cookies = await context.cookies();
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    await expect.poll(() => row(page, live).locator('.run-id').textContent(), { timeout: 20_000 }).toBe(live);
    expect(await row(page, live).getAttribute('data-status')).toMatch(/starting|running/);
    // One host, no cluster: the cluster panel is neither shown nor filled.
    expect(await page.locator('#cluster').isHidden()).toBe(true);
    expect(await page.locator('#cluster > *').count()).toBe(0);
    // The login link worked once.
    const again = await context.newPage();
    const url = await loginUrl();
    await again.goto(url);
    const reused = await context.request.get(url, { maxRedirects: 0 });
    expect(reused.status()).toBe(401);
    await api(daemon, 'POST', `/api/runs/${live}/cancel`);
    await context.close();
  }, 60_000);

  it('a run spawned from the CLI after the page loaded appears live and turns completed without a reload', async () => {
    const { context, page } = await openPage();
    const loads: string[] = [];
    page.on('load', () => loads.push(page.url()));
    const id = await spawnFromCli('#sim sleep=1500ms appears live');
    await row(page, id).waitFor();
    await expect.poll(() => row(page, id).getAttribute('data-status'), { timeout: 20_000 }).toBe('completed');
    expect(loads).toEqual([]);
    await context.close();
  }, 60_000);

  it('a completion notification appears; its ack removes it, and it stays gone after a reload', async () => {
    const { context, page } = await openPage();
    const id = await spawnViaApi('#sim sleep=300ms to acknowledge');
    const note = page.locator(`.note[data-run-id="${id}"]`);
    await note.waitFor({ timeout: 20_000 });
    await note.locator('button.ack').click();
    await note.waitFor({ state: 'detached' });
    await page.reload();
    await page.locator('#app[data-state="ready"]').waitFor();
    await row(page, id).waitFor();
    expect(await note.count()).toBe(0);
    await context.close();
  }, 60_000);

  it('cancel from the page ends a queued run', async () => {
    const { context, page } = await openPage();
    const holders = [];
    // Through the API: the point is the page's cancel, and four CLI starts took most of the budget under load.
    for (let i = 0; i < 3; i++) holders.push(await spawnViaApi(`#sim hang holder ${i}`));
    const queued = await spawnViaApi('#sim sleep=100ms waits in the queue');
    await expect
      .poll(() => row(page, queued).getAttribute('data-status'), { timeout: 20_000 })
      .toBe('queued');
    await row(page, queued).locator('.run-id').click();
    await page.locator('#cancel').click();
    // A cancel asks first (issue 32).
    await page.locator('#cancel-confirm').click();
    await expect
      .poll(() => row(page, queued).getAttribute('data-status'), { timeout: 20_000 })
      .toBe('cancelled');
    for (const id of holders) await api(daemon, 'POST', `/api/runs/${id}/cancel`);
    await context.close();
  }, 60_000);
});
