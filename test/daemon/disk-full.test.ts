import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TERMINAL_STATUSES } from '../../src/core/types.js';
import { api, type DaemonProcess, pollFor, startDaemonProcess } from '../helpers/daemon-process.js';

type Run = { id: string; status: string; delivery: string };

const TERMINAL: ReadonlySet<string> = new Set(TERMINAL_STATUSES);

/**
 * A real full disk: CREW_HOME on a 4 MiB tmpfs, filled by a run's transcript and a filler file. Mounting
 * needs root, which CI has; elsewhere the test says so and does not pretend to have run.
 */
const isRoot = process.getuid?.() === 0;
if (!isRoot && process.env.CI === 'true')
  throw new Error('the disk-full test needs root on CI to mount a tmpfs');

describe.runIf(isRoot)('a full disk under CREW_HOME (a real tmpfs)', () => {
  let mount: string;
  let d: DaemonProcess;
  beforeAll(async () => {
    mount = mkdtempSync(join(tmpdir(), 'crew-full-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', mount]);
    d = await startDaemonProcess({
      home: mount,
      config: { 'agent.max_subagents': 3, 'agent.transcript_max_bytes': 64 * 1024 * 1024 },
    });
  }, 30_000);
  afterAll(async () => {
    await d?.stop();
    execFileSync('umount', ['-l', mount]);
    rmSync(mount, { recursive: true, force: true });
  });

  const runs = async () => (await api(d, 'GET', '/api/runs?limit=500')).body.runs as Run[];

  it('admission answers storage_unavailable (503) while writes fail; the run ends and admission works once space is freed', async () => {
    // Most of the space goes to a filler the test can delete; the run's transcript takes the rest.
    writeFileSync(join(mount, 'filler'), Buffer.alloc(2 * 1024 * 1024));
    const big = await api(d, 'POST', '/api/spawn', { parent: 'cli:log', args: { task: '#sim bytes=3mb' } });
    expect(big.body.ok, JSON.stringify(big.body)).toBe(true);
    const id = (big.body.runs as { id: string }[])[0]!.id;
    // Each probe is a real spawn: until the disk fills, probes are admitted (and queue behind the cap).
    const admitted = [id];
    const refused = await pollFor(
      'a spawn refused storage_unavailable',
      async () => {
        const r = await api(d, 'POST', '/api/spawn', { parent: 'cli:log', args: { task: '#sim probe' } });
        if (r.status === 200) admitted.push(...(r.body.runs as { id: string }[]).map((run) => run.id));
        return r.status === 503 ? r : undefined;
      },
      30_000,
    );
    expect(refused.body).toMatchObject({ ok: false, refusal: { code: 'storage_unavailable' } });
    // Every admitted run is accounted for, and nothing was admitted by the refused spawns.
    const listed = await runs();
    expect(listed.map((r) => r.id).sort()).toEqual([...admitted].sort());

    rmSync(join(mount, 'filler'));
    const ended = await pollFor(
      'the run ended and delivered once the store accepts writes',
      async () =>
        (await runs()).find((r) => r.id === id && r.status !== 'running' && r.delivery !== 'pending'),
      60_000,
    );
    expect(['completed', 'failed']).toContain(ended.status);
    // The probes admitted while the disk filled (one per 100 ms poll, often dozens) queue at cap 3; at a
    // second or more per agent process on a loaded machine, the new run below would wait behind all of
    // them. Cancel the ones still live: cancel must work once the store accepts writes again, and the new
    // run then starts at once instead of in a time that grows with how long the disk took to fill.
    for (const probe of admitted.slice(1)) {
      const r = await api(d, 'POST', `/api/runs/${probe}/cancel`, {});
      expect([200, 409], JSON.stringify(r.body)).toContain(r.status);
    }
    const after = await pollFor(
      'admission to work again without a restart',
      async () => {
        const r = await api(d, 'POST', '/api/spawn', {
          parent: 'cli:log',
          args: { task: '#sim sleep=50ms ok' },
        });
        return r.status === 200 ? r : undefined;
      },
      30_000,
    );
    const next = (after.body.runs as { id: string }[])[0]!.id;
    const done = await pollFor(
      'the new run to complete',
      async () => (await runs()).find((r) => r.id === next && r.status === 'completed'),
      30_000,
    );
    expect(done.status).toBe('completed');
    // The probes admitted before the disk filled start with this run (cap 3, FIFO) and may end after it:
    // wait for every run to end, then the live counts of that same answer must be zero (no permit or
    // queue entry leaked by the refused or rolled-back admissions).
    const settled = await pollFor(
      'every admitted run to end',
      async () => {
        const body = (await api(d, 'GET', '/api/runs?limit=500')).body as {
          runs: Run[];
          running: number;
          queued: number;
        };
        return body.runs.every((r) => TERMINAL.has(r.status)) ? body : undefined;
      },
      60_000,
    );
    expect(settled.runs).toHaveLength(admitted.length + 1);
    expect(settled.running).toBe(0);
    expect(settled.queued).toBe(0);
  }, 150_000);
});
