import { type ChildProcess, spawn } from 'node:child_process';
import type { Clock } from '../core/clock.js';
import { CrewFault } from '../core/errors.js';
import { raiseOomScoreAdj } from './oom-score.js';
import { isExecutable, isGroupAlive, killTree, readStartTime } from './process-group.js';
import type { RunCell } from './run-cell.js';
import { stopCell } from './stop-cell.js';

/**
 * An agent process for the ACP runner: started detached (it leads its own session and process group, so
 * the whole tree can be signalled at once), stdio piped, without a shell. Stopping one means the group
 * is gone, not just the leader: a grandchild the agent started dies with it.
 *
 * With a `cell` (run-cell.ts) the process starts inside it and stopping ends the whole cell, so a
 * process that left the group (`setsid` in a grandchild) goes too.
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
  /** What holds every process it starts, when it was given one. */
  cell?: RunCell | undefined;
}

const STDERR_TAIL_CHARS = 4096;

/**
 * Starts `argv` as the leader of a new process group with stdin, stdout and stderr piped. Throws when the
 * process cannot be started (missing executable or working directory).
 */
export function spawnAgentProcess(
  argv: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; oomScoreAdj?: number; cell?: RunCell },
): AgentProcess {
  const [command] = argv;
  if (command === undefined || command === '')
    throw new CrewFault(
      'agent_unstartable',
      'the agent command is empty; give the agent a command in its file',
    );
  const wrapped = options.cell ? options.cell.wrap(argv) : [...argv];
  // Through the cell's wrapper a missing executable would be its exit 127: look it up first.
  if (wrapped[0] !== command && !isExecutable(command, options.cwd, options.env.PATH)) {
    options.cell?.release();
    throw unstartable(command, options.cwd);
  }
  const [file, ...args] = wrapped as [string, ...string[]];
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
  if (pid === undefined) {
    options.cell?.release();
    throw unstartable(command, options.cwd);
  }
  // Read before yielding: even a process that already died is an unreaped zombie until then.
  const startTime = readStartTime(pid);
  options.cell?.adopt(pid, startTime);
  if (options.oomScoreAdj) raiseOomScoreAdj(pid, options.oomScoreAdj);
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
    cell: options.cell,
  };
  return proc;
}

/** `exited with code 3` / `was killed by SIGKILL`. */
export function describeExit(exit: ExitInfo): string {
  if (exit.signal) return `was killed by ${exit.signal}`;
  return `exited with code ${exit.code ?? 'unknown'}`;
}

/**
 * Ends the process group of `proc`: SIGTERM, then SIGKILL after `graceMs` if anything remains. Resolves
 * once the group is gone (or, rarely, once the bounded wait after SIGKILL ran out).
 */
export async function terminateGroup(
  proc: AgentProcess,
  options: { clock: Clock; graceMs: number },
): Promise<void> {
  if (proc.cell !== undefined) {
    await stopCell(proc.cell, options);
    return;
  }
  // While the leader runs, the group is alive for sure; the /proc scan is only needed after it exits.
  if (proc.exit !== undefined && !isGroupAlive(proc.pid)) return;
  await killTree(proc.pid, options);
}

/** The agent's command cannot be started: said with what to check (`crew agents check` runs the same). */
function unstartable(command: string, cwd: string): CrewFault {
  return new CrewFault(
    'agent_unstartable',
    `cannot start "${command}" in ${cwd}: not found or not executable; install it or fix the agent's command (crew agents check)`,
    { command, cwd },
  );
}
