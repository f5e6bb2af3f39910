import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { api } from '../helpers/daemon-process.js';
import { browser, daemon, loginUrl, openPage, row, useDashboardRig } from './browser-rig.js';

/**
 * The dashboard under real traffic (issue 32 §1) in a real browser against a real `crew serve`: the
 * layout at 1280×800 and 390×844 in light and dark (screenshots under .cache/screenshots, checked: no
 * horizontal scroll, a header inside the screen with no text overflowing, table headers whole), ack-all,
 * running before queued in `live`, sort and the address surviving a reload, a cancel that asks first,
 * bulk cancel and a re-run.
 */

useDashboardRig();

// Each case starts with every slot free: a case's hanging runs never hold the next one's in the queue.
afterEach(async () => {
  const listed = await api(daemon, 'GET', '/api/runs?limit=2000');
  const live = (listed.body.runs as { id: string; status: string }[]).filter((r) =>
    ['queued', 'starting', 'running'].includes(r.status),
  );
  await cancelAll(live.map((r) => r.id));
});

const SCREENSHOTS = join(process.cwd(), '.cache', 'screenshots');

/** Single spawns (each its own row in every tab; a wave folds into one row outside `live`). */
async function singles(parent: string, tasks: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const task of tasks) ids.push(...(await spawn(parent, { task })));
  return ids;
}

/** Spawns through the API for a parent, returning the run ids. */
async function spawn(parent: string, args: Record<string, unknown>): Promise<string[]> {
  const answer = await api(daemon, 'POST', '/api/spawn', { parent, args });
  expect(answer.status).toBe(200);
  return (answer.body.runs as { id: string }[]).map((r) => r.id);
}

async function cancelAll(ids: string[]): Promise<void> {
  for (const id of ids) await api(daemon, 'POST', `/api/runs/${id}/cancel`);
}

/**
 * What the layout checks measure, run in the page (a string: the test's TypeScript has no DOM types): a
 * page that scrolls sideways, a header outside the viewport or with text cut or wrapping word by word, a
 * visible column header cut short.
 */
const LAYOUT_FAULTS = `(() => {
    const faults = [];
    const doc = document.scrollingElement;
    if (doc.scrollWidth > doc.clientWidth)
      faults.push(\`page scrolls sideways: \${doc.scrollWidth} > \${doc.clientWidth}\`);
    const header = document.querySelector('header.top');
    const box = header.getBoundingClientRect();
    if (box.left < 0 || box.right > window.innerWidth + 0.5)
      faults.push(\`header outside the viewport: \${box.left}..\${box.right} of \${window.innerWidth}\`);
    for (const el of header.querySelectorAll('*')) {
      if (el.offsetParent === null || el instanceof SVGElement) continue;
      if (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== 'visible')
        faults.push(\`header text cut: \${el.className || el.tagName} \${el.scrollWidth} > \${el.clientWidth}\`);
      const r = el.getBoundingClientRect();
      if (r.right > window.innerWidth + 0.5)
        faults.push(\`header element past the edge: \${el.className || el.tagName}\`);
    }
    // Word by word: no button or label in the header takes more than one line, no value more than two.
    const lineOf = (el) => Number.parseFloat(getComputedStyle(el).lineHeight) || 18;
    for (const el of header.querySelectorAll('.brand, .live button, .connection, .cap-label'))
      if (el.getBoundingClientRect().height > lineOf(el) * 1.6 + 8)
        faults.push(\`header wraps: \${el.textContent}\`);
    for (const el of header.querySelectorAll('.cap-value'))
      if (el.getBoundingClientRect().height > lineOf(el) * 2.6)
        faults.push(\`header value wraps: \${el.textContent}\`);
    // Visible column headers are whole (no "DUR…").
    for (const th of document.querySelectorAll('table.runs th')) {
      if (th.offsetParent === null) continue;
      if (th.scrollWidth > th.clientWidth + 1) faults.push(\`column cut: \${th.textContent}\`);
    }
    return faults;
})()`;

async function layoutFaults(page: Page): Promise<string[]> {
  return page.evaluate(LAYOUT_FAULTS);
}

describe('the dashboard’s layout, light and dark, wide and narrow', () => {
  it('at 1280×800 and 390×844, light and dark: no sideways scroll, the header whole, columns whole; screenshots taken', async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    const failed = await spawn('cli:log', { task: '#sim fail=error a run that fails' });
    const held = await spawn('mcp:claude-code@myproject', {
      tasks: ['#sim hang a', '#sim hang b', '#sim hang c'],
    });
    const queued = await spawn('mcp:claude-code@myproject', {
      tasks: ['#sim sleep=100ms q1', '#sim sleep=100ms q2'],
    });
    const { context, page } = await openPage();
    await expect
      .poll(() => row(page, failed[0]!).getAttribute('data-status'), { timeout: 20_000 })
      .toBe('failed');
    const url = page.url();
    await context.close();
    // The four views at once, each its own context (viewport, scheme, login): they mostly wait on the page.
    const views = [
      [1280, 800, 'light'],
      [1280, 800, 'dark'],
      [390, 844, 'light'],
      [390, 844, 'dark'],
    ] as const;
    const shots = await Promise.all(
      views.map(async ([width, height, scheme]) => {
        // A new page per size and scheme, signed in through a login link, opened on a selected run.
        const ctx = await browser.newContext({ viewport: { width, height }, colorScheme: scheme });
        const p = await ctx.newPage();
        const login = await loginUrl();
        await p.goto(login);
        await p.goto(`${new URL(url).origin}/?tab=live&run=${held[0]}`);
        await row(p, held[0]!).waitFor();
        await p.locator('#app[data-state="ready"]').waitFor();
        await p.locator('#detail .run-id').waitFor();
        await p.locator('#capacity-svg polyline[data-series="running"]').waitFor({ state: 'attached' });
        expect(await p.evaluate("matchMedia('(prefers-color-scheme: dark)').matches")).toBe(
          scheme === 'dark',
        );
        expect(await layoutFaults(p)).toEqual([]);
        // The wide screen shows every sortable column's header with the side panel open.
        if (width === 1280) {
          expect(await p.locator('table.runs thead th:visible').count()).toBeGreaterThanOrEqual(7);
          const pane = await p.locator('#runs-pane').boundingBox();
          expect(pane?.width ?? 0).toBeGreaterThan(1280 * 0.6);
        } else {
          // The phone shows runs as cards: a row no wider than the screen, the table head hidden.
          expect(await p.locator('table.runs thead').isHidden()).toBe(true);
          // Polled: a live update re-renders the rows, and a row replaced while measured has no box.
          await expect
            .poll(
              async () => {
                const card = await row(p, held[0]!).boundingBox();
                return card !== null && card.x >= 0 && card.x + card.width <= width;
              },
              { timeout: 20_000 },
            )
            .toBe(true);
        }
        // Parent names read as names, not raw keys.
        expect(await p.locator('tr.group td').allTextContents()).toContain('claude-code@myproject');
        const file = join(SCREENSHOTS, `dashboard-${width}x${height}-${scheme}.png`);
        await p.screenshot({ path: file, fullPage: false });
        await ctx.close();
        return file;
      }),
    );
    expect(shots).toHaveLength(4);
    await cancelAll([...held, ...queued]);
  }, 240_000);
});

describe('the dashboard under real traffic', () => {
  it('only what needs a person asks for an ack, and "Ack all" clears it', async () => {
    const fine = await singles('mcp:agent@proj', ['#sim sleep=10ms one', '#sim sleep=10ms two']);
    const bad = await spawn('mcp:agent@proj', { task: '#sim fail=error owed' });
    const mine = await spawn('cli:log', { task: '#sim sleep=10ms a person asked' });
    const { context, page } = await openPage();
    await page.locator(`.note[data-run-id="${bad[0]}"]`).waitFor({ timeout: 20_000 });
    await page.locator(`.note[data-run-id="${mine[0]}"]`).waitFor({ timeout: 20_000 });
    await expect
      .poll(() => row(page, fine[0]!).getAttribute('data-status'), { timeout: 20_000 })
      .toBe('completed');
    expect(await page.locator(`.note[data-run-id="${fine[0]}"]`).count()).toBe(0);
    await page.locator('#ack-all').click();
    await page.locator('#notifications').waitFor({ state: 'hidden' });
    await page.reload();
    await page.locator('#app[data-state="ready"]').waitFor();
    expect(await page.locator('.note').count()).toBe(0);
    await context.close();
  }, 60_000);

  it('live lists the running runs first, wave members on their own rows, then the queued ones', async () => {
    const running = await spawn('mcp:agent@proj', {
      tasks: ['#sim hang r1', '#sim hang r2', '#sim hang r3'],
    });
    const waiting = await spawn('mcp:agent@proj', {
      tasks: Array.from({ length: 8 }, (_, i) => `#sim sleep=10ms waits ${i}`),
    });
    const { context, page } = await openPage();
    await page.locator('.tab[data-tab="live"]').click();
    await expect.poll(() => page.locator('tr.run').count(), { timeout: 20_000 }).toBe(11);
    const statuses = await page
      .locator('tr.run')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-status')));
    expect(statuses.slice(0, 3).every((s) => s === 'running' || s === 'starting')).toBe(true);
    expect(statuses.slice(3).every((s) => s === 'queued')).toBe(true);
    expect(await page.locator('tr.wave').count()).toBe(0);
    await cancelAll([...waiting, ...running]);
    await context.close();
  }, 60_000);

  it('sorting by a column, the tab, the filter and the selected run survive a reload', async () => {
    // Seconds apart: a loaded host adds process start-up to every duration (900 / 300 ms swapped once at 6 workers).
    const ids = await singles('cli:log', [
      '#sim sleep=50ms sortme short',
      '#sim sleep=5s sortme long',
      '#sim sleep=2500ms sortme mid',
    ]);
    const { context, page } = await openPage();
    for (const id of ids)
      await expect
        .poll(() => row(page, id).getAttribute('data-status'), { timeout: 20_000 })
        .toBe('completed');
    await page.locator('.tab[data-tab="completed"]').click();
    await page.locator('#filter').fill('sortme');
    await page.locator('button.sort[data-sort="duration"]').click();
    await page.locator('button.sort[data-sort="duration"]').click();
    const order = () =>
      page.locator('tr.run').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-run-id')));
    await expect.poll(order, { timeout: 20_000 }).toEqual([ids[1], ids[2], ids[0]]);
    await row(page, ids[2]!).locator('.run-id').click();
    await expect.poll(() => page.locator('#detail .run-id').textContent(), { timeout: 20_000 }).toBe(ids[2]);
    expect(new URL(page.url()).searchParams.get('sort')).toBe('-duration');
    await page.reload();
    await page.locator('#app[data-state="ready"]').waitFor();
    expect(await page.locator('.tab.active').getAttribute('data-tab')).toBe('completed');
    expect(await page.locator('#filter').inputValue()).toBe('sortme');
    expect(await page.locator('th[aria-sort="descending"] button').getAttribute('data-sort')).toBe(
      'duration',
    );
    await expect.poll(order, { timeout: 20_000 }).toEqual([ids[1], ids[2], ids[0]]);
    await expect.poll(() => page.locator('#detail .run-id').textContent(), { timeout: 20_000 }).toBe(ids[2]);
    // The detail reads as fields, not a dump.
    expect(await page.locator('#detail dd[data-field="Duration"]').textContent()).toMatch(/^\d+(\.\d)? s$/);
    expect(await page.locator('#detail dt').allTextContents()).not.toContain('peak_mem_gb');
    await context.close();
  }, 60_000);

  it('cancel asks first; "Keep it running" keeps it, "Yes, cancel" cancels', async () => {
    const [id] = await spawn('cli:log', { task: '#sim hang cancel me' });
    const { context, page } = await openPage();
    await row(page, id!).locator('.run-id').click();
    await page.locator('#cancel').click();
    await page.locator('#cancel-keep').click();
    await page.locator('#cancel').click();
    expect(await row(page, id!).getAttribute('data-status')).toMatch(/running|starting/);
    await page.locator('#cancel-confirm').click();
    await expect
      .poll(() => row(page, id!).getAttribute('data-status'), { timeout: 20_000 })
      .toBe('cancelled');
    await context.close();
  }, 60_000);

  it('bulk cancel: ticked live runs are cancelled together after one confirm', async () => {
    const ids = await singles('cli:log', ['#sim hang bulk 1', '#sim hang bulk 2', '#sim hang bulk 3']);
    const { context, page } = await openPage();
    for (const id of ids.slice(0, 2)) await row(page, id).locator('input.pick').check();
    expect(await page.locator('#bulk-count').textContent()).toBe('2 selected');
    await page.locator('#bulk-cancel').click();
    await page.locator('#bulk-confirm').click();
    for (const id of ids.slice(0, 2))
      await expect
        .poll(() => row(page, id).getAttribute('data-status'), { timeout: 20_000 })
        .toBe('cancelled');
    expect(await row(page, ids[2]!).getAttribute('data-status')).toMatch(/running|starting/);
    await cancelAll(ids);
    await context.close();
  }, 60_000);

  it('re-run starts a new run with the same task and says so; the old run stays', async () => {
    const [old] = await spawn('mcp:agent@proj', { task: '#sim sleep=10ms run me again' });
    const { context, page } = await openPage();
    await expect
      .poll(() => row(page, old!).getAttribute('data-status'), { timeout: 20_000 })
      .toBe('completed');
    await row(page, old!).locator('.run-id').click();
    expect(await page.locator('#detail .hint').textContent()).toContain('new run');
    await page.locator('#rerun').click();
    await expect.poll(() => page.locator('#detail .run-id').textContent(), { timeout: 20_000 }).not.toBe(old);
    const fresh = (await page.locator('#detail .run-id').textContent()) as string;
    expect(await page.locator('#toast').textContent()).toContain(`re-run of ${old}`);
    const status = await api(daemon, 'GET', `/api/runs/${fresh}`);
    expect(status.body.run).toMatchObject({
      task_preview: '#sim sleep=10ms run me again',
      parent: 'cli:dashboard',
    });
    await row(page, fresh).waitFor({ timeout: 20_000 });
    expect(await row(page, old!).getAttribute('data-status')).toBe('completed');
    await context.close();
  }, 60_000);
});
