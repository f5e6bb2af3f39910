import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Gateway } from '../../src/gateway/gateway.js';
import { createMcpServer } from '../../src/mcp/mcp-server.js';

/** An MCP SDK client connected in-process to Crew's MCP server for one parent. */
export async function mcpPair(gateway: Gateway, parent: string) {
  const server = createMcpServer(() => ({
    gateway,
    parent,
    cwd: '/tmp',
    resources: () => ({ cap: gateway.cap }),
  }));
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'test', version: '1.0.0' });
  await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
  return {
    client,
    async close() {
      await client.close();
      await server.close();
    },
  };
}
