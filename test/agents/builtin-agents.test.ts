import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { builtinAgents, resolveSimCommand } from '../../src/agents/builtin-agents.js';

/** A fake install: `<root>/{dist,src}/agents` beside `<root>/{dist,src}/sim`, inside the repo so tsx resolves. */
let root: string;

function layout(tree: 'dist' | 'src', simFile?: string, simSource = ''): string {
  const agentsDir = join(root, tree, 'agents');
  mkdirSync(agentsDir, { recursive: true });
  if (simFile !== undefined) {
    mkdirSync(join(root, tree, 'sim'), { recursive: true });
    writeFileSync(join(root, tree, 'sim', simFile), simSource);
  }
  return agentsDir;
}

beforeEach(() => {
  root = mkdtempSync(join(import.meta.dirname, '../../.crew-test-builtin-'));
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

describe('the built-in sim agent', () => {
  it('runs the built simulator with node when dist/sim/main.js exists', () => {
    const agentsDir = layout('dist', 'main.js');
    expect(resolveSimCommand(agentsDir)).toEqual({
      ok: true,
      command: [process.execPath, join(root, 'dist', 'sim', 'main.js')],
    });
  });

  it('prefers main.js over main.ts when both are beside the module', () => {
    const agentsDir = layout('src', 'main.ts');
    writeFileSync(join(root, 'src', 'sim', 'main.js'), '');
    expect(resolveSimCommand(agentsDir).command).toEqual([
      process.execPath,
      join(root, 'src', 'sim', 'main.js'),
    ]);
  });

  it('runs the source through tsx, named by absolute location, so it starts from any cwd', () => {
    const agentsDir = layout(
      'src',
      'main.ts',
      "const greeting: string = 'sim up';\nconsole.log(greeting);\n",
    );
    const sim = resolveSimCommand(agentsDir);
    expect(sim.ok).toBe(true);
    const [node, flag, loader, script] = sim.command;
    expect([node, flag, script]).toEqual([process.execPath, '--import', join(root, 'src', 'sim', 'main.ts')]);
    expect(loader).toMatch(/^file:\/\/.*\/tsx\//);

    const out = execFileSync(sim.command[0]!, sim.command.slice(1), {
      cwd: '/',
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(out).toBe('sim up\n');
  });

  it('is still listed, with a problem naming both paths, when the simulator is missing', () => {
    const agentsDir = layout('dist');
    const { agents, problems } = builtinAgents(agentsDir);
    expect(agents.map((agent) => [agent.name, agent.runner, agent.source])).toEqual([
      ['sim', 'acp', 'builtin'],
    ]);
    expect(problems).toHaveLength(1);
    expect(problems[0]?.message).toContain(join(root, 'dist', 'sim', 'main.js'));
    expect(problems[0]?.message).toContain(join(root, 'dist', 'sim', 'main.ts'));
  });

  it('resolves against its own module by default', () => {
    const sim = resolveSimCommand();
    const script = sim.command.at(-1);
    expect(script).toMatch(/[/\\]sim[/\\]main\.(js|ts)$/);
    expect(sim.command[0]).toBe(process.execPath);
  });
});
