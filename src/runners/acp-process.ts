import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type { Clock } from '../core/clock.js';

/**
 * An agent process for the ACP runner: started detached (it leads its own session and process group, so
 * the whole tree can be signalled at once), stdio piped, without a shell. Stopping one means the group
 * is gone, not just the leader: a grandchild the agent started dies with it.
 *
 * Left out: processes that left the group (`setsid` in a grandchild); the host's tree walker finds those.
 */

/** How the leader ended: Node's `exit` event arguments. */
export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface AgentProcess {
  child: ChildProcess;
  /** The leader's pid, which is also the process group id. */
  pid: number;
  /** Field 22 of `/proc/<pid>/stat` (clock ticks since boot); undefined off Linux. */
  startTime: number | undefined;
  /** Settles when the leader exits; never rejects. */
  exited: Promise<ExitInfo>;
  /** The leader's exit, once it happened. */
  exit: ExitInfo | undefined;
  /** The last few KiB the agent wrote to stderr, for failure reasons. */
  stderrTail(): string;
}

const STDERR_TAIL_CHARS = 4096;

/**
 * Starts `argv` as the leader of a new process group with stdin, stdout and stderr piped. Throws when the
 * process cannot be started (missing executable or working directory).
 */
export function spawnAgentProcess(
  argv: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): AgentProcess {
  const [file, ...args] = argv;
  if (file === undefined || file === '') throw new Error('the agent command is empty');
  const child = spawn(file, args, {
    cwd: options.cwd,
    env: options.env,
    detached: true,
    shell: false,
    stdio: ['pipe', 'pipe', 'pipe'],
    windowsHide: true,
  });
  // A failed spawn is an 'error' event on the next tick; unheard, it would crash the gateway. The missing
  // pid reports it below. Pipe errors (EPIPE to a dead agent) surface as the agent's exit instead.
  child.on('error', () => {});
  child.stdin?.on('error', () => {});
  const pid = child.pid;
  if (pid === undefined)
    throw new Error(`cannot start "${file}" in ${options.cwd}: not found or not executable`);
  // Read before yielding: even a process that already died is an unreaped zombie until then.
  const startTime = readStartTime(pid);
  let tail = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (text: string) => {
    tail = (tail + text).slice(-STDERR_TAIL_CHARS);
  });
  const proc: AgentProcess = {
    child,
    pid,
    startTime,
    exit: undefined,
    exited: new Promise<ExitInfo>((resolve) => {
      child.once('exit', (code, signal) => {
        proc.exit = { code, signal };
        resolve(proc.exit);
      });
    }),
    stderrTail: () => tail,
  };
  return proc;
}

/** `exited with code 3` / `was killed by SIGKILL`. */
export function describeExit(exit: ExitInfo): string {
  if (exit.signal) return `was killed by ${exit.signal}`;
  return `exited with code ${exit.code ?? 'unknown'}`;
}

/** Fields 3.. of `/proc/<pid>/stat` (after the command name, which may hold spaces and ')'). */
function statFields(pid: number | string): string[] | undefined {
  try {
    const line = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return line.slice(line.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** The start time of a process: field 22 of `/proc/<pid>/stat`; undefined off Linux or when gone. */
export function readStartTime(pid: number): number | undefined {
  const value = Number(statFields(pid)?.[19]);
  return Number.isSafeInteger(value) ? value : undefined;
}

/**
 * Whether any live process remains in group `pgid`. Zombies do not count: where init reaps orphans
 * lazily, an orphaned grandchild can linger as a zombie that holds nothing and never runs again.
 */
export function isGroupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return true; // No /proc: signal 0 is the best answer there is.
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(entry);
    if (fields && Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true;
  }
  return false;
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: already gone.
  }
}

const POLL_MS = 25;
/** After SIGKILL, how long to wait for the group to vanish before giving up (uninterruptible sleep). */
const AFTER_KILL_MS = 5000;

/**
 * Ends the process group of `proc`: SIGTERM, then SIGKILL after `graceMs` if anything remains. Resolves
 * once the group is gone (or, rarely, once the bounded wait after SIGKILL ran out).
 */
export async function terminateGroup(
  proc: AgentProcess,
  options: { clock: Clock; graceMs: number },
): Promise<void> {
  const { clock, graceMs } = options;
  // While the leader runs, the group is alive for sure; the /proc scan is only needed after it exits.
  const alive = () => proc.exit === undefined || isGroupAlive(proc.pid);
  if (!alive()) return;
  signalGroup(proc.pid, 'SIGTERM');
  if (await waitGone(alive, clock, graceMs)) return;
  signalGroup(proc.pid, 'SIGKILL');
  await waitGone(alive, clock, AFTER_KILL_MS);
}

/** Polls until `alive()` is false or `limitMs` passed; true when it is gone. */
async function waitGone(alive: () => boolean, clock: Clock, limitMs: number): Promise<boolean> {
  const start = clock.now();
  while (alive()) {
    if (clock.now() - start >= limitMs) return false;
    await new Promise<void>((resolve) => clock.setTimer(resolve, Math.min(POLL_MS, limitMs)));
  }
  return true;
}
