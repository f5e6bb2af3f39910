import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { AgentDef } from '../core/agent-def.js';
import type { CrewConfig } from '../core/config-schema.js';
import { parseAgentFile } from './agent-file.js';
import { builtinAgents } from './builtin-agents.js';
import type { AgentProblem, LoadedAgent } from './loaded-agent.js';
import { appendSkills, readSkill, skillNameProblem } from './skills.js';

/** Project directories whose agents are kept at once; the least recently used beyond this is dropped. */
export const DEFAULT_MAX_PROJECTS = 64;

export interface AgentCatalogOptions {
  /** `$CREW_HOME`: agents from `agents/*.md`, skills from `skills/`. */
  crewHome: string;
  config: Pick<CrewConfig, 'agents'>;
  /** Where the built-in agents look for the simulator. @default this module's directory */
  agentsModuleDir?: string;
  /** @default 64 */
  maxProjects?: number;
  /**
   * How long the agent files' own stamps are trusted before they are stat'ed again; the directories are
   * stat'ed at every lookup. @default 1000
   */
  fileCheckMs?: number;
  /** Milliseconds now (for `fileCheckMs`). @default Date.now */
  now?: () => number;
  /** Called with the problems of each (re-)read: a file that did not load, a missing skill. */
  onProblems?: (problems: AgentProblem[]) => void;
}

/** One agents directory as last read, with what each of its entries looked like then. */
interface DirRead {
  dirStamp: string;
  /** When the file stamps were last found unchanged (or read). */
  checkedAt: number;
  fileStamps: Map<string, string>;
  agents: LoadedAgent[];
}

interface ProjectEntry {
  read: DirRead;
  /** The merged agents, and the home read they were merged with. */
  home: DirRead;
  agents: ReadonlyMap<string, LoadedAgent>;
}

/**
 * The named agents a run can use, kept current without a restart. When two places define the same name,
 * the one nearest the work wins: the run's project (`<cwd>/.crew/agents`) over `$CREW_HOME/agents` over
 * config `agents.NAME` over the built-in agents. A project can thus pin the agents its tasks need, a
 * user's agent file (which carries a prompt and skills) overrides a one-line config entry, and anything
 * the user defines overrides what Crew ships.
 *
 * Agent files are re-read when they change: each lookup stats the two agents directories (a directory's
 * stamp moves when a file is added, removed or renamed in, which is how editors and `crew` save), and,
 * at most once per `fileCheckMs`, the files read last time (a file's moves when it is written in place);
 * a directory is read again only when something in it moved. A lookup is two `stat` calls, whatever the
 * number of agents; the parse happens once per change. Config and built-in agents are fixed for the catalog's life, like the
 * rest of the daemon's config. Skills are read when their agent's directory is (re)read, so a changed
 * skill file alone is seen at the next change of that directory or a restart.
 *
 * Project directories are remembered least recently used first, at most `maxProjects`.
 */
export class AgentCatalog {
  private readonly base: LoadedAgent[];
  private readonly crewHome: string;
  private readonly homeDir: string;
  private readonly maxProjects: number;
  private readonly fileCheckMs: number;
  private readonly now: () => number;
  private home: DirRead | undefined;
  private readonly projects = new Map<string, ProjectEntry>();

  constructor(private readonly options: AgentCatalogOptions) {
    this.crewHome = resolve(options.crewHome);
    this.homeDir = join(this.crewHome, 'agents');
    this.maxProjects = Math.max(1, options.maxProjects ?? DEFAULT_MAX_PROJECTS);
    this.fileCheckMs = options.fileCheckMs ?? 1000;
    this.now = options.now ?? Date.now;
    const problems: AgentProblem[] = [];
    const builtin = builtinAgents(options.agentsModuleDir);
    problems.push(...builtin.problems);
    this.base = [
      ...builtin.agents,
      ...configAgents(options.config, join(this.crewHome, 'config.json'), problems),
    ];
    this.report(problems);
  }

  /** How many project directories are remembered now (bounded by `maxProjects`). */
  get projectCount(): number {
    return this.projects.size;
  }

  /**
   * The agents of a run working in `cwd` (its project's `.crew/agents` applies), in name order, skills
   * appended to their prompts; without a `cwd`, those of no project.
   */
  at(cwd?: string): ReadonlyMap<string, LoadedAgent> {
    const home = this.freshRead(this.home, this.homeDir);
    this.home = home;
    const dir = cwd === undefined ? undefined : resolve(cwd, '.crew', 'agents');
    const key = dir === undefined || dir === this.homeDir ? '' : dir;
    const entry = this.projects.get(key);
    const read = key === '' ? EMPTY : this.freshRead(entry?.read, key);
    if (entry !== undefined) this.projects.delete(key);
    const current =
      entry !== undefined && entry.read === read && entry.home === home
        ? entry
        : { read, home, agents: this.merge([this.base, home.agents, read.agents]) };
    this.projects.set(key, current);
    for (const oldest of this.projects.keys()) {
      if (this.projects.size <= this.maxProjects) break;
      this.projects.delete(oldest);
    }
    return current.agents;
  }

  /** `previous` when nothing in `dir` moved since it was read, else a fresh read. */
  private freshRead(previous: DirRead | undefined, dir: string): DirRead {
    const now = this.now();
    if (previous !== undefined && previous.dirStamp === stampOf(dir)) {
      if (now - previous.checkedAt < this.fileCheckMs) return previous;
      let same = true;
      for (const [path, stamp] of previous.fileStamps) {
        if (stampOf(path) !== stamp) {
          same = false;
          break;
        }
      }
      if (same) {
        previous.checkedAt = now;
        return previous;
      }
    }
    const problems: AgentProblem[] = [];
    const read = readAgentDirectory(dir, now, problems);
    this.report(problems);
    return read;
  }

  /** Later layers replace earlier ones' agents of the same name; skills are appended to the winners. */
  private merge(layers: LoadedAgent[][]): ReadonlyMap<string, LoadedAgent> {
    const winners = new Map<string, LoadedAgent>();
    for (const layer of layers) for (const agent of layer) winners.set(agent.name, agent);
    const problems: AgentProblem[] = [];
    const agents = new Map<string, LoadedAgent>();
    for (const name of [...winners.keys()].sort()) {
      agents.set(name, withSkills(winners.get(name)!, this.crewHome, problems));
    }
    this.report(problems);
    return agents;
  }

  private report(problems: AgentProblem[]): void {
    if (problems.length > 0) this.options.onProblems?.(problems);
  }
}

const EMPTY: DirRead = { dirStamp: '', checkedAt: 0, fileStamps: new Map(), agents: [] };

/** What a path looks like now: identity, size and times, or `-` when it does not exist. */
function stampOf(path: string): string {
  try {
    const s = statSync(path, { bigint: true, throwIfNoEntry: false });
    return s === undefined ? '-' : `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
  } catch {
    return '?';
  }
}

function configAgents(
  config: Pick<CrewConfig, 'agents'>,
  path: string,
  problems: AgentProblem[],
): LoadedAgent[] {
  const agents: LoadedAgent[] = [];
  for (const [name, def] of Object.entries(config.agents)) {
    const unsafe = def.skills.map(skillNameProblem).filter((message) => message !== undefined);
    if (unsafe.length > 0) {
      problems.push(...unsafe.map((message) => ({ path, message: `agents.${name}: ${message}` })));
      continue;
    }
    // The key names the agent; a `name` inside the entry cannot rename it.
    agents.push({ ...def, name, source: 'config' });
  }
  return agents;
}

/**
 * Every `*.md` in `dir` (none when it does not exist), in file-name order; the first of a name wins.
 * Stamps are taken before reading, so a write during the read shows as a change next time.
 */
function readAgentDirectory(dir: string, checkedAt: number, problems: AgentProblem[]): DirRead {
  const dirStamp = stampOf(dir);
  const fileStamps = new Map<string, string>();
  let names: string[];
  try {
    names = readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.name.endsWith('.md') && !entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') {
      problems.push({ path: dir, message: `cannot read the agents directory: ${(error as Error).message}` });
    }
    return { dirStamp, checkedAt, fileStamps, agents: [] };
  }
  const agents = new Map<string, LoadedAgent>();
  for (const file of names) {
    const path = join(dir, file);
    fileStamps.set(path, stampOf(path));
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      problems.push({ path, message: `cannot read the agent file: ${(error as Error).message}` });
      continue;
    }
    const parsed = parseAgentFile(path, text);
    if (!parsed.ok) {
      problems.push(...parsed.problems);
      continue;
    }
    const first = agents.get(parsed.agent.name);
    if (first !== undefined) {
      problems.push({
        path,
        message: `agent "${parsed.agent.name}" is already defined in ${first.source}; ignored`,
      });
      continue;
    }
    agents.set(parsed.agent.name, { ...parsed.agent, source: path });
  }
  return { dirStamp, checkedAt, fileStamps, agents: [...agents.values()] };
}

/** Appends the agent's skills to its prompt; a missing skill is a warning and the agent loads without it. */
function withSkills(agent: LoadedAgent, crewHome: string, problems: AgentProblem[]): LoadedAgent {
  if (agent.skills.length === 0) return agent;
  const found: { name: string; text: string }[] = [];
  for (const name of agent.skills) {
    const skill = readSkill(crewHome, name);
    if (skill.ok) found.push(skill);
    else {
      problems.push({
        path: agent.source === 'config' ? join(crewHome, 'config.json') : agent.source,
        message: `agent "${agent.name}": ${skill.message}; loaded without it`,
      });
    }
  }
  if (found.length === 0) return agent;
  const prompt: AgentDef['prompt'] = appendSkills(agent.prompt, found);
  return { ...agent, prompt };
}
