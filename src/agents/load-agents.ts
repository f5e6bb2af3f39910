import { readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { AgentDef } from '../core/agent-def.js';
import type { CrewConfig } from '../core/config-schema.js';
import { parseAgentFile } from './agent-file.js';
import { builtinAgents } from './builtin-agents.js';
import type { AgentProblem, LoadedAgent } from './loaded-agent.js';
import { appendSkills, readSkill, skillNameProblem } from './skills.js';

/**
 * Named agents from every place they can be defined. When two places define the same name, the one
 * nearest the work wins: project `.crew/agents` over `$CREW_HOME/agents` over config `agents.NAME` over
 * the built-in agents. A project can thus pin the agents its tasks need, a user's hand-written agent
 * file (which carries a prompt and skills) overrides a one-line config entry, and anything the user
 * defines overrides what Crew ships.
 */

export interface LoadAgentsOptions {
  /** `$CREW_HOME`: agents from `agents/*.md`, skills from `skills/`. */
  crewHome: string;
  /** The project whose `.crew/agents/*.md` apply; none for a daemon that serves no project. */
  projectDir?: string | undefined;
  config: Pick<CrewConfig, 'agents'>;
  /** Where the built-in agents look for the simulator. @default this module's directory */
  agentsModuleDir?: string;
}

export interface LoadedAgents {
  agents: Map<string, LoadedAgent>;
  problems: AgentProblem[];
}

/**
 * Loads every named agent (winners only, in name order, skills appended to their prompts). Nothing here
 * throws for a bad definition: it is reported in `problems` and the other agents load.
 */
export async function loadAgents(options: LoadAgentsOptions): Promise<LoadedAgents> {
  const problems: AgentProblem[] = [];
  const crewHome = resolve(options.crewHome);
  const builtin = builtinAgents(options.agentsModuleDir);
  problems.push(...builtin.problems);
  const homeDir = join(crewHome, 'agents');
  const projectDir =
    options.projectDir === undefined ? undefined : resolve(options.projectDir, '.crew', 'agents');

  // Lowest precedence first; a later layer replaces an earlier one's agent of the same name.
  const layers: LoadedAgent[][] = [
    builtin.agents,
    configAgents(options.config, join(crewHome, 'config.json'), problems),
    await directoryAgents(homeDir, problems),
    projectDir === undefined || projectDir === homeDir ? [] : await directoryAgents(projectDir, problems),
  ];
  const winners = new Map<string, LoadedAgent>();
  for (const layer of layers) for (const agent of layer) winners.set(agent.name, agent);

  const agents = new Map<string, LoadedAgent>();
  for (const name of [...winners.keys()].sort()) {
    const agent = winners.get(name)!;
    agents.set(name, await withSkills(agent, crewHome, problems));
  }
  return { agents, problems };
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

/** Every `*.md` in `dir` (none when it does not exist), in file-name order; the first of a name wins. */
async function directoryAgents(dir: string, problems: AgentProblem[]): Promise<LoadedAgent[]> {
  let names: string[];
  try {
    names = (await readdir(dir, { withFileTypes: true }))
      .filter((entry) => entry.name.endsWith('.md') && !entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') {
      problems.push({ path: dir, message: `cannot read the agents directory: ${(error as Error).message}` });
    }
    return [];
  }
  const agents = new Map<string, LoadedAgent>();
  for (const file of names) {
    const path = join(dir, file);
    let text: string;
    try {
      text = await readFile(path, 'utf8');
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
  return [...agents.values()];
}

/** Appends the agent's skills to its prompt; a missing skill is a warning and the agent loads without it. */
async function withSkills(
  agent: LoadedAgent,
  crewHome: string,
  problems: AgentProblem[],
): Promise<LoadedAgent> {
  if (agent.skills.length === 0) return agent;
  const found: { name: string; text: string }[] = [];
  for (const name of agent.skills) {
    const skill = await readSkill(crewHome, name);
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
