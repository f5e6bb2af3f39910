import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadAgents } from '../../src/agents/load-agents.js';
import { agentDefSchema } from '../../src/core/agent-def.js';
import type { CrewConfig } from '../../src/core/config-schema.js';

const fixtures = join(import.meta.dirname, '../fixtures/agents');
const crewHome = join(fixtures, 'home');
const projectDir = join(fixtures, 'project');
const homeAgent = (file: string) => join(crewHome, 'agents', file);

/** A module directory beside a built simulator, so the built-in agent resolves without problems. */
let moduleRoot: string;
let agentsModuleDir: string;

function configWith(agents: Record<string, unknown> = {}): Pick<CrewConfig, 'agents'> {
  return {
    agents: Object.fromEntries(
      Object.entries(agents).map(([name, def]) => [name, agentDefSchema.parse(def)]),
    ),
  };
}

beforeEach(() => {
  moduleRoot = mkdtempSync(join(import.meta.dirname, '../../.crew-test-agents-'));
  agentsModuleDir = join(moduleRoot, 'dist', 'agents');
  mkdirSync(agentsModuleDir, { recursive: true });
  mkdirSync(join(moduleRoot, 'dist', 'sim'));
  writeFileSync(join(moduleRoot, 'dist', 'sim', 'main.js'), '');
});

afterEach(() => {
  rmSync(moduleRoot, { recursive: true, force: true });
});

describe('loadAgents from the fixture files', () => {
  async function load() {
    return loadAgents({ crewHome, projectDir, config: configWith(), agentsModuleDir });
  }

  it('loads a good file with its fields, body as prompt and both forms of skill appended', async () => {
    const { agents } = await load();
    expect(agents.get('reviewer')).toEqual({
      name: 'reviewer',
      description: 'Reviews a change: correctness first, then style',
      runner: 'command',
      command: ['claude', '-p', '{task}', '--model={model}'],
      model: 'sonnet',
      max_turns: 40,
      shared: false,
      skills: ['style', 'checklist'],
      prompt:
        'You review code changes.\n\nBe brief.\n\n## Skill: style\n\nPrefer small functions.\n\n## Skill: checklist\n\n1. Tests pass.',
      source: homeAgent('reviewer.md'),
    });
  });

  it('reports a malformed file with its path and line, and loads the others', async () => {
    const { agents, problems } = await load();
    expect(agents.has('broken')).toBe(false);
    expect(problems).toContainEqual({
      path: homeAgent('broken.md'),
      line: 4,
      message: 'unexpected indentation: keys start at the beginning of the line',
    });
    expect([...agents.keys()]).toEqual(['no-skill', 'overridden', 'reviewer', 'sim']);
  });

  it('reports an unknown runner at its line', async () => {
    const { agents, problems } = await load();
    expect(agents.has('odd-runner')).toBe(false);
    expect(problems).toContainEqual({
      path: homeAgent('odd-runner.md'),
      line: 3,
      message: 'runner: Invalid option: expected one of "acp"|"command", got "shell"',
    });
  });

  it('loads an agent whose skill is missing, with a warning, and the skills it found', async () => {
    const { agents, problems } = await load();
    expect(agents.get('no-skill')?.prompt).toBe(
      'Loads anyway.\n\n## Skill: style\n\nPrefer small functions.',
    );
    expect(problems).toContainEqual({
      path: homeAgent('no-skill.md'),
      message: expect.stringMatching(
        /^agent "no-skill": skill "nonexistent" not found .*; loaded without it$/,
      ),
    });
  });

  it('refuses an agent whose skill name escapes the skills directory', async () => {
    const { agents, problems } = await load();
    expect(agents.has('escaper')).toBe(false);
    expect(problems).toContainEqual({
      path: homeAgent('escaper.md'),
      line: 6,
      message: 'skill name "../secrets" must be a plain name (letters, digits, . _ -), not a path',
    });
    expect(JSON.stringify([...agents.values()])).not.toContain('must never be read');
  });

  it('prefers the project file over the CREW_HOME file of the same name, named after the file', async () => {
    const { agents } = await load();
    expect(agents.get('overridden')).toMatchObject({
      command: ['project-cmd'],
      prompt: 'Project prompt.',
      source: join(projectDir, '.crew', 'agents', 'overridden.md'),
    });
  });

  it('reads only *.md files and reports exactly the expected problems', async () => {
    const { problems } = await load();
    expect(problems.map((problem) => problem.path).sort()).toEqual(
      ['broken.md', 'escaper.md', 'no-skill.md', 'odd-runner.md'].map(homeAgent),
    );
  });
});

describe('precedence', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(moduleRoot, 'layers-'));
  });

  function agentFile(path: string, command: string, name?: string): void {
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, `---\n${name === undefined ? '' : `name: ${name}\n`}command: ${command}\n---\n`);
  }

  it('project .crew/agents > $CREW_HOME/agents > config > built-in', async () => {
    const home = join(dir, 'home');
    const project = join(dir, 'project');
    agentFile(join(project, '.crew', 'agents', 'all.md'), 'from-project');
    agentFile(join(home, 'agents', 'all.md'), 'from-home');
    agentFile(join(home, 'agents', 'home-and-config.md'), 'from-home');
    const config = configWith({
      all: { command: 'from-config' },
      'home-and-config': { command: 'from-config' },
      sim: { command: 'my-sim', runner: 'command' },
      'config-only': { command: 'from-config', name: 'ignored' },
    });

    const { agents, problems } = await loadAgents({
      crewHome: home,
      projectDir: project,
      config,
      agentsModuleDir,
    });

    expect(problems).toEqual([]);
    const summary = Object.fromEntries(
      [...agents].map(([name, agent]) => [name, [agent.command[0], agent.source]]),
    );
    expect(summary).toEqual({
      all: ['from-project', join(project, '.crew', 'agents', 'all.md')],
      'home-and-config': ['from-home', join(home, 'agents', 'home-and-config.md')],
      sim: ['my-sim', 'config'],
      'config-only': ['from-config', 'config'],
    });
  });

  it('keeps the first file (by file name) of two in one directory that claim the same name', async () => {
    agentFile(join(dir, 'agents', 'a.md'), 'first', 'twin');
    agentFile(join(dir, 'agents', 'b.md'), 'second', 'twin');

    const { agents, problems } = await loadAgents({ crewHome: dir, config: configWith(), agentsModuleDir });

    expect(agents.get('twin')?.command).toEqual(['first']);
    expect(problems).toEqual([
      {
        path: join(dir, 'agents', 'b.md'),
        message: `agent "twin" is already defined in ${join(dir, 'agents', 'a.md')}; ignored`,
      },
    ]);
  });

  it('applies skills to config agents and refuses config skill names that are paths', async () => {
    mkdirSync(join(dir, 'skills'));
    writeFileSync(join(dir, 'skills', 'tidy.md'), 'Keep it tidy.');
    const config = configWith({
      tidy: { command: 'x', prompt: 'Base.', skills: ['tidy'] },
      sneaky: { command: 'x', skills: ['a/b'] },
    });

    const { agents, problems } = await loadAgents({ crewHome: dir, config, agentsModuleDir });

    expect(agents.get('tidy')?.prompt).toBe('Base.\n\n## Skill: tidy\n\nKeep it tidy.');
    expect(agents.has('sneaky')).toBe(false);
    expect(problems).toEqual([
      {
        path: join(dir, 'config.json'),
        message: 'agents.sneaky: skill name "a/b" must be a plain name (letters, digits, . _ -), not a path',
      },
    ]);
  });

  it('needs no set-up: with nothing on disk, the built-in sim agent is there', async () => {
    const { agents, problems } = await loadAgents({
      crewHome: join(dir, 'nowhere'),
      projectDir: join(dir, 'nowhere-either'),
      config: configWith(),
      agentsModuleDir,
    });
    expect(problems).toEqual([]);
    expect([...agents.keys()]).toEqual(['sim']);
    expect(agents.get('sim')).toMatchObject({ runner: 'acp', source: 'builtin' });
  });
});

describe('agent file fields', () => {
  let home: string;

  beforeEach(() => {
    home = mkdtempSync(join(moduleRoot, 'fields-'));
    mkdirSync(join(home, 'agents'));
  });

  async function problemsFor(file: string, text: string) {
    writeFileSync(join(home, 'agents', file), text);
    const { problems } = await loadAgents({ crewHome: home, config: configWith(), agentsModuleDir });
    return problems.map(({ line, message }) => ({ line, message }));
  }

  it.each([
    ['---\nname: x\ntools: [Read]\ncommand: y\n---\n', 3, /^unknown key "tools" \(known: name, description/],
    ['---\ncommand: y\nprompt: hi\n---\n', 3, /the system prompt is the body/],
    ['---\nname: x\n---\nbody', 1, /^missing "command"$/],
    [
      '---\ncommand: y\nmax_turns: 500\n---\n',
      3,
      /^max_turns: Too big: expected number to be <=200, got 500$/,
    ],
    ['---\ncommand: [a, 3]\n---\n', 2, /^command: expected a string or a list of strings, got \["a",3\]$/],
    ['---\ncommand: y\nmodel: 4\n---\n', 3, /^model: expected string, got 4$/],
  ])('reports %j at line %i', async (text, line, message) => {
    const [problem, ...rest] = await problemsFor('agent.md', text);
    expect(rest).toEqual([]);
    expect(problem?.line).toBe(line);
    expect(problem?.message).toMatch(message);
  });

  it('asks for a name when the file name is not one', async () => {
    expect(await problemsFor('has space.md', '---\ncommand: y\n---\n')).toEqual([
      {
        line: 1,
        message: 'the file name "has space" is not an agent name (letters, digits, . _ -); set "name:"',
      },
    ]);
  });

  it('splits a string command on whitespace, never into a shell', async () => {
    writeFileSync(join(home, 'agents', 'a.md'), '---\ncommand: claude -p {task}\n---\n');
    const { agents } = await loadAgents({ crewHome: home, config: configWith(), agentsModuleDir });
    expect(agents.get('a')?.command).toEqual(['claude', '-p', '{task}']);
  });
});
