import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  api,
  crewCommand,
  type DaemonProcess,
  pollFor,
  startDaemonProcess,
} from '../helpers/daemon-process.js';
import { call } from './mcp-http-client.js';

/**
 * A parent that restarts in the same project is the same parent (issue 29): the real `crew mcp`, killed
 * while its runs are going and started again in the same directory by the same client, gets every
 * earlier completion once; a bridge in another project gets none of them.
 */
describe('crew mcp: the parent outlives the bridge process', () => {
  let d: DaemonProcess;
  const projects = mkdtempSync(join(tmpdir(), 'crew-projects-'));
  const project = join(projects, 'my-project');
  const elsewhere = join(projects, 'other-project');
  beforeAll(async () => {
    const { mkdirSync } = await import('node:fs');
    mkdirSync(project);
    mkdirSync(elsewhere);
    d = await startDaemonProcess({ config: { 'agent.max_subagents': 4 } });
  }, 60_000);
  afterAll(async () => {
    expect(await d.stop()).toBe(0);
    d.cleanup();
    rmSync(projects, { recursive: true, force: true });
  });

  async function bridge(cwd: string, name: string, extraArgs: string[] = []) {
    const [node, args] = crewCommand(['mcp', ...extraArgs]);
    const transport = new StdioClientTransport({
      command: node,
      args,
      cwd,
      env: { ...(process.env as Record<string, string>), CREW_HOME: d.home },
      stderr: 'pipe',
    });
    const client = new Client({ name, version: '1' });
    await client.connect(transport);
    return { client, transport };
  }

  async function drain(client: Client): Promise<string[]> {
    const seen: string[] = [];
    for (;;) {
      const waited = await call(client, 'spawn_wait', { timeout_secs: 1 });
      const events = waited.events as { run_ids: string[] }[];
      if (events.length === 0) return seen;
      for (const event of events) seen.push(...event.run_ids);
    }
  }

  it('killed mid-run and started again in the same directory: every earlier completion, once', async () => {
    const first = await bridge(project, 'restart-test');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const spawned = await call(first.client, 'spawn_run', { task: `#sim sleep=1500ms run ${i}` });
      ids.push((spawned.runs as { id: string }[])[0]!.id);
    }
    const pid = first.transport.pid;
    expect(pid).toBeTypeOf('number');
    process.kill(pid!, 'SIGKILL');
    await first.client.close().catch(() => undefined);
    // Every run ends while no bridge of this parent is up.
    await pollFor('the runs to end', async () => {
      const runs = await Promise.all(ids.map((id) => api(d, 'GET', `/api/runs/${id}`)));
      return runs.every((r) => (r.body.run as { status: string }).status === 'completed') ? true : undefined;
    });

    const stranger = await bridge(elsewhere, 'restart-test');
    expect(await drain(stranger.client)).toEqual([]);
    await stranger.client.close();

    const second = await bridge(project, 'restart-test');
    const got = await drain(second.client);
    expect([...got].sort()).toEqual([...ids].sort());
    expect(await drain(second.client)).toEqual([]);
    // Its runs are still its own: listed in the new session.
    const listed = ((await call(second.client, 'spawn_list', {})).runs as { id: string }[]).map((r) => r.id);
    expect(listed.sort()).toEqual([...ids].sort());
    await second.client.close();
    console.log(`bridge restart: ${got.length} of ${ids.length} completions delivered after the restart`);
  }, 90_000);

  it('--parent names the parent, whatever the directory; a bad name stops the bridge with its reason', async () => {
    const a = await bridge(project, 'one', ['--parent', 'shared-parent']);
    const spawned = await call(a.client, 'spawn_run', { task: '#sim sleep=20ms named' });
    const id = (spawned.runs as { id: string }[])[0]!.id;
    await a.client.close();
    await pollFor('the run to end', async () => {
      const run = await api(d, 'GET', `/api/runs/${id}`);
      return (run.body.run as { status: string }).status === 'completed' ? true : undefined;
    });
    const b = await bridge(elsewhere, 'two', ['--parent', 'shared-parent']);
    expect(await drain(b.client)).toEqual([id]);
    await b.client.close();
    await expect(bridge(project, 'bad', ['--parent', 'two words'])).rejects.toThrow();
  }, 60_000);
});
