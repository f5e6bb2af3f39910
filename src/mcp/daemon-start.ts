import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CrewFault } from '../core/errors.js';
import { readToken } from '../daemon/daemon-address.js';
import { isDaemonUp } from '../daemon/daemon-health.js';
import { entryCommand } from '../self-command.js';

/** How long a daemon the bridge started may take to answer, when it neither answers nor exits. */
const DAEMON_START_TIMEOUT_MS = 15_000;
const DAEMON_POLL_MS = 100;
/** After the started daemon exited: how long another bridge's daemon may take to answer instead. */
const LOSER_GRACE_MS = 1000;
/** How long the second look at an address may take (a daemon busy starting answers slowly). */
const JUDGE_TIMEOUT_MS = 3000;
/** The most of a failed daemon's output a tool result quotes. */
const CAUSE_MAX_CHARS = 1500;

/**
 * Why the bridge cannot reach a daemon: said at once, with the cause and what to do, in the parent's tool
 * result. A `daemon_unreachable` fault, as the CLI's is when no daemon answers.
 */
export class DaemonUnavailable extends CrewFault {
  override readonly name = 'DaemonUnavailable';

  constructor(message: string, details: Record<string, unknown> = {}) {
    super('daemon_unreachable', message, details);
  }
}

export interface DaemonStartOptions {
  crewHome: string;
  env: NodeJS.ProcessEnv;
  url: string;
  signal: AbortSignal;
  log: (line: string) => void;
}

/**
 * Reaches the daemon at `url`, starting `crew serve` (detached, its output appended to
 * `$CREW_HOME/daemon.log`) when none answers. Never a silent 15 s wait (issue 29): a daemon of another
 * `CREW_HOME` on the port (it refuses this home's token), a home that cannot be made, and a daemon that
 * exits before it answers (the port is taken, the home is broken) each throw {@link DaemonUnavailable}
 * at once, quoting the daemon's own words.
 */
export async function ensureDaemon(options: DaemonStartOptions): Promise<void> {
  const { crewHome, env, url, signal } = options;
  if (await isDaemonUp(url, readToken(crewHome, env))) return;
  if ((await judgeAnswer(url, crewHome, readToken(crewHome, env))) === 'ours') return;
  try {
    mkdirSync(crewHome, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new DaemonUnavailable(
      `CREW_HOME ${crewHome} cannot be used (${(error as Error).message}); point crew mcp at a directory with --home DIR or CREW_HOME`,
    );
  }
  const logPath = join(crewHome, 'daemon.log');
  let logFd: number;
  let offset: number;
  try {
    logFd = openSync(logPath, 'a', 0o600);
    offset = statSync(logPath).size;
  } catch (error) {
    throw new DaemonUnavailable(
      `CREW_HOME ${crewHome} cannot be written (${(error as Error).message}); point crew mcp at a writable directory with --home DIR or CREW_HOME`,
    );
  }
  const port = new URL(url).port || '7878';
  const [node, ...args] = entryCommand('cli/main').command as [string, ...string[]];
  let exited: number | null | undefined;
  const child = spawn(node, [...args, 'serve', '--port', port], {
    detached: true,
    stdio: ['ignore', logFd, logFd],
    env: { ...env, CREW_HOME: crewHome },
  });
  closeSync(logFd);
  const ended = new Promise<false>((resolve) => {
    child.once('exit', (code, sig) => {
      exited = code ?? (sig ? 128 : null);
      resolve(false);
    });
    child.once('error', () => {
      exited = -1;
      resolve(false);
    });
  });
  child.unref();
  options.log(`crew mcp: started a daemon (pid ${child.pid}) at ${url}; its output goes to ${logPath}`);
  const deadline = Date.now() + DAEMON_START_TIMEOUT_MS;
  while (Date.now() < deadline && !signal.aborted) {
    // An exit ends the wait at once, even while a probe of a port that never answers is under way.
    if (await Promise.race([isDaemonUp(url, readToken(crewHome, env)), ended])) return;
    if (exited !== undefined) {
      // Another bridge may have started one at the same moment that won the port or the home's lock:
      // that one is as good, once it answers.
      const graceEnd = Date.now() + LOSER_GRACE_MS;
      while (Date.now() < graceEnd && !signal.aborted) {
        if (await isDaemonUp(url, readToken(crewHome, env))) return;
        await new Promise((resolve) => setTimeout(resolve, DAEMON_POLL_MS));
      }
      const said = tail(logPath, offset);
      throw new DaemonUnavailable(
        `the Crew daemon could not start at ${url} (exit ${exited})${said ? `: ${said}` : ''}; full output in ${logPath}`,
      );
    }
    await Promise.race([new Promise((resolve) => setTimeout(resolve, DAEMON_POLL_MS)), ended]);
  }
  // The bridge is closing: its caller is gone, so no tool result carries this.
  if (signal.aborted) throw new Error('the bridge is closing');
  throw new DaemonUnavailable(
    `the Crew daemon started at ${url} did not answer within ${DAEMON_START_TIMEOUT_MS / 1000}s; read its output in ${logPath} for the cause, or start one yourself with crew serve`,
    { url, logPath },
  );
}

/**
 * A second, patient look at `url` (the first probe may have timed out on a daemon busy starting): `ours`
 * when it takes this home's token, `none` when nothing answers (start one); a Crew daemon that refuses
 * the token (another home) or anything else on the port is refused, naming what to do.
 */
async function judgeAnswer(
  url: string,
  crewHome: string,
  token: string | undefined,
): Promise<'ours' | 'none'> {
  let response: Response;
  try {
    response = await fetch(`${url}/api/health`, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
      signal: AbortSignal.timeout(JUDGE_TIMEOUT_MS),
    });
  } catch {
    return 'none';
  }
  await response.body?.cancel().catch(() => undefined);
  if (response.ok) return 'ours';
  if (response.status === 401 && /realm="crew"/.test(response.headers.get('www-authenticate') ?? '')) {
    throw new DaemonUnavailable(
      `a Crew daemon answers at ${url} but refuses the token in ${join(crewHome, 'token')}: it runs with another CREW_HOME. Give crew mcp that home (--home DIR, or CREW_HOME in the client's env; clients that pass no environment need --home)`,
    );
  }
  throw new DaemonUnavailable(
    `something that is not this Crew daemon answers at ${url} (HTTP ${response.status}); stop it, or run Crew on another port (crew serve --port N, then CREW_URL or --home of that daemon)`,
  );
}

/** What the daemon wrote after `offset`, its last lines, bounded. */
function tail(path: string, offset: number): string {
  try {
    const size = statSync(path).size;
    const length = Math.min(size - offset, 64 * 1024);
    if (length <= 0) return '';
    const buffer = Buffer.alloc(length);
    const fd = openSync(path, 'r');
    try {
      readSync(fd, buffer, 0, length, size - length);
    } finally {
      closeSync(fd);
    }
    const text = buffer.toString('utf8').trim().split('\n').slice(-5).join(' | ');
    return text.length > CAUSE_MAX_CHARS ? `…${text.slice(-CAUSE_MAX_CHARS)}` : text;
  } catch {
    return '';
  }
}
