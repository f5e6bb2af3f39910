import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, type DaemonProcess, pollFor, startDaemonProcess } from '../helpers/daemon-process.js';
import { abTranscript, REGEX_BOMBS } from '../helpers/regex-bombs.js';

const LINES = 100_000;
const STALL_LIMIT_MS = 50;

/**
 * The regex bombs of issue 13 over a 100k-line transcript, through the real daemon's status route (what
 * `spawn_status` calls), while another client pings `/api/health` back to back: the worst ping is how
 * long the daemon's event loop stalled. The grep runs on a pool thread within `agent.grep_budget_ms` and
 * answers with what it found and the offset to go on from.
 */
describe('grep cannot stall the gateway (the real daemon)', () => {
  let d: DaemonProcess;
  let baselineWorstMs = 0;
  let id: string;
  beforeAll(async () => {
    d = await startDaemonProcess({ config: { 'agent.grep_budget_ms': 1000 } });
    const spawned = await api(d, 'POST', '/api/spawn', { parent: 'cli:grep', args: { task: '#sim ok' } });
    id = (spawned.body.runs as { id: string }[])[0]!.id;
    await pollFor('the run to complete', async () => {
      const run = (await api(d, 'GET', `/api/runs/${id}?limit=1`)).body.run as { status: string };
      return run.status === 'completed' ? run : undefined;
    });
    // The transcript as the daemon reads it: the run's result file, rewritten with the bomb's text.
    writeFileSync(join(d.home, 'subagents', id, 'result.txt'), abTranscript(LINES));
    await measureBaseline();
  }, 60_000);
  afterAll(async () => {
    await d?.stop();
    d?.cleanup();
  });

  /** Runs `call` while pinging /api/health back to back; the worst ping latency in ms. */
  async function worstPingDuring<T>(call: () => Promise<T>): Promise<{ result: T; worstMs: number }> {
    let done = false;
    let worstMs = 0;
    const pinger = (async () => {
      while (!done) {
        const started = performance.now();
        try {
          await fetch(`${d.url}/api/health`, { headers: { authorization: `Bearer ${d.token}` } });
        } catch {
          continue; // a kept-alive socket the server closed between pings: not a stall, ping again
        }
        worstMs = Math.max(worstMs, performance.now() - started);
      }
    })();
    try {
      const result = await call();
      return { result, worstMs };
    } finally {
      done = true;
      await pinger;
    }
  }

  /**
   * The worst ping while another process keeps one core busy, as the grep thread does: this machine's own
   * scheduling noise, which a loaded 2-core box puts in the tens of ms. A stall of the daemon's event loop
   * comes on top of it.
   */
  async function measureBaseline(): Promise<void> {
    const burner = spawn(process.execPath, [
      '-e',
      'const end = Date.now() + 3000; while (Date.now() < end);',
    ]);
    const exited = new Promise((resolve) => burner.once('exit', resolve));
    const busy = await worstPingDuring(() => exited);
    baselineWorstMs = busy.worstMs;
  }

  it.each(REGEX_BOMBS)(
    '%s: the event loop never stalls 50 ms; the budget returns matches so far with the continuation',
    async (pattern) => {
      const grep = encodeURIComponent(pattern);
      const started = performance.now();
      const { result: page, worstMs } = await worstPingDuring(() =>
        api(d, 'GET', `/api/runs/${id}?grep=${grep}&limit=1000`),
      );
      const tookMs = performance.now() - started;
      console.log(
        `${pattern}: answered in ${tookMs.toFixed(0)} ms, worst /api/health ${worstMs.toFixed(1)} ms (idle ${baselineWorstMs.toFixed(1)} ms)`,
      );
      expect(page.body.ok, JSON.stringify(page.body).slice(0, 500)).toBe(true);
      const text = page.body.text as string;
      const toLine = page.body.to_line as number;
      expect(text).toContain(`more available — call again with offset=${toLine}`);
      expect(text).toContain('(agent.grep_budget_ms)');
      expect(toLine).toBeGreaterThan(0);
      expect(toLine).toBeLessThan(LINES);
      expect(tookMs).toBeLessThan(10_000);
      // The stall the grep adds, over what the daemon already shows on this machine with a core kept busy.
      // Twice the baseline: that noise varies between two windows of a few seconds (a soak with four test
      // files at once saw 108 ms against a 32 ms baseline), while a grep on the event loop blocks it for its
      // whole budget (1000 ms here), far past either bound. bench/grep measures the stall itself (~14 ms).
      expect(worstMs).toBeLessThan(STALL_LIMIT_MS + 2 * baselineWorstMs);
      expect(worstMs).toBeLessThan(500);

      // The caller goes on from where the budget stopped it.
      const next = await api(d, 'GET', `/api/runs/${id}?grep=${grep}&limit=1000&offset=${toLine}`);
      expect(next.body.from_line).toBe(toLine + 1);
      expect(next.body.to_line as number).toBeGreaterThan(toLine);
    },
    60_000,
  );
});
