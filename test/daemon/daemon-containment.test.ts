import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, type DaemonProcess, pollFor, startDaemonProcess } from '../helpers/daemon-process.js';

/**
 * Issue 28, item 3 through a real daemon: a command agent that escapes its process group and session
 * (`setsid`, and a `setsid` + double fork) is ended with its run at the timeout, and `resource_status`
 * says which containment is in force. These machines allow a cgroup v2 per run (root, cgroup2 mounted),
 * so it is `cgroup_v2` here; CI must have it too.
 */

const TOKEN = `1000.${process.pid}77`;

function escapees(): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2)[0];
      if (cmd === `sleep\u0000${TOKEN}\u0000` && state !== 'Z') out.push(Number(name));
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

describe('containment through a real daemon', () => {
  let d: DaemonProcess;
  beforeAll(async () => {
    d = await startDaemonProcess({
      config: {
        'agent.subagent_timeout_secs': 2,
        'host.kill_grace_secs': 1,
        'agents.escaper': {
          runner: 'command',
          command: ['sh', '-c', `setsid sleep ${TOKEN} & setsid sh -c '( sleep ${TOKEN} & ) &' & sleep 1000`],
        },
      },
    });
  }, 30_000);
  afterAll(async () => {
    for (const pid of escapees()) process.kill(pid, 'SIGKILL');
    await d.stop();
    d.cleanup();
  });

  it('resource_status names the containment in force and why', async () => {
    const r = await api(d, 'GET', '/api/resources');
    expect(r.body.containment).toMatchObject({
      kind: 'cgroup_v2',
      reason: expect.stringMatching(/cgroup v2 per run/),
    });
  });

  it('a run whose escapees left its group and session times out, and none of them remains', async () => {
    const r = await api(d, 'POST', '/api/spawn', { args: { task: 'escape', agent: 'escaper' } });
    const id = (r.body.runs as { id: string }[])[0]!.id;
    await pollFor('both escapees', async () => (escapees().length >= 2 ? true : undefined));
    const ended = await pollFor('the timeout', async () => {
      const runs = (await api(d, 'GET', '/api/runs')).body.runs as { id: string; status: string }[];
      const run = runs.find((x) => x.id === id);
      return run && run.status !== 'running' && run.status !== 'starting' ? run : undefined;
    });
    expect(ended.status).toBe('timed_out');
    expect(escapees()).toEqual([]);
  }, 60_000);
});
