import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runtimeClosure } from './import-graph.js';

const SRC = join(import.meta.dirname, '../../src');

/**
 * `crew mcp` answers `initialize` before anything else loads (docs/decisions.md): the CLI entry imports
 * nothing statically, and the bridge's entry reaches only node builtins and the front's few modules.
 * The MCP SDK and the daemon connection load later, by dynamic import; the tool schemas (zod) never (the
 * bridge answers `tools/list` from the daemon's list written out, `tool-list-json.ts`).
 */
describe('the stdio bridge (src/mcp/stdio-bridge.ts) loads little before it answers initialize', () => {
  it('the CLI entry and the bridge entry reach no package, only node builtins and the front', () => {
    expect(runtimeClosure(SRC, 'cli/main.ts')).toEqual({ modules: ['cli/main.ts'], packages: [] });
    const { modules, packages } = runtimeClosure(SRC, 'mcp/stdio-bridge.ts');
    expect(packages.filter((p) => !p.startsWith('node:'))).toEqual([]);
    expect(modules).toEqual([
      'mcp/early-answers.ts',
      'mcp/server-info.ts',
      'mcp/stdio-bridge.ts',
      'mcp/stdio-front.ts',
      'mcp/tool-list-json.ts',
    ]);
  });

  it('the part loaded after it (the MCP server) reaches no tool schema, zod of its own, gateway, server stack, SQLite or ACP', () => {
    const { modules, packages } = runtimeClosure(SRC, 'mcp/bridge-server.ts');
    const kept = ['hono', 'better-sqlite3', '@agentclientprotocol/sdk', ['@hono', 'node-server'].join('/')];
    expect(packages.filter((p) => kept.some((k) => p === k || p.startsWith(`${k}/`)))).toEqual([]);
    const own = modules.filter((m) =>
      /^(gateway\/|daemon\/daemon\.ts|http\/app|mcp\/(tool-list|tool-schemas|tools|tools-call)\.ts|core\/config)/.test(
        m,
      ),
    );
    expect(own, `the bridge loads ${modules.join(', ')}`).toEqual([]);
    expect(packages.filter((p) => p.startsWith('@modelcontextprotocol/sdk/client'))).toEqual([]);
    expect(packages).not.toContain('zod');
  });

  it('the daemon side does load the tool schemas and the SDK (so the checks above can fail)', () => {
    const { modules, packages } = runtimeClosure(SRC, 'mcp/mcp-server.ts');
    expect(modules).toContain('mcp/tool-list.ts');
    expect(packages).toContain('zod');
    expect(packages.filter((p) => !p.startsWith('node:')).length).toBeGreaterThan(0);
  });
});
