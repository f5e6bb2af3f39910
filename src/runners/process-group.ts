import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants, readdirSync, readFileSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, resolve } from 'node:path';
import type { Clock } from '../core/clock.js';
import { CrewFault } from '../core/errors.js';
import { raiseOomScoreAdj } from './oom-score.js';
import type { RunCell } from './run-cell.js';

/**
 * Process groups for dedicated runs (DESIGN §6, Runners): every run's process starts detached, so it
 * leads its own session and process group, and the whole group can be signalled at once. A run is
 * identified by (pid, startTime) so that a pid the kernel reused for an unrelated process is never
 * mistaken for it, and never killed.
 *
 * A process that leaves the group (`setsid` in a grandchild) is held by the run's cell (run-cell.ts),
 * passed as `cell`: the leader starts inside it.
 */

/** How the leader of a group ended: Node's `exit` event arguments. */
export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface SpawnDetachedOptions {
  /** Working directory of the new process. */
  cwd: string;
  /** The environment. @default process.env */
  env?: NodeJS.ProcessEnv;
  /** `pipe` for a protocol on stdin (ACP), `ignore` to give it /dev/null. @default 'ignore' */
  stdin?: 'pipe' | 'ignore';
  /** Raised to this at once (`raiseOomScoreAdj`, `host.oom_score_adj`). @default 0, left as inherited */
  oomScoreAdj?: number;
  /** The run's containment: the leader starts inside it (see run-cell.ts). */
  cell?: RunCell;
}

export interface DetachedProcess {
  child: ChildProcess;
  /** The leader's pid, which is also the process group id. */
  pid: number;
  /** Field 22 of `/proc/<pid>/stat` (clock ticks since boot); undefined off Linux. */
  startTime: number | undefined;
  /** Settles when the leader exits (never rejects); the rest of the group may live on. */
  exited: Promise<ExitInfo>;
}

/**
 * Starts `argv` without a shell as the leader of a new session and process group; stdout and stderr are
 * pipes. Throws when the process cannot be started (missing executable or working directory).
 */
export function spawnDetached(argv: readonly string[], options: SpawnDetachedOptions): DetachedProcess {
  const [command] = argv;
  if (command === undefined || command === '')
    throw new CrewFault(
      'agent_unstartable',
      'cannot start a process: the command is empty; give the agent a command',
    );
  const env = options.env ?? process.env;
  // Through the cell's wrapper a missing executable would be the wrapper's exit 127, not a failed spawn:
  // look it up first, so the reason stays the same.
  const wrapped = options.cell ? options.cell.wrap(argv) : [...argv];
  if (wrapped[0] !== command && !isExecutable(command, options.cwd, env.PATH))
    throw new CrewFault('agent_unstartable', describeSpawnFailure(command, options.cwd), {
      command,
      cwd: options.cwd,
    });
  const [file, ...args] = wrapped;
  // Unreachable: `command` is set, and a cell's wrapper is never empty.
  if (file === undefined) throw new Error('cannot start a process: the command is empty');
  const child = spawn(file, args, {
    cwd: options.cwd,
    env,
    detached: true,
    shell: false,
    stdio: [options.stdin ?? 'ignore', 'pipe', 'pipe'],
    windowsHide: true,
  });
  // Node reports a failed spawn as an 'error' event on the next tick; without a listener it would crash
  // the gateway. The failure is reported to the caller below instead.
  child.on('error', () => {});
  const pid = child.pid;
  if (pid === undefined)
    throw new CrewFault('agent_unstartable', describeSpawnFailure(command, options.cwd), {
      command,
      cwd: options.cwd,
    });
  // Read now, before yielding to the event loop: even a process that already exited is still an
  // unreaped zombie here, so its stat line is there to read.
  const startTime = readStartTime(pid);
  options.cell?.adopt(pid, startTime);
  if (options.oomScoreAdj) raiseOomScoreAdj(pid, options.oomScoreAdj);
  const exited = new Promise<ExitInfo>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  return { child, pid, startTime, exited };
}

/** Whether `command` names an executable file, as `execvp` would find it from `cwd` on `path`. */
export function isExecutable(command: string, cwd: string, path: string | undefined): boolean {
  const candidates = command.includes('/')
    ? [isAbsolute(command) ? command : resolve(cwd, command)]
    : (path ?? '/usr/bin:/bin').split(delimiter).map((dir) => resolve(cwd, dir === '' ? '.' : dir, command));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return true;
    } catch {
      // Not this one.
    }
  }
  return false;
}

export function describeSpawnFailure(file: string, cwd: string): string {
  let cwdIsDirectory = false;
  try {
    cwdIsDirectory = statSync(cwd).isDirectory();
  } catch {
    // Reported below.
  }
  if (!cwdIsDirectory) return `cannot start "${file}": the working directory ${cwd} does not exist`;
  return `cannot start "${file}": not found on PATH or not executable`;
}

interface ProcStat {
  state: string;
  /** Process group id. */
  pgrp: number;
  startTime: number;
}

/** Parses `/proc/<pid>/stat`; undefined when the process is gone or there is no `/proc`. */
function readProcStat(pid: number): ProcStat | undefined {
  let line: string;
  try {
    line = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may itself hold spaces and ')': fields 3.. start
  // after the last ')'.
  const fields = line.slice(line.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  const pgrp = Number(fields[2]); // field 5
  const startTime = Number(fields[19]); // field 22
  if (state === undefined || !Number.isSafeInteger(pgrp) || !Number.isSafeInteger(startTime))
    return undefined;
  return { state, pgrp, startTime };
}

/** Zombie or dead: the process has exited and only waits to be reaped. */
function hasExited(stat: ProcStat): boolean {
  return stat.state === 'Z' || stat.state === 'X';
}

/** The start time (field 22 of `/proc/<pid>/stat`) of a live process; undefined off Linux or when gone. */
export function readStartTime(pid: number): number | undefined {
  return readProcStat(pid)?.startTime;
}

/** Whether signal 0 reaches `target` (a pid, or a negative process group id). */
function isSignalable(target: number): boolean {
  try {
    process.kill(target, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether `pid` is a live process (a zombie is not). With `startTime`, also whether it is the same
 * process that had that start time; where start times cannot be read, a given `startTime` cannot be
 * confirmed and the answer is false (never mistake a reused pid).
 */
export function isAlive(pid: number, startTime?: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  const stat = readProcStat(pid);
  if (startTime !== undefined) return stat !== undefined && !hasExited(stat) && stat.startTime === startTime;
  if (stat !== undefined) return !hasExited(stat);
  return isSignalable(pid);
}

/**
 * Whether a live process remains in the process group `pgid`. Signal 0 also reaches zombies, and an
 * orphaned grandchild stays a zombie for as long as the pid 1 it was handed to does not reap it (some
 * container inits never do), so where `/proc` exists a group of zombies only counts as gone.
 */
export function isGroupAlive(pgid: number): boolean {
  if (!Number.isSafeInteger(pgid) || pgid <= 0 || !isSignalable(-pgid)) return false;
  // Most often the leader itself still runs; only a group without it needs the scan.
  const leader = readProcStat(pgid);
  if (leader !== undefined && leader.pgrp === pgid && !hasExited(leader)) return true;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return true;
  }
  for (const entry of entries) {
    const pid = Number(entry);
    if (!Number.isSafeInteger(pid) || pid <= 0) continue;
    const stat = readProcStat(pid);
    if (stat !== undefined && stat.pgrp === pgid && !hasExited(stat)) return true;
  }
  return false;
}

export interface KillTreeOptions {
  /** Time between SIGTERM and SIGKILL. */
  graceMs: number;
  clock: Clock;
  /** How often to look whether the group is gone. @default 20 */
  pollMs?: number;
  /** How long to wait for the group to vanish after SIGKILL before giving up. @default 5000 */
  afterKillMs?: number;
}

/**
 * How a {@link killTree} ended: the group was already gone, left after SIGTERM, needed SIGKILL, or
 * (rarely: a process stuck in uninterruptible sleep) was still there when the wait ran out.
 */
export type KillOutcome = 'already_gone' | 'terminated' | 'killed' | 'stuck';

function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.setTimer(resolve, ms));
}

/**
 * Stops the process group led by `pid`: SIGTERM to the group, SIGKILL to the group after `graceMs` if
 * anything in it remains. Resolves once the group is gone (or the bounded wait after SIGKILL ran out).
 * Polling yields to the event loop, which is what lets Node reap a dead leader so the group can vanish.
 */
export async function killTree(pid: number, options: KillTreeOptions): Promise<KillOutcome> {
  const { clock, graceMs } = options;
  const pollMs = options.pollMs ?? 20;
  const afterKillMs = options.afterKillMs ?? 5000;
  if (!isGroupAlive(pid) || !signalGroup(pid, 'SIGTERM')) return 'already_gone';
  const termAt = clock.now();
  while (clock.now() - termAt < graceMs) {
    await sleep(clock, Math.min(pollMs, graceMs - (clock.now() - termAt)));
    if (!isGroupAlive(pid)) return 'terminated';
  }
  if (!signalGroup(pid, 'SIGKILL')) return 'terminated';
  const killAt = clock.now();
  while (isGroupAlive(pid)) {
    if (clock.now() - killAt >= afterKillMs) return 'stuck';
    await sleep(clock, pollMs);
  }
  return 'killed';
}

/**
 * For a restarted gateway: kills the process group of a lost run only if `pid` still names the process
 * that was started at `startTime`. Returns undefined (and signals nothing) when it does not.
 */
export async function killIfSame(
  pid: number,
  startTime: number,
  options: KillTreeOptions,
): Promise<KillOutcome | undefined> {
  if (!isAlive(pid, startTime)) return undefined;
  return killTree(pid, options);
}
