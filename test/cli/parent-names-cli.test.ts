import { mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, pollFor, startDaemonProcess } from '../helpers/daemon-process.js';
import { runCrew } from './run-crew.js';

/**
 * Issue 32 §1 on the command line: `crew list` and `crew status` name a parent as the dashboard does
 * ("claude-code (session bc5b9186)", "CLI"), not by its raw key, which `--json` keeps as `parent` beside
 * `parent_name`. Against a real `crew serve`, with an MCP SDK client that names itself with a hostile
 * name; the name outlives the session and a restart of the daemon.
 */
describe('parent names in the CLI', () => {
  let d: DaemonProcess;
  let home: string;
  const env = () => ({ CREW_HOME: d.home, CREW_URL: d.url });
  beforeAll(async () => {
    home = realpathSync(mkdtempSync(join(tmpdir(), 'crew-parent-names-')));
    d = await startDaemonProcess({ home });
  }, 60_000);
  afterAll(async () => {
    await d.stop();
    d.cleanup();
  });

  it('crew list and crew status show the name an MCP client gave itself, cleaned, after its session and a restart', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${d.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${d.token}` } },
    });
    const client = new Client({ name: 'claude\u001b[31m-code\u202e\u200b', version: '1' });
    await client.connect(transport);
    const spawned = (await client.callTool({ name: 'spawn_run', arguments: { task: '#sim echo named' } }))
      .structuredContent as { ok: boolean; runs: { id: string }[] };
    expect(spawned.ok).toBe(true);
    const id = spawned.runs[0]?.id ?? '';
    const session = String(transport.sessionId);
    const label = `claude[31m-code (session ${session.slice(0, 8)})`;
    const fromCli = await runCrew(['spawn', '--json', '#sim echo from the cli'], env());
    expect(fromCli.code, fromCli.err).toBe(0);

    const list = await runCrew(['list'], env());
    expect(list.code, list.err).toBe(0);
    const lines = list.out.split('\n');
    expect(lines[1]).toMatch(/^ID\s+STATUS\s+AGENT\s+PARENT\s/);
    expect(lines.find((line) => line.startsWith(id))).toContain(label);
    expect(lines.find((line) => line.startsWith(JSON.parse(fromCli.out).runs[0].id))).toMatch(/\sCLI\s/);
    expect(list.out).not.toMatch(/[\u001b\u202e\u200b]/);
    expect(list.out).not.toContain(`mcp:${session}`);

    const status = await runCrew(['status', id], env());
    expect(status.code, status.err).toBe(0);
    expect(status.out.split('\n')[0]).toContain(`parent=${label}  `);

    const json = await runCrew(['list', '--json'], env());
    const run = (JSON.parse(json.out).runs as { id: string; parent: string; parent_name?: string }[]).find(
      (r) => r.id === id,
    );
    expect(run).toMatchObject({ parent: `mcp:${session}`, parent_name: 'claude[31m-code' });
    const one = JSON.parse((await runCrew(['status', id, '--json'], env())).out);
    expect(one.run).toMatchObject({ parent: `mcp:${session}`, parent_name: 'claude[31m-code' });

    await transport.terminateSession();
    await client.close();
    await d.stop();
    d = await startDaemonProcess({ home });
    const after = await pollFor('the run listed after the restart', async () => {
      const listed = await runCrew(['list'], env());
      return listed.out.includes(id) ? listed : undefined;
    });
    expect(after.out.split('\n').find((line) => line.startsWith(id))).toContain(label);
  }, 120_000);
});
