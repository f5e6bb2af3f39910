import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runtimeClosure } from './import-graph.js';

const SRC = join(import.meta.dirname, '../../src');

/**
 * `crew mcp` answers `initialize` before anything else loads (docs/decisions.md): its static imports must
 * stay those a bare MCP SDK stdio server has, plus a few small modules of Crew's own. The tool schemas
 * (zod), the gateway and the HTTP client load later, by dynamic import.
 */
describe('the stdio bridge (src/mcp/stdio-bridge.ts) loads little before it answers initialize', () => {
  it('reaches no tool schema, gateway, server stack, SQLite or ACP', () => {
    const { modules, packages } = runtimeClosure(SRC, 'mcp/stdio-bridge.ts');
    const kept = [
      'zod',
      'hono',
      'better-sqlite3',
      '@agentclientprotocol/sdk',
      ['@hono', 'node-server'].join('/'),
    ];
    expect(packages.filter((p) => kept.some((k) => p === k || p.startsWith(`${k}/`)))).toEqual([]);
    const own = modules.filter((m) =>
      /^(gateway\/|daemon\/daemon\.ts|http\/app|mcp\/tool|core\/config)/.test(m),
    );
    expect(own, `the bridge loads ${modules.join(', ')}`).toEqual([]);
    expect(packages.filter((p) => p.startsWith('@modelcontextprotocol/sdk/client'))).toEqual([]);
  });

  it('the daemon side does load the tool schemas (so the check above can fail)', () => {
    const { modules, packages } = runtimeClosure(SRC, 'mcp/mcp-server.ts');
    expect(modules).toContain('mcp/tool-list.ts');
    expect(packages).toContain('zod');
  });
});
