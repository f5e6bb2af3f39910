import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { bundledCommand } from '../helpers/test-bundle.js';

/** `test/fixtures/crash/crash-gateway.ts`, from the test bundle. */
function start(home: string, args: string[]) {
  const [node, ...argv] = bundledCommand('test-fixtures/crash-gateway', ...args) as [string, ...string[]];
  const proc = spawn(node, argv, {
    env: { ...process.env, CREW_HOME: home },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  proc.stderr.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return { proc, exited, err: () => err };
}

function deliveries(home: string): { id: string; kind: string; run_ids: string[]; pid: number }[] {
  const path = join(home, 'deliveries.jsonl');
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

describe('crash and restart with real processes on SQLite', () => {
  it('SIGKILL mid-way: every run ends exactly once, the queue completes, the digest arrives once', async () => {
    const home = mkdtempSync(join(tmpdir(), 'crew-crash-'));
    try {
      const first = start(home, ['admit']);
      const deadline = Date.now() + 30_000;
      while (deliveries(home).length < 8 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      first.proc.kill('SIGKILL');
      await first.exited;
      const atKill = deliveries(home).length;
      expect(atKill).toBeGreaterThanOrEqual(8);

      const second = start(home, []);
      const code = await second.exited;
      expect(code, second.err()).toBe(0);

      const store = new SqliteStore(join(home, 'crew.db'));
      const runs = store.runs({ limit: 1000 });
      store.close();
      expect(runs).toHaveLength(90);
      const statuses = new Map<string, number>();
      for (const r of runs) statuses.set(r.run.status, (statuses.get(r.run.status) ?? 0) + 1);
      // Every run ended: completed, or lost when it was executing at the kill (at most the cap of 3).
      expect([...statuses.keys()].every((s) => s === 'completed' || s === 'lost')).toBe(true);
      expect(statuses.get('lost') ?? 0).toBeLessThanOrEqual(3);
      expect(runs.every((r) => r.delivery === 'delivered')).toBe(true);

      const raw = deliveries(home);
      const unique = new Map(raw.map((d) => [d.id, d]));
      const perRun = new Map<string, number>();
      for (const event of unique.values())
        for (const id of event.run_ids) perRun.set(id, (perRun.get(id) ?? 0) + 1);
      expect(perRun.size).toBe(90);
      expect([...perRun.values()].every((n) => n === 1)).toBe(true);
      expect([...unique.values()].filter((e) => e.kind === 'digest')).toHaveLength(1);
      // Raw repeats (before the sink deduplicates) are only events that were in flight at the kill.
      expect(raw.length - unique.size).toBeLessThanOrEqual(3);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }, 90_000);
});
