import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, type DaemonProcess, pollFor, startDaemonProcess } from '../helpers/daemon-process.js';

type RunRow = { id: string; status: string; delivery: string; batch_id?: string };

/** A small deterministic generator, so a failing interleaving can be replayed from its seed. */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** Every entry of events.log and its rotations: event id → the run ids its header lines name. */
function logEntries(home: string): { id: string; runIds: string[] }[] {
  const files = [3, 2, 1].map((i) => join(home, `events.log.${i}`)).concat(join(home, 'events.log'));
  const out: { id: string; runIds: string[] }[] = [];
  for (const file of files) {
    if (!existsSync(file)) continue;
    const text = readFileSync(file, 'utf8');
    for (const chunk of text.split(/^(?=\[event [A-Za-z0-9_-]+\]$)/m)) {
      const id = /^\[event ([A-Za-z0-9_-]+)\]$/m.exec(chunk)?.[1];
      if (id === undefined) continue;
      const runIds = [...chunk.matchAll(/^\[Subagent completion event\] id=(\S+)/gm)].map(
        (m) => m[1] as string,
      );
      out.push({ id, runIds });
    }
  }
  return out;
}

const SEED = 0x5eed12;

describe('exactly once across restarts: SIGTERM and SIGKILL at random points during delivery', () => {
  it('five restarts: every event id is in events.log once, every run in exactly one event, every wave one digest', async () => {
    const random = lcg(SEED);
    const config = {
      'agent.max_subagents': 6,
      'agent.subagent_max_queued': 200,
      'agent.subagent_timeout_secs': 60,
      'host.kill_grace_secs': 1,
      'agent.shutdown_grace_secs': 0,
    };
    let d: DaemonProcess = await startDaemonProcess({ config });
    const home = d.home;
    try {
      const admitted = new Set<string>();
      const waves = new Set<string>();
      for (let w = 0; w < 12; w++) {
        const tasks = Array.from(
          { length: 5 },
          (_, i) => `#sim sleep=${100 + ((w * 7 + i * 13) % 500)}ms chunks=3`,
        );
        const r = await api(d, 'POST', '/api/spawn', { parent: 'cli:log', args: { tasks } });
        expect(r.body.ok, JSON.stringify(r.body)).toBe(true);
        waves.add(r.body.batch_id as string);
        for (const run of r.body.runs as { id: string }[]) admitted.add(run.id);
      }
      for (let i = 0; i < 20; i++) {
        const r = await api(d, 'POST', '/api/spawn', {
          parent: 'cli:log',
          args: { task: `#sim sleep=${50 + ((i * 31) % 400)}ms` },
        });
        expect(r.body.ok, JSON.stringify(r.body)).toBe(true);
        for (const run of r.body.runs as { id: string }[]) admitted.add(run.id);
      }
      const signals: string[] = [];
      for (let restart = 0; restart < 5; restart++) {
        // A point during delivery: once this daemon has written an entry (its sink is attached and the
        // relay is rendering and pushing while runs keep ending), a random moment later.
        const atStart = logEntries(home).length;
        const current = d;
        await pollFor(
          'this daemon to deliver an event',
          () => (logEntries(home).length > atStart || current.proc.exitCode !== null ? true : undefined),
          30_000,
        );
        await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 400)));
        const signal = random() < 0.5 ? 'SIGKILL' : 'SIGTERM';
        signals.push(signal);
        await d.stop(signal);
        d = await startDaemonProcess({ home, config });
      }
      // Both signals were exercised with this seed.
      expect(new Set(signals), `seed ${SEED}`).toEqual(new Set(['SIGKILL', 'SIGTERM']));
      const final = d;
      const rows = await pollFor(
        'every run ended and every event settled',
        async () => {
          const list = (await api(final, 'GET', '/api/runs?limit=1000')).body.runs as RunRow[];
          const mine = list.filter((r) => admitted.has(r.id));
          return mine.length === admitted.size && mine.every((r) => r.delivery !== 'pending')
            ? mine
            : undefined;
        },
        60_000,
      );
      expect(rows.every((r) => r.delivery === 'delivered')).toBe(true);

      const entries = logEntries(home);
      const perEvent = new Map<string, number>();
      for (const e of entries) perEvent.set(e.id, (perEvent.get(e.id) ?? 0) + 1);
      expect(
        [...perEvent].filter(([, n]) => n > 1),
        `seed ${SEED}`,
      ).toEqual([]);
      const perRun = new Map<string, number>();
      for (const e of entries) for (const id of e.runIds) perRun.set(id, (perRun.get(id) ?? 0) + 1);
      expect(
        [...admitted].filter((id) => perRun.get(id) !== 1),
        `seed ${SEED}`,
      ).toEqual([]);
      const digests = entries.filter((e) => e.runIds.length > 1);
      expect(digests).toHaveLength(waves.size);
    } finally {
      await d.stop();
      d.cleanup();
    }
  }, 180_000);
});
