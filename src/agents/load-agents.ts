import type { CrewConfig } from '../core/config-schema.js';
import { AgentCatalog } from './agent-catalog.js';
import type { AgentProblem, LoadedAgent } from './loaded-agent.js';

/**
 * Named agents from every place they can be defined, read once (`crew agents`); the daemon keeps an
 * {@link AgentCatalog} instead, which sees files change. Precedence: project `.crew/agents` over
 * `$CREW_HOME/agents` over config `agents.NAME` over the built-in agents.
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
  const catalog = new AgentCatalog({
    crewHome: options.crewHome,
    config: options.config,
    ...(options.agentsModuleDir !== undefined ? { agentsModuleDir: options.agentsModuleDir } : {}),
    onProblems: (found) => problems.push(...found),
  });
  return { agents: new Map(catalog.at(options.projectDir)), problems };
}
