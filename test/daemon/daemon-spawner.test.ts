import { realpathSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { api, type DaemonProcess, pollFor, startDaemonProcess } from '../helpers/daemon-process.js';

/**
 * `host.spawner` through a real `crew serve` (issue 32 §4): a command run prints the executable of the
 * process that started it. By default that is the native helper (built by the daemon at start if this
 * machine has none yet: the runs before that come from the Node helper, which then gives way); with
 * `node` it is Node.
 */

const PARENT_EXE = {
  runner: 'command',
  command: ['sh', '-c', 'echo "parent=$(readlink /proc/$PPID/exe)"', '{task}'],
};

describe('host.spawner in a real daemon', () => {
  let d: DaemonProcess | undefined;
  afterEach(async () => {
    await d?.stop();
    d?.cleanup();
    d = undefined;
  });

  async function parentOfARun(daemon: DaemonProcess): Promise<string> {
    const spawned = await api(daemon, 'POST', '/api/spawn', {
      parent: 'cli:spawner',
      args: { task: 'x', agent: 'parent' },
    });
    expect(spawned.body.ok, JSON.stringify(spawned.body)).toBe(true);
    const id = (spawned.body.runs as { id: string }[])[0]!.id;
    await pollFor('the run to complete', async () => {
      const run = (await api(daemon, 'GET', `/api/runs/${id}?limit=1`)).body.run as { status: string };
      return run.status === 'completed' ? true : undefined;
    });
    const text = (await api(daemon, 'GET', `/api/runs/${id}?offset=0&limit=10`)).body.text as string;
    return /parent=(\S+)/.exec(text)?.[1] ?? `no parent in ${JSON.stringify(text)}`;
  }

  it('by default runs start from the native helper', async () => {
    d = await startDaemonProcess({ config: { 'agents.parent': PARENT_EXE } });
    const daemon = d;
    const parent = await pollFor('a run started by the native helper', async () => {
      const exe = await parentOfARun(daemon);
      return /\/crew-spawner-[0-9a-f]{16}$/.test(exe) ? exe : undefined;
    });
    expect(parent).toMatch(/crew-spawner-/);
    // resource_status says so, and where it is.
    const resources = await api(daemon, 'GET', '/api/resources');
    expect(resources.body.spawner).toEqual({
      helper: 'native',
      reason: expect.stringMatching(
        /^the C helper built with the host's compiler: .*\/crew-spawner-[0-9a-f]{16}$/,
      ),
    });
  });

  it('host.spawner node starts them from the Node helper', async () => {
    d = await startDaemonProcess({ config: { 'agents.parent': PARENT_EXE, 'host.spawner': 'node' } });
    expect(await parentOfARun(d)).toBe(realpathSync(process.execPath));
    expect(await parentOfARun(d)).toBe(realpathSync(process.execPath));
    expect((await api(d, 'GET', '/api/resources')).body.spawner).toEqual({
      helper: 'node',
      reason: 'host.spawner is node',
    });
  });
});
