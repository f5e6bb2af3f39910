import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { applyAgentEnv } from '../core/agent-env.js';
import type { Clock } from '../core/clock.js';
import { CrewError, refuse } from '../core/errors.js';
import { processGroupContainment } from './create-containment.js';
import { PausableCells } from './pausable-cells.js';
import type { ExitInfo } from './process-group.js';
import { spawnDetached } from './process-group.js';
import type { Containment, RunCell } from './run-cell.js';
import type { RunHandle, Runner, RunnerEvent, RunRequest } from './runner.js';
import type { Spawner } from './spawner.js';
import { stopCell } from './stop-cell.js';

/**
 * The `command` runner (DESIGN §6, Runners): one process per run, started detached from an argv
 * template, never through a shell. stdout and stderr become `output` events as they arrive; exit 0 is
 * `completed`, anything else `failed`.
 *
 * `{task}` is the request's whole prompt (system prompt and context groups already prepended), since a
 * plain command has no other channel for them.
 *
 * What a plain command cannot do, and says so: steering (`steer` rejects with `invalid_argument`), and
 * kept conversations (a start with `continueFrom` ends `failed`; `keep` runs the command once and keeps
 * nothing, so `release` has nothing to end).
 */

/** The values an argv template's placeholders stand for. Absent values become empty strings. */
export interface PlaceholderValues {
  task: string;
  cwd: string;
  agent: string;
  model?: string | undefined;
  effort?: string | undefined;
}

const PLACEHOLDER = /\{(task|cwd|agent|model|effort)\}/g;
/** An argument that is only one of these and has no value is dropped rather than passed empty. */
const DROPPABLE = new Set(['{model}', '{effort}']);

/**
 * Substitutes `{task}`, `{cwd}`, `{agent}`, `{model}` and `{effort}` inside each argument. Values are
 * inserted literally (no shell, no `$` patterns), so a task stays one argument whatever it holds.
 * Unknown `{words}` are left as written.
 *
 * @example expandCommand(['claude', '-p', '{task}', '--model={model}'], {task: 'hi', cwd: '/', agent: 'a'})
 * // → ['claude', '-p', 'hi', '--model=']
 */
export function expandCommand(template: readonly string[], values: PlaceholderValues): string[] {
  const argv: string[] = [];
  for (const arg of template) {
    if (DROPPABLE.has(arg) && !placeholderValue(values, arg.slice(1, -1))) continue;
    argv.push(arg.replace(PLACEHOLDER, (_match, name: string) => placeholderValue(values, name)));
  }
  return argv;
}

function placeholderValue(values: PlaceholderValues, name: string): string {
  return values[name as keyof PlaceholderValues] ?? '';
}

export interface CommandRunnerOptions {
  clock: Clock;
  /** SIGTERM → SIGKILL grace for a run's process group (config `host.kill_grace_secs` × 1000). */
  killGraceMs: number;
  /**
   * After the process group is gone, how long to wait for its pipes to drain before closing them (a
   * process that left the group could hold them open forever). @default 1000
   */
  drainMs?: number;
  /** The `oom_score_adj` a run's process is raised to (`host.oom_score_adj`). @default 0, left as inherited */
  oomScoreAdj?: number;
  /**
   * Holds each run's processes, in whatever group or session (see run-cell.ts).
   * @default the process group tree
   */
  containment?: Containment;
  /** How often the process-group fallback looks for a run's processes between its start and end. @default 500 */
  watchMs?: number;
  /** Where each live run's cell is offered to the memory pause (`memory-pauser.ts`). @default none */
  pausable?: PausableCells;
  /**
   * Starts the processes from a helper process instead of forking this one (spawner.ts; the daemon's
   * choice). The caller closes it after the runner. @default none: each run is forked from this process
   */
  spawner?: Spawner;
}

/** The key of the environment cache for an agent without an `env` of its own. */
const NO_AGENT_ENV = {};

type Ended = Extract<RunnerEvent, { type: 'ended' }>;

/** A started run process, however it was started (forked here or by the spawner). */
interface Launched {
  stdout: Readable | null;
  stderr: Readable | null;
  /** Settles when the leader exits. */
  exited: Promise<ExitInfo>;
  /** Closes what is left of the pipes. */
  closePipes(): void;
}

/**
 * Runs command agents. `stop(reason)` kills the run's process group (SIGTERM, SIGKILL after
 * `killGraceMs`) and ends it `cancelled` once the group is gone, whatever the reason: the gateway knows
 * why it stopped the run (a timeout becomes `timed_out` there). When the command exits by itself,
 * anything it left running in its group is killed the same way before `ended`.
 */
export class CommandRunner implements Runner {
  private readonly live = new Set<CommandRun>();
  private closed = false;
  /**
   * Each agent config's environment, computed once (not a copy of `process.env` per spawn), keyed by
   * its `env` object: a changed config is a new object, so it gets a fresh one.
   */
  private readonly envs = new WeakMap<object, NodeJS.ProcessEnv>();

  constructor(private readonly options: CommandRunnerOptions) {}

  start(request: RunRequest, onEvent: (event: RunnerEvent) => void): RunHandle {
    const run = new CommandRun(onEvent, {
      clock: this.options.clock,
      killGraceMs: this.options.killGraceMs,
      drainMs: this.options.drainMs ?? 1000,
      oomScoreAdj: this.options.oomScoreAdj ?? 0,
      containment: this.options.containment ?? processGroupContainment,
      watchMs: this.options.watchMs ?? 500,
      pausable: this.options.pausable ?? new PausableCells(),
      spawner: this.options.spawner,
    });
    this.live.add(run);
    void run.done.then(() => this.live.delete(run));
    if (this.closed) run.fail('the command runner is closed; the gateway is shutting down');
    else if (request.continueFrom !== undefined) {
      run.fail(
        `agent ${request.agent.name} is a command agent, which keeps no conversation to continue; spawn a new run instead`,
      );
    } else {
      const argv = expandCommand(request.agent.command, {
        task: request.prompt,
        cwd: request.cwd,
        agent: request.agent.name,
        model: request.model ?? request.agent.model,
        effort: request.reasoningEffort,
      });
      run.launch(argv, request.cwd, this.envOf(request.agent.env), request.runId, request.agent.name);
    }
    return {
      stop: () => run.stop(),
      steer: async () => {
        throw new CrewError(
          refuse(
            'invalid_argument',
            `run ${request.runId} uses a command runner, which cannot be steered; cancel it and spawn again with the new instructions`,
            { path: 'agent_id' },
          ),
        );
      },
    };
  }

  private envOf(agentEnv: Readonly<Record<string, string>> | undefined): NodeJS.ProcessEnv {
    const key = agentEnv ?? NO_AGENT_ENV;
    let env = this.envs.get(key);
    if (env === undefined) {
      env = applyAgentEnv(process.env, agentEnv).env;
      this.envs.set(key, env);
    }
    return env;
  }

  /** Command agents keep no conversations, so there is nothing to end. */
  async release(_conversationId: string): Promise<void> {}

  async close(): Promise<void> {
    this.closed = true;
    const runs = [...this.live];
    for (const run of runs) run.stop();
    await Promise.all(runs.map((run) => run.done));
  }
}

/** One run's process, from spawn to its one `ended`. */
class CommandRun {
  /** Settles once `ended` has been delivered. */
  readonly done: Promise<void>;
  private resolveDone: () => void = () => {};
  private ended = false;
  private proc: Launched | undefined;
  /** A stop asked for while the spawner was still starting the process: done once it has. */
  private stopAsked = false;
  private cell: RunCell | undefined;
  private runId: string | undefined;
  private watchTimer: ReturnType<Clock['setTimer']> | undefined;
  private drained: Promise<unknown> = Promise.resolve();
  private exit: ExitInfo | undefined;
  private stopping = false;
  private finishing = false;

  constructor(
    private readonly onEvent: (event: RunnerEvent) => void,
    private readonly options: Required<Omit<CommandRunnerOptions, 'spawner'>> & {
      spawner: Spawner | undefined;
    },
  ) {
    this.done = new Promise((resolve) => {
      this.resolveDone = resolve;
    });
  }

  /**
   * Events go out on a later microtask, so the caller holds the handle before the first one; nothing
   * follows `ended`.
   */
  private emit(event: RunnerEvent): void {
    if (this.ended) return;
    if (event.type !== 'ended') {
      queueMicrotask(() => this.onEvent(event));
      return;
    }
    this.ended = true;
    queueMicrotask(() => {
      try {
        this.onEvent(event);
      } finally {
        this.resolveDone();
      }
    });
  }

  fail(error: string): void {
    this.emit({ type: 'ended', status: 'failed', error });
  }

  launch(argv: string[], cwd: string, env: NodeJS.ProcessEnv, runId: string, agent: string): void {
    const cell = this.options.containment.open(runId);
    const spawner = this.options.spawner;
    if (spawner !== undefined) {
      this.launchVia(spawner, argv, cwd, env, cell, runId, agent);
      return;
    }
    let proc: ReturnType<typeof spawnDetached>;
    try {
      proc = spawnDetached(argv, { cwd, env, stdin: 'ignore', oomScoreAdj: this.options.oomScoreAdj, cell });
    } catch (error) {
      cell.release();
      this.fail((error as Error).message);
      return;
    }
    this.running(
      {
        stdout: proc.child.stdout,
        stderr: proc.child.stderr,
        exited: proc.exited,
        closePipes: () => {
          proc.child.stdout?.destroy();
          proc.child.stderr?.destroy();
        },
      },
      cell,
      proc.pid,
      proc.startTime,
      runId,
      agent,
    );
  }

  /** As {@link launch}, through the spawner: the process is running once it says so. */
  private launchVia(
    spawner: Spawner,
    argv: string[],
    cwd: string,
    env: NodeJS.ProcessEnv,
    cell: RunCell,
    runId: string,
    agent: string,
  ): void {
    const proc = spawner.spawn(argv, { cwd, env, cell });
    proc.started.then(
      ({ pid, startTime }) => {
        this.running(
          {
            stdout: proc.stdout,
            stderr: proc.stderr,
            exited: proc.exited,
            closePipes: () => {
              proc.stdout.destroy();
              proc.stderr.destroy();
              proc.drop();
            },
          },
          cell,
          pid,
          startTime,
          runId,
          agent,
        );
        if (this.stopAsked) this.stop();
      },
      (error: Error) => {
        cell.release();
        this.fail(error.message);
      },
    );
  }

  /** The process runs: say so, stream its output, and end the run when it exits. */
  private running(
    proc: Launched,
    cell: RunCell,
    pid: number,
    startTime: number | undefined,
    runId: string,
    agent: string,
  ): void {
    this.proc = proc;
    this.cell = cell;
    this.runId = runId;
    this.options.pausable.add(runId, { cell, agent, startedAt: this.options.clock.now() });
    this.emit({
      type: 'started',
      pid,
      shared: false,
      ...(startTime === undefined ? {} : { startTime }),
    });
    // The process-group fallback finds an escapee only while it can still trace it to the run: look
    // now and then, so one whose parent exits later is remembered (a cgroup needs no looking).
    if (cell.kind === 'process_group') this.watch(cell);
    const emit = (event: RunnerEvent): void => this.emit(event);
    this.drained = Promise.all([streamOutput(proc.stdout, emit), streamOutput(proc.stderr, emit)]);
    void proc.exited.then(async (exit) => {
      this.exit = exit;
      await cell.leaderExited?.();
      // The command is done; what it left running (background children, in its group or not) goes with it.
      this.finish(() => this.kill());
    });
  }

  private watch(cell: RunCell): void {
    const { clock, watchMs } = this.options;
    const look = (): void => {
      this.watchTimer = undefined;
      if (this.exit !== undefined || this.finishing) return;
      cell.members();
      this.watchTimer = clock.setTimer(look, watchMs);
    };
    this.watchTimer = clock.setTimer(look, watchMs);
  }

  /** A stop after the command exited by itself changes nothing: its outcome is already decided. */
  stop(): void {
    const proc = this.proc;
    if (proc === undefined) {
      // Still being started by the spawner: stopped as soon as it runs.
      this.stopAsked = true;
      return;
    }
    if (this.ended || this.stopping || this.exit !== undefined) return;
    this.stopping = true;
    this.finish(() => this.kill());
  }

  /** Ends everything in the run's cell (already empty: nothing to wait for) and removes the cell. */
  private kill(): Promise<unknown> {
    const cell = this.cell;
    if (cell === undefined) return Promise.resolve();
    return stopCell(cell, { graceMs: this.options.killGraceMs, clock: this.options.clock });
  }

  /**
   * The one path to `ended`, taken by whichever comes first (the leader's exit or a stop): empty the
   * group, drain the pipes, then decide the outcome from what happened.
   */
  private finish(cleanup: () => Promise<unknown>): void {
    const proc = this.proc;
    if (this.finishing || proc === undefined) return;
    this.finishing = true;
    // Ending now: the memory pause lets go of it (the stop thaws a paused cell before it kills).
    if (this.runId !== undefined) this.options.pausable.delete(this.runId);
    // No look outlives the run (nor a closed runner).
    if (this.watchTimer !== undefined) this.options.clock.clearTimer(this.watchTimer);
    this.watchTimer = undefined;
    const settle = async (): Promise<void> => {
      await cleanup();
      await this.drain(proc);
      await proc.exited;
      this.emit(
        this.stopping ? { type: 'ended', status: 'cancelled', stop: 'cancelled' } : outcome(this.exit),
      );
    };
    settle().catch((error: unknown) => this.fail(`the command runner failed: ${(error as Error).message}`));
  }

  /** Waits for both pipes to end; after `drainMs`, closes what a process outside the group holds open. */
  private async drain(proc: Launched): Promise<void> {
    const { clock, drainMs } = this.options;
    let timer: ReturnType<Clock['setTimer']> | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = clock.setTimer(resolve, drainMs);
    });
    await Promise.race([this.drained, timeout]);
    if (timer !== undefined) clock.clearTimer(timer);
    proc.closePipes();
  }
}

/** Streams one pipe as `output` events, decoding UTF-8 without splitting a character across chunks. */
function streamOutput(stream: Readable | null, emit: (event: RunnerEvent) => void): Promise<void> {
  if (stream === null) return Promise.resolve();
  const decoder = new StringDecoder('utf8');
  return new Promise((resolve) => {
    stream.on('data', (chunk: Buffer) => {
      const text = decoder.write(chunk);
      if (text !== '') emit({ type: 'output', text });
    });
    let flushed = false;
    const flush = (): void => {
      if (flushed) return;
      flushed = true;
      const rest = decoder.end();
      if (rest !== '') emit({ type: 'output', text: rest });
      resolve();
    };
    stream.once('end', flush);
    stream.once('close', flush);
    stream.on('error', () => {});
  });
}

function outcome(exit: ExitInfo | undefined): Ended {
  if (exit?.code === 0) return { type: 'ended', status: 'completed' };
  if (exit?.code !== null && exit?.code !== undefined) {
    return { type: 'ended', status: 'failed', exitCode: exit.code, error: `exited with code ${exit.code}` };
  }
  return { type: 'ended', status: 'failed', error: `killed by ${exit?.signal ?? 'an unknown signal'}` };
}
