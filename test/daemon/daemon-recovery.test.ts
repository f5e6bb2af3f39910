import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { api, pollFor, startDaemonProcess } from '../helpers/daemon-process.js';

type Run = { id: string; status: string; peak_mem_gb?: number; error?: string };

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** The command line of `pid`, arguments joined by spaces ('' once it has exited). */
function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, -1).join(' ');
  } catch {
    return '';
  }
}

/** (pid, ppid) of every process on the host. */
function processTable(): [number, number][] {
  const rows: [number, number][] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      rows.push([Number(name), Number(fields[1])]);
    } catch {
      // exited meanwhile
    }
  }
  return rows;
}

/** Every process whose parent chain reaches `root`. */
function descendants(root: number): number[] {
  const table = processTable();
  const out: number[] = [];
  const walk = (pid: number) => {
    for (const [child, parent] of table) {
      if (parent === pid) {
        out.push(child);
        walk(child);
      }
    }
  };
  walk(root);
  return out;
}

describe('restart recovery with real processes', () => {
  it('a daemon SIGKILLed while a run with a grandchild executes: after restart the run is lost and its whole tree is gone', async () => {
    // A command agent that starts a grandchild and ignores its closed pipes, so nothing but the restarted
    // gateway will end it (the simulator would exit on stdin EOF by itself).
    const stubborn = {
      runner: 'command',
      command: [
        process.execPath,
        '-e',
        'require("node:child_process").spawn("sleep", ["1000"], { stdio: "ignore" }); setInterval(() => {}, 1000)',
        '{task}',
      ],
    };
    const first = await startDaemonProcess({ config: { 'agents.stubborn': stubborn } });
    let home = first.home;
    let tree: number[] = [];
    try {
      const spawned = await api(first, 'POST', '/api/spawn', { args: { task: 'hang', agent: 'stubborn' } });
      const id = (spawned.body.runs as Run[])[0]!.id;
      await pollFor('the run to be running', async () => {
        const runs = (await api(first, 'GET', '/api/runs')).body.runs as Run[];
        return runs.find((r) => r.id === id && r.status === 'running');
      });
      // The agent process and its grandchild, named by what they run: the daemon may have other
      // children for a moment (a loader's helper, a probe), which need not outlive it.
      tree = await pollFor('the agent and its grandchild', async () => {
        const grandchild = descendants(first.proc.pid as number).find((pid) => cmdline(pid) === 'sleep 1000');
        const agent = processTable().find(([pid]) => pid === grandchild)?.[1];
        return agent !== undefined && grandchild !== undefined ? [agent, grandchild] : undefined;
      });
      first.proc.kill('SIGKILL');
      await new Promise((resolve) => first.proc.once('exit', resolve));
      // Detached in its own session, the tree outlives the gateway that started it.
      await new Promise((r) => setTimeout(r, 500));
      expect(tree.every(alive)).toBe(true);

      const second = await startDaemonProcess({ home, config: { 'agents.stubborn': stubborn } });
      home = second.home;
      try {
        const runs = (await api(second, 'GET', '/api/runs')).body.runs as Run[];
        const run = runs.find((r) => r.id === id);
        expect(run?.status).toBe('lost');
        expect(run?.error).toMatch(/restarted/);
        await pollFor('the lost tree to be gone', async () => (tree.some(alive) ? undefined : true), 10_000);
        const events = await api(second, 'GET', '/api/events?parent=cli:operator&timeout_secs=5');
        expect(
          (events.body.events as { run_ids: string[]; text: string }[]).flatMap((e) => e.run_ids),
        ).toEqual([id]);
      } finally {
        await second.stop();
      }
    } finally {
      for (const pid of tree) {
        try {
          process.kill(pid, 'SIGKILL'); // only if the test failed: never leave the tree behind
        } catch {
          // gone, as it should be
        }
      }
      first.cleanup();
    }
  }, 90_000);

  it('the sampler measures a real run: mem=300mb peaks within 15% of 300 MB above an idle simulator', async () => {
    const d = await startDaemonProcess({ config: { 'host.sample_interval_secs': 0.2 } });
    try {
      const spawn = async (task: string) => {
        const r = await api(d, 'POST', '/api/spawn', { args: { task } });
        return (r.body.runs as Run[])[0]!.id;
      };
      const idle = await spawn('#sim sleep=2s');
      const heavy = await spawn('#sim mem=300mb sleep=3s');
      const peaks = await pollFor('both runs to end with a peak', async () => {
        const runs = (await api(d, 'GET', '/api/runs')).body.runs as Run[];
        const a = runs.find((r) => r.id === idle);
        const b = runs.find((r) => r.id === heavy);
        return a?.peak_mem_gb !== undefined && b?.peak_mem_gb !== undefined
          ? [a.peak_mem_gb, b.peak_mem_gb]
          : undefined;
      });
      const [idleGb, heavyGb] = peaks as [number, number];
      const expectedMb = 300 + idleGb * 1024;
      expect(Math.abs(heavyGb * 1024 - expectedMb) / expectedMb).toBeLessThan(0.15);
    } finally {
      await d.stop();
      d.cleanup();
    }
  }, 60_000);
});
