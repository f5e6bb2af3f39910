import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { type FakeProvider, startFakeProvider } from '../../src/fake-provider/fake-provider.js';
import { launchChromium, type PageFaults, watchPage } from '../helpers/browser.js';
import { api, crewCommand, type DaemonProcess, startDaemonProcess } from '../helpers/daemon-process.js';

/**
 * What the dashboard's browser test files share: each file gets its own fake provider, real `crew serve`
 * (the simulator, and a `probe` command agent behind the provider gateway) and headless chromium, so the
 * files run side by side. After a file, no request may have left 127.0.0.1 and the console must be free
 * of errors.
 *
 * Pages sign in through a login link from the daemon's API, the request `crew dashboard --print-url`
 * makes, and runs start through the API: each CLI process costs about a second of CPU (many seconds of
 * wall time on a loaded host), so only the cases about the CLI start it.
 */

const run = promisify(execFile);

export let daemon: DaemonProcess;
export let browser: Browser;
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
export const faults: PageFaults = { offHost: [], consoleErrors: [] };

export async function crew(...args: string[]): Promise<string> {
  const [node, argv] = crewCommand(args);
  const { stdout } = await run(node, argv, { env: { ...process.env, CREW_HOME: daemon.home } });
  return stdout.trim();
}

/** Spawns from the CLI (as a person would, beside the page) and returns the run id. */
export async function spawnFromCli(task: string): Promise<string> {
  const out = await crew('spawn', '--json', task);
  return JSON.parse(out).runs[0].id as string;
}

/** Spawns through the HTTP API: no CLI process start (seconds each on a loaded machine). */
export async function spawnViaApi(task: string): Promise<string> {
  const answer = await api(daemon, 'POST', '/api/spawn', { parent: 'cli:log', args: { task } });
  return (answer.body.runs as { id: string }[])[0]!.id;
}

/** A single-use login link, minted by the endpoint `crew dashboard --print-url` calls. */
export async function loginUrl(): Promise<string> {
  const answer = await api(daemon, 'POST', '/api/dashboard/login-codes');
  expect(answer.status).toBe(200);
  return answer.body.login_url as string;
}

/**
 * Opens the dashboard, signed in through `login` (default: a fresh link from {@link loginUrl}), in a new
 * context; resolves once the page is ready and live.
 */
export async function openPage(login?: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  watchPage(page, faults);
  await page.goto(login ?? (await loginUrl()));
  await page.locator('#app[data-state="ready"]').waitFor();
  await page.locator('#connection[data-state="live"]').waitFor();
  return { context, page };
}

export const row = (page: Page, id: string) => page.locator(`tr.run[data-run-id="${id}"]`);

/** Registers the file's set-up and teardown (call once, at the top of a test file). */
export function useDashboardRig(): void {
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
}
