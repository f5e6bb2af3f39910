import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeProvider, startFakeProvider } from '../../src/fake-provider/fake-provider.js';
import { launchChromium, type PageFaults, watchPage } from '../helpers/browser.js';
import { api, crewCommand, type DaemonProcess, startDaemonProcess } from '../helpers/daemon-process.js';

/**
 * The dashboard in a real browser (Debian's chromium, headless) against a real `crew serve` running the
 * simulator: login through the printed URL, live updates, notifications and ack, cancel, transcript
 * paging and grep, a WebSocket cut and restored. Every test also checks that no request left 127.0.0.1
 * and that the console stayed free of errors.
 */

const run = promisify(execFile);

let daemon: DaemonProcess;
let browser: Browser;
let provider: FakeProvider;
let probeDir: string;

/** A command agent of `provider: anthropic` that makes one call through the provider gateway. */
const PROBE = `
const res = await fetch(process.env.ANTHROPIC_BASE_URL + '/v1/messages', {
  method: 'POST',
  headers: { 'content-type': 'application/json', 'x-api-key': 'k' },
  body: JSON.stringify({ model: 'm', max_tokens: 8, messages: [{ role: 'user', content: process.argv[2] ?? '' }] }),
});
console.log('provider answered ' + res.status + ' ' + (await res.text()).slice(0, 80));
process.exit(res.status === 200 ? 0 : 1);
`;
const faults: PageFaults = { offHost: [], consoleErrors: [] };

async function crew(...args: string[]): Promise<string> {
  const [node, argv] = crewCommand(args);
  const { stdout } = await run(node, argv, { env: { ...process.env, CREW_HOME: daemon.home } });
  return stdout.trim();
}

/** Spawns from the CLI (as a person would, beside the page) and returns the run id. */
async function spawnFromCli(task: string): Promise<string> {
  const out = await crew('spawn', '--json', task);
  return JSON.parse(out).runs[0].id as string;
}

/** Spawns through the HTTP API: no CLI process start (seconds each on a loaded machine). */
async function spawnViaApi(task: string): Promise<string> {
  const answer = await api(daemon, 'POST', '/api/spawn', { parent: 'cli:log', args: { task } });
  return (answer.body.runs as { id: string }[])[0]!.id;
}

async function openPage(context?: BrowserContext): Promise<{ context: BrowserContext; page: Page }> {
  const ctx = context ?? (await browser.newContext());
  const page = await ctx.newPage();
  watchPage(page, faults);
  if (!context) {
    const url = await crew('dashboard', '--print-url');
    await page.goto(url);
  } else {
    await page.goto(daemon.url);
  }
  await page.locator('#app[data-state="ready"]').waitFor();
  await page.locator('#connection[data-state="live"]').waitFor();
  return { context: ctx, page };
}

const row = (page: Page, id: string) => page.locator(`tr.run[data-run-id="${id}"]`);

beforeAll(async () => {
  provider = await startFakeProvider();
  probeDir = mkdtempSync(join(tmpdir(), 'crew-dashboard-probe-'));
  writeFileSync(join(probeDir, 'probe.mjs'), PROBE);
  daemon = await startDaemonProcess({
    config: {
      'agent.max_subagents': 3,
      'providers.anthropic.upstream': provider.url,
      'agents.probe': {
        runner: 'command',
        command: [process.execPath, join(probeDir, 'probe.mjs'), '{task}'],
        provider: 'anthropic',
      },
    },
  });
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await daemon?.stop();
  daemon?.cleanup();
  await provider?.close();
  if (probeDir) rmSync(probeDir, { recursive: true, force: true });
  expect(faults).toEqual({ offHost: [], consoleErrors: [] });
});

describe('the dashboard in a real browser', () => {
  it('logs in through the printed URL: the code leaves the address bar for an HttpOnly cookie; live runs are listed, ids whole', async () => {
    // It hangs until cancelled below: a loaded machine must not let it end before the page looks.
    const live = await spawnFromCli('#sim hang already live');
    const { context, page } = await openPage();
    expect(new URL(page.url()).pathname).toBe('/');
    expect(page.url()).not.toContain('code=');
    const cookies = await context.cookies();
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    await expect.poll(() => row(page, live).locator('.run-id').textContent()).toBe(live);
    expect(await row(page, live).getAttribute('data-status')).toMatch(/starting|running/);
    // One host, no cluster: the cluster panel is neither shown nor filled.
    expect(await page.locator('#cluster').isHidden()).toBe(true);
    expect(await page.locator('#cluster > *').count()).toBe(0);
    // The login link worked once.
    const again = await context.newPage();
    const url = await crew('dashboard', '--print-url');
    await again.goto(url);
    const reused = await context.request.get(url, { maxRedirects: 0 });
    expect(reused.status()).toBe(401);
    await crew('cancel', live);
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
    const id = await spawnFromCli('#sim sleep=300ms to acknowledge');
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
    await expect
      .poll(() => row(page, queued).getAttribute('data-status'), { timeout: 20_000 })
      .toBe('cancelled');
    for (const id of holders) await api(daemon, 'POST', `/api/runs/${id}/cancel`);
    await context.close();
  }, 60_000);

  it('the transcript pane pages and greps', async () => {
    const lines = Array.from({ length: 450 }, (_, i) => `line ${i + 1}`).join('\n');
    const id = await spawnFromCli(`#sim echo\n${lines}`);
    const { context, page } = await openPage();
    await expect.poll(() => row(page, id).getAttribute('data-status'), { timeout: 20_000 }).toBe('completed');
    await row(page, id).locator('.run-id').click();
    const header = page.locator('#transcript-header');
    await expect.poll(() => header.textContent()).toMatch(/of \d+/);
    const total = Number(/of (\d+)/.exec((await header.textContent()) ?? '')?.[1]);
    expect(total).toBeGreaterThan(400);
    // The tail is shown first; then page from the top.
    expect(await page.locator('#transcript').textContent()).toContain('line 450');
    await page.locator('#tail').uncheck();
    await page.locator('#page-prev').click();
    await page.locator('#page-prev').click();
    await page.locator('#page-prev').click();
    await expect.poll(() => header.textContent()).toMatch(/^\[lines 1-200 of/);
    await page.locator('#page-next').click();
    await expect.poll(() => header.textContent()).toMatch(/^\[lines 201-400 of/);
    await page.locator('#grep').fill('^line 4[0-9]$');
    await page.locator('#transcript-controls button[type="submit"]').click();
    await expect.poll(() => page.locator('#transcript').textContent()).toContain('line 49');
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
    const url = await crew('dashboard', '--print-url');
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
    const id = await spawnFromCli('#sim sleep=200ms while cut off');
    await expect
      .poll(async () => (await crew('status', '--json', id)).includes('"completed"'), { timeout: 20_000 })
      .toBe(true);
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
    const limited = JSON.parse(
      await crew('spawn', '--json', '--agent', 'probe', '#fake status=429 retry_after=30'),
    ).runs[0].id as string;
    await expect
      .poll(() => row(page, limited).getAttribute('data-status'), { timeout: 20_000 })
      .toBe('failed');
    const held = JSON.parse(await crew('spawn', '--json', '--agent', 'probe', 'held by the provider')).runs[0]
      .id as string;
    const badge = row(page, held).locator('[data-waiting-for="provider"]');
    await badge.waitFor({ timeout: 20_000 });
    expect(await badge.textContent()).toMatch(/^provider until /);
    expect(await crew('list')).toMatch(
      new RegExp(`${held}\\s+queued \\(provider hold until \\d\\d:\\d\\d:\\d\\dZ\\)`),
    );
    // Cancelled, the row loses the badge (and the hold keeps nothing else waiting: no other probe runs).
    await crew('cancel', held);
    await expect
      .poll(() => row(page, held).getAttribute('data-status'), { timeout: 20_000 })
      .toBe('cancelled');
    expect(await badge.count()).toBe(0);
  }, 60_000);
});
