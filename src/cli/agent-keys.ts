import { loadAgents } from '../agents/load-agents.js';
import type { CrewConfig } from '../core/config-schema.js';
import { CrewError } from '../core/errors.js';
import { unknownAgent } from '../core/refusals.js';

/** Config keys whose value names an agent: a typo there would only show up at the next spawn or chat. */
const AGENT_NAME_KEYS: ReadonlySet<string> = new Set(['agent.default_agent', 'chat.parent_agent']);

/**
 * Refuses (`unknown_agent`, with the known ones) a value for an agent-naming key that names no agent
 * defined here: a built-in one, `agents.NAME` in config, `$CREW_HOME/agents` or this project's `.crew/agents`.
 */
export async function checkAgentNameKey(
  key: string,
  value: unknown,
  options: { crewHome: string; projectDir: string; config: Pick<CrewConfig, 'agents'> },
): Promise<void> {
  if (!AGENT_NAME_KEYS.has(key) || typeof value !== 'string') return;
  const { agents } = await loadAgents(options);
  if (!agents.has(value)) throw new CrewError(unknownAgent(value, agents.keys(), key));
}
