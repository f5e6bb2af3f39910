import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { crewCommand } from '../helpers/daemon-process.js';

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('crew mcp with no daemon running', () => {
  it('answers initialize at once, starts one in the background, then forwards to it', async () => {
    const home = mkdtempSync(join(tmpdir(), 'crew-bridge-'));
    writeFileSync(join(home, 'config.json'), JSON.stringify({ 'agent.spawn_min_memory_gb': 0 }));
    const url = `http://127.0.0.1:${await freePort()}`;
    const [node, args] = crewCommand(['mcp']);
    const client = new Client({ name: 'bridge-test', version: '1' });
    let daemonPid: number | undefined;
    try {
      await client.connect(
        new StdioClientTransport({
          command: node,
          args,
          env: { ...(process.env as Record<string, string>), CREW_HOME: home, CREW_URL: url },
          stderr: 'pipe',
        }),
      );
      // initialize is the bridge's own answer; a tool call waits until the daemon it started answers.
      const answer = await client.callTool({ name: 'resource_status', arguments: {} });
      expect((answer.structuredContent as { ok: boolean }).ok).toBe(true);
      expect(existsSync(join(home, 'gateway.json'))).toBe(true);
      const file = JSON.parse(readFileSync(join(home, 'gateway.json'), 'utf8')) as {
        pid: number;
        url: string;
      };
      daemonPid = file.pid;
      expect(file.url).toBe(url);
    } finally {
      await client.close();
      if (daemonPid !== undefined) {
        process.kill(daemonPid, 'SIGTERM');
        const deadline = Date.now() + 20_000;
        while (running(daemonPid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
        expect(running(daemonPid)).toBe(false);
      }
      rmSync(home, { recursive: true, force: true });
    }
  }, 60_000);
});
