import { describe, expect, it } from 'vitest';
import { api } from '../helpers/daemon-process.js';
import {
  browser,
  crew,
  daemon,
  faults,
  loginUrl,
  openPage,
  row,
  spawnViaApi,
  useDashboardRig,
} from './browser-rig.js';

/**
 * The dashboard in a real browser, continued (see dashboard-browser.test.ts): transcript paging and grep,
 * a WebSocket cut and restored with no event missed, and a run held by its provider's 429.
 */

useDashboardRig();

/** A run of the `probe` agent (one call through the provider gateway), as `crew spawn --agent probe` starts it. */
async function spawnProbe(task: string): Promise<string> {
  const answer = await api(daemon, 'POST', '/api/spawn', {
    parent: 'cli:log',
    args: { task, agent: 'probe' },
  });
  expect(answer.status).toBe(200);
  return (answer.body.runs as { id: string }[])[0]!.id;
}

describe('the dashboard in a real browser: transcripts, a cut WebSocket, a provider hold', () => {
  it('the transcript pane pages and greps', async () => {
    const lines = Array.from({ length: 450 }, (_, i) => `line ${i + 1}`).join('\n');
    const id = await spawnViaApi(`#sim echo\n${lines}`);
    const { context, page } = await openPage();
    await expect.poll(() => row(page, id).getAttribute('data-status'), { timeout: 20_000 }).toBe('completed');
    await row(page, id).locator('.run-id').click();
    const header = page.locator('#transcript-header');
    await expect.poll(() => header.textContent(), { timeout: 20_000 }).toMatch(/of \d+/);
    const total = Number(/of (\d+)/.exec((await header.textContent()) ?? '')?.[1]);
    expect(total).toBeGreaterThan(400);
    // The tail is shown first; then page from the top.
    expect(await page.locator('#transcript').textContent()).toContain('line 450');
    await page.locator('#tail').uncheck();
    await page.locator('#page-prev').click();
    await page.locator('#page-prev').click();
    await page.locator('#page-prev').click();
    await expect.poll(() => header.textContent(), { timeout: 20_000 }).toMatch(/^\[lines 1-200 of/);
    await page.locator('#page-next').click();
    await expect.poll(() => header.textContent(), { timeout: 20_000 }).toMatch(/^\[lines 201-400 of/);
    await page.locator('#grep').fill('^line 4[0-9]$');
    await page.locator('#transcript-controls button[type="submit"]').click();
    await expect
      .poll(() => page.locator('#transcript').textContent(), { timeout: 20_000 })
      .toContain('line 49');
    const shown = ((await page.locator('#transcript').textContent()) ?? '').trim().split('\n');
    expect(
      shown
        .map((l) => /line \d+$/.exec(l)?.[0])
        .filter((l) => l !== undefined)
        .sort(),
    ).toEqual(Array.from({ length: 10 }, (_, i) => `line 4${i}`).sort());
    await context.close();
  }, 60_000);

  it('the WebSocket is cut and restored, and no event is missed', async () => {
    const context = await browser.newContext();
    let down = false;
    const sockets: { close: () => Promise<void> }[] = [];
    await context.routeWebSocket(/\/api\/ws/, (ws) => {
      if (down) {
        void ws.close({ code: 1011, reason: 'cut by the test' });
        return;
      }
      ws.connectToServer();
      sockets.push(ws);
    });
    const url = await loginUrl();
    const page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().includes('WebSocket'))
        faults.consoleErrors.push(message.text());
    });
    page.on('pageerror', (error) => faults.consoleErrors.push(error.message));
    await page.goto(url);
    await page.locator('#connection[data-state="live"]').waitFor();
    down = true;
    for (const ws of sockets.splice(0)) await ws.close();
    await page.locator('#connection[data-state="reconnecting"]').waitFor();
    const before = Number(await page.locator('body').getAttribute('data-seq'));
    // Events happen while the page is cut off.
    const id = await spawnViaApi('#sim sleep=200ms while cut off');
    await expect
      .poll(async () => (await api(daemon, 'GET', `/api/runs/${id}`)).body.run, { timeout: 20_000 })
      .toMatchObject({ status: 'completed' });
    down = false;
    await page.locator('#connection[data-state="live"]').waitFor({ timeout: 20_000 });
    await expect.poll(() => row(page, id).getAttribute('data-status'), { timeout: 20_000 }).toBe('completed');
    // Resumed from its last sequence number: every message after it arrived, none skipped.
    expect(await page.locator('body').getAttribute('data-gaps')).toBe('0');
    const after = Number(await page.locator('body').getAttribute('data-seq'));
    const received = Number(await page.locator('body').getAttribute('data-received'));
    expect(after).toBeGreaterThan(before);
    expect(received).toBe(
      after - Number(JSON.parse((await page.locator('#crew-snapshot').textContent()) ?? '{}').seq),
    );
    await context.close();
  }, 60_000);

  it('a run queued behind its provider\'s 429 hold shows "provider until …" in its row', async () => {
    const { page } = await openPage();
    // A 429 with retry-after 30 holds anthropic starts; the next probe run waits for the provider.
    const limited = await spawnProbe('#fake status=429 retry_after=30');
    await expect
      .poll(() => row(page, limited).getAttribute('data-status'), { timeout: 20_000 })
      .toBe('failed');
    const held = await spawnProbe('held by the provider');
    const badge = row(page, held).locator('[data-waiting-for="provider"]');
    await badge.waitFor({ timeout: 20_000 });
    expect(await badge.textContent()).toMatch(/^provider until /);
    expect(await crew('list')).toMatch(
      new RegExp(`${held}\\s+queued \\(provider hold until \\d\\d:\\d\\d:\\d\\dZ\\)`),
    );
    // Cancelled, the row loses the badge (and the hold keeps nothing else waiting: no other probe runs).
    await api(daemon, 'POST', `/api/runs/${held}/cancel`);
    await expect
      .poll(() => row(page, held).getAttribute('data-status'), { timeout: 20_000 })
      .toBe('cancelled');
    expect(await badge.count()).toBe(0);
  }, 60_000);
});
