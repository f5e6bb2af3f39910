// The floor for bench/bridge: a bare MCP SDK stdio server with one tool and no work behind it. Plain
// JavaScript so it starts with plain `node`, as `crew mcp` does from dist/.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const server = new Server(
  { name: 'bare', version: '1' },
  { capabilities: { tools: {} }, instructions: 'bare' },
);
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [{ name: 'noop', description: 'does nothing', inputSchema: { type: 'object' } }],
}));
server.setRequestHandler(CallToolRequestSchema, async () => ({ content: [{ type: 'text', text: 'ok' }] }));
await server.connect(new StdioServerTransport());
