import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, type DaemonProcess, pollFor, startDaemonProcess } from '../helpers/daemon-process.js';

type Run = { id: string; status: string; stop?: string };

/** Live `sleep 1000` processes (the simulator's child=sleep grandchildren). */
function sleepers(): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (cmd.startsWith('sleep\u00001000') && stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z')
        out.push(Number(name));
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

describe('budgets on real processes through a real daemon', () => {
  let d: DaemonProcess;
  beforeAll(async () => {
    d = await startDaemonProcess({ config: { 'agent.subagent_timeout_secs': 2, 'host.kill_grace_secs': 1 } });
  }, 30_000);
  afterAll(async () => {
    await d.stop();
    d.cleanup();
  });

  const runOf = async (id: string) =>
    ((await api(d, 'GET', '/api/runs')).body.runs as Run[]).find((r) => r.id === id);

  it('a hanging agent with a grandchild ends timed_out at the timeout, and the grandchild is gone', async () => {
    const before = new Set(sleepers());
    const r = await api(d, 'POST', '/api/spawn', { args: { task: '#sim child=sleep hang' } });
    const id = (r.body.runs as Run[])[0]!.id;
    const grandchild = await pollFor('the grandchild', async () =>
      sleepers().find((pid) => !before.has(pid)),
    );
    const ended = await pollFor('the timeout', async () => {
      const run = await runOf(id);
      return run && run.status !== 'running' && run.status !== 'starting' ? run : undefined;
    });
    expect(ended.status).toBe('timed_out');
    expect(sleepers()).not.toContain(grandchild);
  }, 60_000);

  it('tools=150 with max_turns 100 ends completed with stop turn_limit', async () => {
    const r = await api(d, 'POST', '/api/spawn', {
      args: { task: '#sim tools=150 sleep=1500ms', max_turns: 100 },
    });
    const id = (r.body.runs as Run[])[0]!.id;
    const ended = await pollFor('the turn limit', async () => {
      const run = await runOf(id);
      return run && run.status !== 'running' && run.status !== 'starting' ? run : undefined;
    });
    expect(ended).toMatchObject({ status: 'completed', stop: 'turn_limit' });
  }, 60_000);
});
