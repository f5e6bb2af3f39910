/**
 * An agent's `env` map applied to the environment its process starts with (pure). A `${NAME}` in a value
 * takes `base[NAME]` (the daemon's environment), so a secret lives in the daemon's environment and the
 * agent definition only names it. An unset variable becomes the empty string and is reported, so
 * `crew agents check` can say which one is missing.
 */

import { ownValue } from './own.js';

export interface AgentEnvResult {
  env: Record<string, string | undefined>;
  /** Variables a `${NAME}` referred to that `base` does not set. */
  missing: string[];
}

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

export function applyAgentEnv(
  base: Readonly<Record<string, string | undefined>>,
  agentEnv: Readonly<Record<string, string>> | undefined,
): AgentEnvResult {
  if (agentEnv === undefined) return { env: { ...base }, missing: [] };
  const env: Record<string, string | undefined> = { ...base };
  const missing = new Set<string>();
  for (const [key, value] of Object.entries(agentEnv)) {
    env[key] = value.replace(REFERENCE, (_, name: string) => {
      const found = ownValue(base, name);
      if (found === undefined) missing.add(name);
      return found ?? '';
    });
  }
  return { env, missing: [...missing] };
}

/** What a listing shows of an agent's env: its keys, sorted; never the values. */
export function envKeys(agentEnv: Readonly<Record<string, string>> | undefined): string[] {
  return Object.keys(agentEnv ?? {}).sort();
}
