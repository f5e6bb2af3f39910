import type { CrewConfig } from './config-schema.js';

/**
 * The tool-call budget a run gets, resolved once at admission: the spawn's own `max_turns`, else the
 * agent's, else `agent.subagent_max_turns`. 0 = no budget. The scheduler counts against it.
 */
export function resolveMaxTurns(
  spawn: number | undefined,
  agent: number | undefined,
  config: Pick<CrewConfig, 'agent.subagent_max_turns'>,
): number {
  return spawn ?? agent ?? config['agent.subagent_max_turns'];
}

/**
 * The token budget a run asks for, resolved once at admission: the spawn's own `max_tokens`, else the
 * agent's, else `agent.subagent_max_tokens`. 0 = none. The scheduler narrows a nested run's to what its
 * ancestors have left, and counts against it.
 */
export function resolveMaxTokens(
  spawn: number | undefined,
  agent: number | undefined,
  config: Pick<CrewConfig, 'agent.subagent_max_tokens'>,
): number {
  return spawn ?? agent ?? config['agent.subagent_max_tokens'];
}
