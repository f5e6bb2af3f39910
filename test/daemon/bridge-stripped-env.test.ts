import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crewCommand, type DaemonProcess, startDaemonProcess } from '../helpers/daemon-process.js';

/**
 * `crew mcp` under a client that strips the environment (Codex, MCP Inspector 2.x pass only a few
 * variables; issue 29): spawned here with PATH and HOME only. With `--home` in its args it finds the
 * daemon; misconfigured, every tool call says why at once, never a 15 s "did not answer".
 */
describe('crew mcp with a stripped environment', () => {
  let d: DaemonProcess;
  const scratch = mkdtempSync(join(tmpdir(), 'crew-stripped-'));
  beforeAll(async () => {
    d = await startDaemonProcess();
  }, 60_000);
  afterAll(async () => {
    expect(await d.stop()).toBe(0);
    d.cleanup();
    rmSync(scratch, { recursive: true, force: true });
  });

  /** A fresh HOME, so `~/.crew` is the test's own. */
  function freshHome(name: string): string {
    const home = join(scratch, name);
    mkdirSync(join(home, '.crew'), { recursive: true });
    return home;
  }

  async function bridge(home: string, extraArgs: string[] = []) {
    const [node, args] = crewCommand(['mcp', ...extraArgs]);
    const stderr: string[] = [];
    const transport = new StdioClientTransport({
      command: node,
      args,
      cwd: scratch,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
    const client = new Client({ name: 'stripped', version: '1' });
    await client.connect(transport);
    return { client, stderr };
  }

  async function toolCall(client: Client, name: string, args: Record<string, unknown>) {
    const started = Date.now();
    const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 });
    return {
      result: result as {
        isError?: boolean;
        structuredContent?: { ok: boolean; refusal?: { code: string; message: string } };
      },
      secs: (Date.now() - started) / 1000,
    };
  }

  it('--home in the args finds the daemon of another CREW_HOME: spawn and wait work', async () => {
    const { client } = await bridge(freshHome('ok'), ['--home', d.home]);
    const { result } = await toolCall(client, 'spawn_run', { task: '#sim sleep=20ms stripped' });
    expect(result.structuredContent?.ok).toBe(true);
    const id = (result.structuredContent as unknown as { runs: { id: string }[] }).runs[0]!.id;
    const waited = await client.callTool({ name: 'spawn_wait', arguments: { timeout_secs: 30 } });
    expect(JSON.stringify(waited.structuredContent)).toContain(id);
    await client.close();
  }, 60_000);

  it('without --home, a daemon of another home on the port: daemon_unavailable naming the cause, at once', async () => {
    const home = freshHome('foreign');
    // The default home points at the port a daemon of another CREW_HOME holds (as 7878 would).
    writeFileSync(
      join(home, '.crew', 'gateway.json'),
      JSON.stringify({
        pid: 1,
        host: '127.0.0.1',
        port: Number(new URL(d.url).port),
        url: d.url,
        started_at: '',
      }),
    );
    const { client } = await bridge(home);
    const { result, secs } = await toolCall(client, 'spawn_run', { task: 'x' });
    expect(result.isError).toBe(true);
    expect(result.structuredContent?.refusal?.code).toBe('daemon_unavailable');
    expect(result.structuredContent?.refusal?.message).toMatch(/another CREW_HOME.*--home/);
    console.log(`foreign daemon reported in ${secs.toFixed(1)}s`);
    await client.close();
  }, 60_000);

  it('the port is taken by something else: the daemon’s own cause (EADDRINUSE), not a 15 s timeout', async () => {
    const sockets: Socket[] = [];
    const squatter: Server = createServer((s) => sockets.push(s)); // accepts, never answers
    await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
    const port = (squatter.address() as { port: number }).port;
    try {
      const home = freshHome('port');
      writeFileSync(
        join(home, '.crew', 'gateway.json'),
        JSON.stringify({ pid: 1, host: '127.0.0.1', port, url: `http://127.0.0.1:${port}`, started_at: '' }),
      );
      const { client } = await bridge(home);
      const { result, secs } = await toolCall(client, 'spawn_run', { task: 'x' });
      expect(result.structuredContent?.refusal?.code).toBe('daemon_unavailable');
      expect(result.structuredContent?.refusal?.message).toMatch(/could not start.*EADDRINUSE/);
      expect(result.structuredContent?.refusal?.message).not.toMatch(/did not answer within/);
      console.log(`port in use reported in ${secs.toFixed(1)}s`);
      await client.close();
    } finally {
      for (const s of sockets) s.destroy();
      squatter.close();
    }
  }, 60_000);

  it('a home that cannot be used (a file): daemon_unavailable naming it, at once', async () => {
    const file = join(scratch, 'not-a-dir');
    writeFileSync(file, 'x');
    const { client } = await bridge(freshHome('bad'), ['--home', file]);
    const { result, secs } = await toolCall(client, 'spawn_run', { task: 'x' });
    expect(result.structuredContent?.refusal?.code).toBe('daemon_unavailable');
    expect(result.structuredContent?.refusal?.message).toContain(file);
    console.log(`bad home reported in ${secs.toFixed(1)}s`);
    await client.close();
  }, 60_000);
});
