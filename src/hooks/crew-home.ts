import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * Where Crew keeps its files (DESIGN §6, Files): `CREW_HOME` when set and non-empty, else `~/.crew`.
 * The hook resolves this itself rather than through the CLI so it loads nothing else.
 *
 * @default `~/.crew`
 */
export function resolveCrewHome(env: NodeJS.ProcessEnv): string {
  const fromEnv = env.CREW_HOME?.trim();
  if (fromEnv) return fromEnv;
  return join(env.HOME?.trim() || homedir(), '.crew');
}

/** `$CREW_HOME/crew.db`: the SQLite file the width ledger shares with Crew's run store. */
export function crewDbPath(crewHome: string): string {
  return join(crewHome, 'crew.db');
}

/** `$CREW_HOME/config.json`: the flat object of keys a user set. */
export function crewConfigPath(crewHome: string): string {
  return join(crewHome, 'config.json');
}
