import { realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import type { AgentDef } from '../core/agent-def.js';
import type { CrewConfig } from '../core/config-schema.js';
import { assertNever } from '../core/types.js';
import { type ContextFile, readContextFile } from './context-file.js';

/**
 * The prompt a run's agent receives (DESIGN §4 `context.*`; the spawn's `include_*` switches): the
 * agent's system prompt, then the context groups, each file under a heading with its path, then the
 * task:
 *
 * 1. memory: `context.memory_files` (unless `includeMemory` is false);
 * 2. lessons: `context.lessons_files` (unless `includeLessons` is false);
 * 3. project: `AGENTS.md` and `CLAUDE.md` in the run's cwd (unless `includeProject` is false).
 *
 * Relative paths in `context.*_files` resolve against `$CREW_HOME`, beside the `config.json` that names
 * them, so one setting means the same files for every run whatever its cwd; `~/` is the home directory.
 * A file is read once even when listed twice (or when `CLAUDE.md` links to `AGENTS.md`). Each file is
 * bounded (256 KiB, then cut with a note); a configured file that is missing or unreadable becomes
 * a note in the prompt, never a failed run. A missing project file is no news and adds nothing.
 * With no system prompt and nothing to add, the prompt is the task exactly as given.
 */
export interface BuildPromptOptions {
  task: string;
  /** The agent, with its skills already appended to `prompt`. */
  agent: Pick<AgentDef, 'prompt'>;
  /** The run's absolute working directory. */
  cwd: string;
  /** `$CREW_HOME`, against which relative context paths resolve. */
  crewHome: string;
  config: Pick<CrewConfig, 'context.memory_files' | 'context.lessons_files'>;
  /** @default true */
  includeMemory?: boolean | undefined;
  /** @default true */
  includeLessons?: boolean | undefined;
  /** @default true */
  includeProject?: boolean | undefined;
}

/** Project instruction files, in the order they are added. */
const PROJECT_FILES = ['AGENTS.md', 'CLAUDE.md'] as const;

interface Group {
  label: string;
  paths: string[];
  /** Whether a missing file deserves a note (it was asked for by name). */
  noteMissing: boolean;
}

/**
 * Builds the prompt for a run as {@link BuildPromptOptions} describes. Synchronous (see
 * `readContextFile`), so it fits the gateway's `buildPrompt(spec, agent)` dependency as it stands.
 */
export function buildPrompt(options: BuildPromptOptions): string {
  const groups: Group[] = [];
  if (options.includeMemory ?? true) {
    groups.push({
      label: 'Memory',
      paths: resolvePaths(options.config['context.memory_files'], options.crewHome),
      noteMissing: true,
    });
  }
  if (options.includeLessons ?? true) {
    groups.push({
      label: 'Lessons',
      paths: resolvePaths(options.config['context.lessons_files'], options.crewHome),
      noteMissing: true,
    });
  }
  if (options.includeProject ?? true) {
    groups.push({
      label: 'Project instructions',
      paths: PROJECT_FILES.map((name) => join(options.cwd, name)),
      noteMissing: false,
    });
  }

  const parts: string[] = [];
  const systemPrompt = options.agent.prompt?.trim() ?? '';
  if (systemPrompt !== '') parts.push(systemPrompt);
  const seen = new Set<string>();
  for (const group of groups) {
    for (const path of group.paths) {
      // A missing file (most runs' AGENTS.md / CLAUDE.md) costs one stat: no realpath, no open, no
      // thrown error (each was a stack trace built per run, issue 32 §4).
      const missing = isMissing(path);
      const identity = missing ? path : realPathOr(path);
      if (seen.has(identity)) continue;
      seen.add(identity);
      const section = renderSection(group, missing ? { kind: 'missing', path } : readContextFile(path));
      if (section !== undefined) parts.push(section);
    }
  }
  if (parts.length === 0) return options.task;
  parts.push(`# Task\n\n${options.task}`);
  return parts.join('\n\n');
}

/** The file's own path, links resolved: the system's realpath (one call, where Node's own lstats each part). */
function realPathOr(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return path;
  }
}

/** Whether nothing is at `path`; anything else (a file, a directory, an error) is left to the read to say. */
function isMissing(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false }) === undefined;
  } catch {
    return false;
  }
}

function resolvePaths(paths: readonly string[], crewHome: string): string[] {
  return paths.map((path) => {
    if (path === '~') return homedir();
    if (path.startsWith('~/')) return join(homedir(), path.slice(2));
    return isAbsolute(path) ? path : resolve(crewHome, path);
  });
}

function renderSection(group: Group, file: ContextFile): string | undefined {
  const heading = `# ${group.label}: ${file.path}`;
  switch (file.kind) {
    case 'ok': {
      const cut =
        file.keptBytes < file.totalBytes
          ? `\n\n[Crew: cut here; kept the first ${file.keptBytes} of ${file.totalBytes} bytes]`
          : '';
      return `${heading}\n\n${file.text.trimEnd()}${cut}`;
    }
    case 'missing':
      return group.noteMissing ? `${heading}\n\n[Crew: skipped; the file does not exist]` : undefined;
    case 'unreadable':
      return `${heading}\n\n[Crew: skipped; the file could not be read: ${file.reason}]`;
    default:
      return assertNever(file);
  }
}
