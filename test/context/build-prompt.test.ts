import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type BuildPromptOptions, buildPrompt } from '../../src/context/build-prompt.js';

let dir: string;
let crewHome: string;
let cwd: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'crew-context-'));
  crewHome = join(dir, 'home');
  cwd = join(dir, 'project');
  mkdirSync(crewHome);
  mkdirSync(cwd);
  writeFileSync(join(crewHome, 'memory.md'), 'MEMORY TEXT\n');
  writeFileSync(join(dir, 'lessons.md'), 'LESSONS TEXT\n');
  writeFileSync(join(cwd, 'AGENTS.md'), 'AGENTS TEXT\n');
  writeFileSync(join(cwd, 'CLAUDE.md'), 'CLAUDE TEXT\n');
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function options(extra: Partial<BuildPromptOptions> = {}): BuildPromptOptions {
  return {
    task: 'THE TASK',
    agent: { prompt: 'SYSTEM PROMPT' },
    cwd,
    crewHome,
    config: { 'context.memory_files': ['memory.md'], 'context.lessons_files': [join(dir, 'lessons.md')] },
    ...extra,
  };
}

describe('buildPrompt', () => {
  it('puts the system prompt, memory, lessons, project files and the task in that order, under headings', () => {
    expect(buildPrompt(options())).toBe(
      [
        'SYSTEM PROMPT',
        `# Memory: ${join(crewHome, 'memory.md')}`,
        'MEMORY TEXT',
        `# Lessons: ${join(dir, 'lessons.md')}`,
        'LESSONS TEXT',
        `# Project instructions: ${join(cwd, 'AGENTS.md')}`,
        'AGENTS TEXT',
        `# Project instructions: ${join(cwd, 'CLAUDE.md')}`,
        'CLAUDE TEXT',
        '# Task',
        'THE TASK',
      ].join('\n\n'),
    );
  });

  const ALL = ['SYSTEM PROMPT', 'MEMORY TEXT', 'LESSONS TEXT', 'AGENTS TEXT', 'CLAUDE TEXT', 'THE TASK'];

  it.each([
    ['includeMemory', ['MEMORY TEXT']],
    ['includeLessons', ['LESSONS TEXT']],
    ['includeProject', ['AGENTS TEXT', 'CLAUDE TEXT']],
  ] as const)('%s: false leaves out %j and nothing else', (flag, left: readonly string[]) => {
    const prompt = buildPrompt(options({ [flag]: false }));
    for (const text of ALL) expect(prompt.includes(text), text).toBe(!left.includes(text));
  });

  it('is the task exactly when there is no system prompt and every group is off', () => {
    const prompt = buildPrompt(
      options({ agent: {}, includeMemory: false, includeLessons: false, includeProject: false }),
    );
    expect(prompt).toBe('THE TASK');
  });

  it('notes a configured file that is missing or unreadable instead of failing', () => {
    mkdirSync(join(crewHome, 'a-directory.md'));
    const prompt = buildPrompt(
      options({
        config: { 'context.memory_files': ['gone.md', 'a-directory.md'], 'context.lessons_files': [] },
        includeProject: false,
      }),
    );
    expect(prompt).toBe(
      [
        'SYSTEM PROMPT',
        `# Memory: ${join(crewHome, 'gone.md')}`,
        '[Crew: skipped; the file does not exist]',
        `# Memory: ${join(crewHome, 'a-directory.md')}`,
        '[Crew: skipped; the file could not be read: not a regular file]',
        '# Task',
        'THE TASK',
      ].join('\n\n'),
    );
  });

  it('adds nothing for project files the cwd does not have', () => {
    rmSync(join(cwd, 'AGENTS.md'));
    rmSync(join(cwd, 'CLAUDE.md'));
    const prompt = buildPrompt(options({ includeMemory: false, includeLessons: false }));
    expect(prompt).toBe('SYSTEM PROMPT\n\n# Task\n\nTHE TASK');
  });

  it('reads a file once when it is listed twice or CLAUDE.md links to AGENTS.md', () => {
    rmSync(join(cwd, 'CLAUDE.md'));
    symlinkSync('AGENTS.md', join(cwd, 'CLAUDE.md'));
    const prompt = buildPrompt(
      options({
        config: {
          'context.memory_files': ['memory.md', join(crewHome, 'memory.md')],
          'context.lessons_files': [],
        },
      }),
    );
    expect(prompt.match(/MEMORY TEXT/g)).toHaveLength(1);
    expect(prompt.match(/AGENTS TEXT/g)).toHaveLength(1);
  });

  it('cuts a file over 256 KiB with a note, without splitting a character', () => {
    // 'é' is two bytes: 131073 of them put the 256 KiB boundary in the middle of one.
    const big = `x${'é'.repeat(131_073)}`;
    writeFileSync(join(crewHome, 'memory.md'), big);
    const prompt = buildPrompt(options({ includeLessons: false, includeProject: false }));
    const kept = prompt.split('\n\n')[2]!;
    expect(kept).toBe(`x${'é'.repeat(131_071)}`);
    expect(prompt).toContain(`[Crew: cut here; kept the first 262144 of ${Buffer.byteLength(big)} bytes]`);
    expect(prompt).not.toContain('\uFFFD');
    expect(prompt.endsWith('# Task\n\nTHE TASK')).toBe(true);
  });

  it('resolves ~/ against the home directory', () => {
    const prompt = buildPrompt(
      options({
        config: { 'context.memory_files': ['~/crew-surely-absent.md'], 'context.lessons_files': [] },
      }),
    );
    expect(prompt).toContain(`# Memory: ${join(homedir(), 'crew-surely-absent.md')}`);
  });
});
