import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { api, type DaemonProcess, pollFor, startDaemonProcess } from '../helpers/daemon-process.js';

/**
 * `host.oom_score_adj` through a real `crew serve`: a run's agent process reads its own
 * `/proc/self/oom_score_adj` and prints it. With the default the run has 500 and the daemon keeps what it
 * was started with; with 0 the run inherits the daemon's.
 */

const SELF_REPORT = {
  runner: 'command',
  command: [
    process.execPath,
    '-e',
    'console.log("adj=" + require("node:fs").readFileSync("/proc/self/oom_score_adj", "utf8").trim())',
    '{task}',
  ],
};
const adjOf = (pid: number) => Number(readFileSync(`/proc/${pid}/oom_score_adj`, 'utf8').trim());

describe('host.oom_score_adj in a real daemon', () => {
  let d: DaemonProcess | undefined;
  afterEach(async () => {
    await d?.stop();
    d?.cleanup();
    d = undefined;
  });

  async function adjOfARun(config: Record<string, unknown>): Promise<string> {
    d = await startDaemonProcess({ config: { 'agents.self': SELF_REPORT, ...config } });
    const spawned = await api(d, 'POST', '/api/spawn', {
      parent: 'cli:oom',
      args: { task: 'x', agent: 'self' },
    });
    expect(spawned.body.ok, JSON.stringify(spawned.body)).toBe(true);
    const id = (spawned.body.runs as { id: string }[])[0]!.id;
    const daemon = d;
    await pollFor('the run to complete', async () => {
      const run = (await api(daemon, 'GET', `/api/runs/${id}?limit=1`)).body.run as { status: string };
      return run.status === 'completed' ? true : undefined;
    });
    const text = (await api(daemon, 'GET', `/api/runs/${id}?offset=0&limit=10`)).body.text as string;
    return /adj=(-?\d+)/.exec(text)?.[1] ?? `no adj in ${JSON.stringify(text)}`;
  }

  it('by default a run’s process is raised to 500 and the daemon is not', async () => {
    expect(await adjOfARun({})).toBe('500');
    expect(adjOf(d!.proc.pid as number)).toBe(adjOf(process.pid));
  });

  it('0 leaves a run’s process with the daemon’s own', async () => {
    expect(await adjOfARun({ 'host.oom_score_adj': 0 })).toBe(String(adjOf(process.pid)));
  });

  it('a value out of range is refused at start, naming the key', async () => {
    const home = mkdtempSync(join(tmpdir(), 'crew-oom-'));
    try {
      await expect(startDaemonProcess({ home, config: { 'host.oom_score_adj': 1001 } })).rejects.toThrow(
        /host\.oom_score_adj/,
      );
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
