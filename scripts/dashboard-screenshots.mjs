// Takes the README's dashboard screenshots (light and dark) from a real daemon on the built package:
// `npm run build && node scripts/dashboard-screenshots.mjs`. Needs /usr/bin/chromium.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const root = join(import.meta.dirname, '..');
const cli = join(root, 'dist', 'cli', 'main.js');
const home = mkdtempSync(join(tmpdir(), 'crew-shots-'));
writeFileSync(
  join(home, 'config.json'),
  JSON.stringify({
    'agent.max_subagents': 3,
    'agent.subagent_spawn_stagger_secs': 0,
    'agent.spawn_min_memory_gb': 0,
    'agent.subagent_max_depth': 2,
  }),
);
const env = { ...process.env, CREW_HOME: home };
const daemon = spawn(process.execPath, [cli, 'serve', '--port', '0'], { env, stdio: 'ignore' });
const crew = (...args) => execFileSync(process.execPath, [cli, ...args], { env, encoding: 'utf8' }).trim();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
try {
  for (let i = 0; i < 50; i++) {
    try {
      JSON.parse(readFileSync(join(home, 'gateway.json'), 'utf8'));
      break;
    } catch {
      await sleep(200);
    }
  }
  crew('spawn', '#sim sleep=300ms summarise the release notes');
  crew('spawn', '#sim fail=error try the flaky migration');
  crew(
    'spawn',
    '--wave',
    '#sim sleep=200ms lint package a',
    '#sim sleep=300ms lint package b',
    '#sim sleep=60s lint package c',
  );
  crew('spawn', '#sim spawn="#sim sleep=60s nested child" yield review the parser');
  crew('spawn', '#sim sleep=60s refactor the scheduler tests');
  crew('spawn', '#sim sleep=60s write the changelog');
  try {
    crew('spawn', '   ');
  } catch {
    // the empty task is refused on purpose: it shows in the refusals feed
  }
  await sleep(2500);
  const url = crew('dashboard', '--print-url');
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu'],
  });
  for (const scheme of ['light', 'dark']) {
    const context = await browser.newContext({ colorScheme: scheme, viewport: { width: 1400, height: 820 } });
    const page = await context.newPage();
    await page.goto(scheme === 'light' ? url : crew('dashboard', '--print-url'));
    await page.locator('#connection[data-state="live"]').waitFor();
    await page.locator('tr.wave button').first().click();
    const first = page.locator('tr.run .run-id').first();
    await first.click();
    await sleep(800);
    await page.screenshot({ path: join(root, 'docs', `dashboard-${scheme}.png`) });
    await context.close();
  }
  await browser.close();
} finally {
  daemon.kill('SIGTERM');
  await sleep(1500);
  rmSync(home, { recursive: true, force: true });
}
