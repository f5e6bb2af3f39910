import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentCatalog } from '../../src/agents/agent-catalog.js';
import type { AgentProblem } from '../../src/agents/loaded-agent.js';

let root: string;
let home: string;
let agentsModuleDir: string;
let problems: AgentProblem[];

function agentFile(dir: string, name: string, command: string, extra = ''): void {
  mkdirSync(dir, { recursive: true });
  // Written aside and renamed in, as editors do: the file never appears half written.
  const path = join(dir, `${name}.md`);
  writeFileSync(
    `${path}.tmp`,
    `---\nname: ${name}\nrunner: command\ncommand: [${command}]\n${extra}---\nprompt of ${name}\n`,
  );
  renameSync(`${path}.tmp`, path);
}

function catalog(maxProjects?: number): AgentCatalog {
  return new AgentCatalog({
    crewHome: home,
    config: { agents: {} },
    agentsModuleDir,
    ...(maxProjects !== undefined ? { maxProjects } : {}),
    onProblems: (found) => problems.push(...found),
  });
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'crew-catalog-'));
  home = join(root, 'home');
  mkdirSync(home);
  agentsModuleDir = join(root, 'dist', 'agents');
  mkdirSync(agentsModuleDir, { recursive: true });
  mkdirSync(join(root, 'dist', 'sim'));
  writeFileSync(join(root, 'dist', 'sim', 'main.js'), '');
  problems = [];
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

describe('AgentCatalog: agent files seen as they change, without a restart', () => {
  it('finds a file added after the first look, sees it changed, and forgets it removed', () => {
    const agents = catalog();
    expect([...agents.at().keys()]).toEqual(['sim']);
    agentFile(join(home, 'agents'), 'late', 'echo, one');
    expect(agents.at().get('late')?.command).toEqual(['echo', 'one']);
    agentFile(join(home, 'agents'), 'late', 'echo, two');
    expect(agents.at().get('late')?.command).toEqual(['echo', 'two']);
    rmSync(join(home, 'agents', 'late.md'));
    expect(agents.at().has('late')).toBe(false);
  });

  it('sees a file written in place (its directory unchanged) once fileCheckMs has passed', () => {
    let now = 0;
    agentFile(join(home, 'agents'), 'edited', 'echo, one');
    const agents = new AgentCatalog({
      crewHome: home,
      config: { agents: {} },
      agentsModuleDir,
      fileCheckMs: 1000,
      now: () => now,
    });
    expect(agents.at().get('edited')?.command).toEqual(['echo', 'one']);
    writeFileSync(
      join(home, 'agents', 'edited.md'),
      '---\nname: edited\nrunner: command\ncommand: [echo, two, longer]\n---\n',
    );
    now = 999;
    expect(agents.at().get('edited')?.command).toEqual(['echo', 'one']);
    now = 1000;
    expect(agents.at().get('edited')?.command).toEqual(['echo', 'two', 'longer']);
  });

  it('answers from what it read while nothing changed (the same map), and reports problems once per change', () => {
    const agents = catalog();
    mkdirSync(join(home, 'agents'));
    writeFileSync(join(home, 'agents', 'broken.md'), '---\nname: [\n---\n');
    const first = agents.at();
    expect(agents.at()).toBe(first);
    expect(problems.map((p) => p.path)).toEqual([join(home, 'agents', 'broken.md')]);
    agentFile(join(home, 'agents'), 'fine', 'ls');
    expect(agents.at()).not.toBe(first);
    expect(problems).toHaveLength(2);
  });

  it("a run's directory brings its project's agents, which win over the home's, and only there", () => {
    const a = join(root, 'a');
    const b = join(root, 'b');
    agentFile(join(home, 'agents'), 'shared', 'echo, home');
    agentFile(join(a, '.crew', 'agents'), 'shared', 'echo, project-a');
    agentFile(join(a, '.crew', 'agents'), 'only-a', 'ls');
    const agents = catalog();
    expect(agents.at(a).get('shared')?.command).toEqual(['echo', 'project-a']);
    expect(agents.at(a).has('only-a')).toBe(true);
    expect(agents.at(b).get('shared')?.command).toEqual(['echo', 'home']);
    expect(agents.at(b).has('only-a')).toBe(false);
    // A project that gains its .crew/agents later is seen too.
    agentFile(join(b, '.crew', 'agents'), 'only-b', 'ls');
    expect(agents.at(b).has('only-b')).toBe(true);
  });

  it('remembers at most maxProjects project directories, least recently used dropped first', () => {
    const agents = catalog(3);
    const dirs = ['p1', 'p2', 'p3', 'p4', 'p5'].map((d) => join(root, d));
    for (const dir of dirs) agentFile(join(dir, '.crew', 'agents'), 'x', 'ls');
    for (const dir of dirs) expect(agents.at(dir).has('x')).toBe(true);
    expect(agents.projectCount).toBe(3);
    for (let i = 0; i < 200; i++) agents.at(join(root, `gone-${i}`));
    expect(agents.projectCount).toBe(3);
    // A dropped directory is read again when asked, with its agents intact.
    expect(agents.at(dirs[0]).has('x')).toBe(true);
  });
});
