import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { DaemonProcess } from '../helpers/daemon-process.js';

/** An MCP SDK client on a real daemon's Streamable HTTP endpoint, for the daemon-mcp test files. */

export type Body = { ok: boolean; refusal?: { code: string; path?: string }; [k: string]: unknown };

export async function httpClient(d: DaemonProcess, headers: Record<string, string> = {}) {
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${d.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${d.token}`, ...headers } },
    }),
  );
  return client;
}

export const call = async (client: Client, name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 }))
    .structuredContent as Body;
