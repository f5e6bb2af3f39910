import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The parent of `crew spawn` without `--wait`: nobody waits, so its events go to `$CREW_HOME/events.log`. */
export const CLI_LOG_PARENT = 'cli:log';

/** `$CREW_HOME/gateway.json`: written by `crew serve` at start, removed at exit. */
export interface GatewayFile {
  pid: number;
  host: string;
  port: number;
  url: string;
  started_at: string;
}

export function gatewayFilePath(crewHome: string): string {
  return join(crewHome, 'gateway.json');
}

export function readGatewayFile(crewHome: string): GatewayFile | undefined {
  try {
    const parsed = JSON.parse(readFileSync(gatewayFilePath(crewHome), 'utf8')) as GatewayFile;
    return typeof parsed.url === 'string' && typeof parsed.pid === 'number' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** Where the daemon is: `CREW_URL`, else `gateway.json`, else the default address. */
export function daemonUrl(crewHome: string, env: NodeJS.ProcessEnv): string {
  const fromEnv = env.CREW_URL?.trim();
  if (fromEnv) return fromEnv.replace(/\/+$/, '');
  return readGatewayFile(crewHome)?.url ?? 'http://127.0.0.1:7878';
}

/** The operator token: `CREW_TOKEN`, else `$CREW_HOME/token`. */
export function readToken(crewHome: string, env: NodeJS.ProcessEnv): string | undefined {
  const fromEnv = env.CREW_TOKEN?.trim();
  if (fromEnv) return fromEnv;
  try {
    return readFileSync(join(crewHome, 'token'), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}
