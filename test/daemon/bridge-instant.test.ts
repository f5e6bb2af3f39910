import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crewCommand, type DaemonProcess, startDaemonProcess } from '../helpers/daemon-process.js';
import { call, httpClient } from './mcp-http-client.js';

/** `crew mcp` as a parent agent starts it: stdio, the daemon found by CREW_URL. */
function bridgeTransport(d: DaemonProcess): StdioClientTransport {
  const [node, args] = crewCommand(['mcp']);
  return new StdioClientTransport({
    command: node,
    args,
    env: { ...(process.env as Record<string, string>), CREW_HOME: d.home, CREW_URL: d.url },
    stderr: 'pipe',
  });
}

function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    }),
  ]);
}

describe('crew mcp answers initialize and tools/list itself, before the daemon does', () => {
  let d: DaemonProcess;
  beforeAll(async () => {
    d = await startDaemonProcess();
  }, 30_000);
  afterAll(async () => {
    d.proc.kill('SIGCONT');
    expect(await d.stop()).toBe(0);
    d.cleanup();
  });

  it('while the daemon cannot answer (stopped), a client connects and lists the tools; a call waits for it', async () => {
    const client = new Client({ name: 'instant-test', version: '1' });
    d.proc.kill('SIGSTOP');
    try {
      // The stopped daemon accepts connections and never answers: only the bridge itself can reply.
      await within(15_000, 'initialize', client.connect(bridgeTransport(d)));
      expect(client.getServerVersion()?.name).toBe('crew');
      expect(client.getInstructions()).toMatch(/spawn_run/);
      const tools = await within(5_000, 'tools/list', client.listTools());
      expect(tools.tools.map((t) => t.name)).toContain('spawn_sub_agents');
      const pending = call(client, 'resource_status', {});
      let settled = false;
      void pending.finally(() => {
        settled = true;
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(settled).toBe(false);
      d.proc.kill('SIGCONT');
      expect(await pending).toMatchObject({ ok: true });
    } finally {
      d.proc.kill('SIGCONT');
      await client.close();
    }
  }, 60_000);

  it("the bridge's tools/list and instructions equal the daemon's own over HTTP", async () => {
    const bridge = new Client({ name: 'bridge-side', version: '1' });
    await bridge.connect(bridgeTransport(d));
    const direct = await httpClient(d);
    try {
      expect(await bridge.listTools()).toEqual(await direct.listTools());
      expect(bridge.getInstructions()).toBe(direct.getInstructions());
      expect(bridge.getServerCapabilities()).toEqual(direct.getServerCapabilities());
    } finally {
      await bridge.close();
      await direct.close();
    }
  }, 60_000);
});
