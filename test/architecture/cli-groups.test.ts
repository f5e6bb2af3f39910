import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/program.js';
import { runtimeClosure } from './import-graph.js';

const SRC = join(import.meta.dirname, '../../src');

/** Every top-level command a user can type; each must be found by its own name (src/cli/program.ts GROUPS). */
const COMMANDS = [
  'serve',
  'mcp',
  'spawn',
  'list',
  'status',
  'steer',
  'cancel',
  'continue',
  'release',
  'resources',
  'agents',
  'config',
  'demo',
  'chat',
  'dashboard',
];

async function cli(...args: string[]): Promise<{ code: number; text: string }> {
  const lines: string[] = [];
  const code = await runCli(['node', 'crew', ...args], {
    out: (s) => lines.push(s),
    err: (s) => lines.push(s),
  });
  return { code, text: lines.join('\n') };
}

/**
 * A CLI start loads only the command group its first word names (tests and parents start the CLI often;
 * with every group it cost ~0.4 s of CPU, with the run commands alone ~0.1 s).
 */
describe('the CLI loads only the command group it runs', () => {
  it('the program reaches no command group statically', () => {
    const { modules } = runtimeClosure(SRC, 'cli/program.ts');
    expect(modules.filter((m) => m.startsWith('cli/commands/'))).toEqual([]);
  });

  it('the run commands reach no daemon, SQLite, ACP SDK, HTTP server or config schema', () => {
    const { modules, packages } = runtimeClosure(SRC, 'cli/commands/runs.ts');
    expect(modules).not.toContain('daemon/daemon.ts');
    expect(modules.filter((m) => m.startsWith('core/config'))).toEqual([]);
    const heavy = ['better-sqlite3', '@agentclientprotocol/sdk', 'hono', 'zod'];
    expect(packages.filter((p) => heavy.some((h) => p === h || p.startsWith(`${h}/`)))).toEqual([]);
  });

  it('the serve group does reach the daemon (so the check above can fail)', () => {
    expect(runtimeClosure(SRC, 'cli/commands/serve.ts').modules).toContain('daemon/daemon.ts');
  });

  it('every command is found by its own name, and plain help lists them all', async () => {
    const help = await cli('--help');
    expect(help.code).toBe(0);
    for (const name of COMMANDS) {
      expect(help.text, name).toMatch(new RegExp(`^\\s+${name}\\b`, 'm'));
      const own = await cli(name, '--help');
      expect(own.code, `crew ${name} --help: ${own.text}`).toBe(0);
      expect(own.text).toContain(`Usage: crew ${name}`);
    }
  });

  it('an unknown command is still a usage error with every command known', async () => {
    const unknown = await cli('lst');
    expect(unknown.code).toBe(2);
    expect(unknown.text).toMatch(/unknown command 'lst'[\s\S]*list/);
  });
});
