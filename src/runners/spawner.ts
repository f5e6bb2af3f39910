import { type ChildProcess, spawn } from 'node:child_process';
import { PassThrough } from 'node:stream';
import type { ExitInfo } from './process-group.js';
import type { RunCell } from './run-cell.js';
import { SPAWNER_SCRIPT } from './spawner-script.js';

/**
 * Starts run processes from a small long-lived helper process instead of forking the daemon (issue 32
 * §4). A fork copies the page tables of the process that forks: the daemon's (150 MB and growing with
 * its caches) cost about a millisecond of its main thread per run, where the helper's (a bare Node with
 * no modules loaded) costs a fraction of that, and on the helper's thread. The launch path of the daemon
 * is left with one IPC message: no fork, no `/proc` reads (the helper reads the start time and raises
 * `oom_score_adj`), no copy of the environment (each distinct environment is sent once and named).
 *
 * What stays the daemon's: the run's cell (containment, run-cell.ts) wraps the argv before it is sent
 * and adopts the pid when it comes back; ending a run signals its cell or group directly (signals do not
 * care who the parent is). The helper starts lazily at the first spawn; `close()` ends it. If it dies,
 * every run it was holding sees its pipes end and exits `failed` (`killed by SIGKILL` style outcomes are
 * impossible to tell apart, so: code null, signal null), and the next spawn starts a new helper.
 */

export interface SpawnerOptions {
  /** The `oom_score_adj` each process is raised to. @default 0, left as inherited */
  oomScoreAdj?: number;
  /** The Node binary that runs the helper. @default process.execPath */
  execPath?: string;
}

export interface SpawnedProcess {
  /** Settles once the process runs; rejects with the reason it could not be started, in words. */
  started: Promise<{ pid: number; startTime: number | undefined }>;
  stdout: PassThrough;
  stderr: PassThrough;
  /** Settles when the leader exits (never rejects; an unstarted process settles with nulls). */
  exited: Promise<ExitInfo>;
  /** Closes what is left of its pipes (a process outside its group may hold them open). */
  drop(): void;
}

interface Pending {
  out: PassThrough;
  err: PassThrough;
  resolveStarted: (value: { pid: number; startTime: number | undefined }) => void;
  rejectStarted: (error: Error) => void;
  resolveExited: (exit: ExitInfo) => void;
  cell: RunCell | undefined;
  exited: boolean;
}

type FromSpawner =
  | { t: 'started'; id: number; pid: number; startTime?: number }
  | { t: 'failed'; id: number; error: string }
  | { t: 'out'; id: number; fd: 1 | 2; data: Uint8Array }
  | { t: 'eof'; id: number; fd: 1 | 2 }
  | { t: 'exit'; id: number; code: number | null; signal: NodeJS.Signals | null }
  | { t: 'stuck' };

/** Distinct environments the helper remembers at most; beyond, the least recently sent is forgotten. */
const MAX_ENVS = 64;

export class Spawner {
  private helper: ChildProcess | undefined;
  private readonly runs = new Map<number, Pending>();
  private readonly envKeys = new Map<object, string>();
  private nextId = 1;
  private nextEnv = 1;
  private closed = false;
  /**
   * A helper could not leave a run's cell after forking inside it (and ended itself): from then on runs
   * are started through the cell's shell wrapper instead.
   */
  private joinBroken = false;

  constructor(private readonly options: SpawnerOptions = {}) {}

  /** The helper's pid while it runs (tests look at it). */
  get pid(): number | undefined {
    return this.helper?.pid;
  }

  /**
   * Starts `argv` (wrapped by `cell`, which adopts the leader) in `cwd` with `env`. Pass the same `env`
   * object for the same environment: it is sent to the helper once and named after that.
   */
  spawn(argv: readonly string[], options: { cwd: string; env: object; cell?: RunCell }): SpawnedProcess {
    const out = new PassThrough();
    const err = new PassThrough();
    let resolveStarted!: Pending['resolveStarted'];
    let rejectStarted!: Pending['rejectStarted'];
    let resolveExited!: Pending['resolveExited'];
    const started = new Promise<{ pid: number; startTime: number | undefined }>((resolve, reject) => {
      resolveStarted = resolve;
      rejectStarted = reject;
    });
    // A caller that only awaits `exited` must not see an unhandled rejection.
    started.catch(() => undefined);
    const exited = new Promise<ExitInfo>((resolve) => {
      resolveExited = resolve;
    });
    const id = this.nextId++;
    const pending: Pending = {
      out,
      err,
      resolveStarted,
      rejectStarted,
      resolveExited,
      cell: options.cell,
      exited: false,
    };
    const fail = (reason: string): SpawnedProcess => {
      rejectStarted(new Error(reason));
      resolveExited({ code: null, signal: null });
      out.end();
      err.end();
      return { started, stdout: out, stderr: err, exited, drop: () => {} };
    };
    const [command] = argv;
    if (command === undefined || command === '') return fail('cannot start a process: the command is empty');
    if (this.closed) return fail('the spawner is closed; the gateway is shutting down');
    // Forked inside the cell by the helper itself where the cell allows it (no shell between); its
    // wrapper is then only the fallback for a cell the helper fails to join.
    const into = this.joinBroken ? undefined : options.cell?.forkInto?.();
    const wrapped = options.cell && into === undefined ? options.cell.wrap(argv) : [...argv];
    const [file, ...args] = wrapped as [string, ...string[]];
    const helper = this.ensureHelper();
    this.runs.set(id, pending);
    helper.send({
      t: 'spawn',
      id,
      file,
      args,
      check: file === command ? undefined : command,
      cwd: options.cwd,
      envKey: this.envKey(helper, options.env),
      oomScoreAdj: this.options.oomScoreAdj ?? 0,
      ...(into && options.cell ? { join: into.join, home: into.home, wrapper: options.cell.wrap([]) } : {}),
    });
    return {
      started,
      stdout: out,
      stderr: err,
      exited,
      drop: () => {
        if (this.runs.has(id) && this.helper?.connected) this.helper.send({ t: 'drop', id });
      },
    };
  }

  /** Ends the helper and waits for it to exit; runs still held see their pipes end. */
  async close(): Promise<void> {
    this.closed = true;
    const helper = this.helper;
    if (helper === undefined) return;
    const gone =
      helper.exitCode !== null || helper.signalCode !== null
        ? Promise.resolve()
        : new Promise<void>((resolve) => helper.once('exit', () => resolve()));
    // Closing the channel ends it (its `disconnect` handler exits); a kill backs that up.
    if (helper.connected) helper.disconnect();
    const timer = setTimeout(() => helper.kill('SIGKILL'), 2000);
    await gone;
    clearTimeout(timer);
  }

  private envKey(helper: ChildProcess, env: object): string {
    const known = this.envKeys.get(env);
    if (known !== undefined) {
      // Most recently used last: the oldest is the one forgotten.
      this.envKeys.delete(env);
      this.envKeys.set(env, known);
      return known;
    }
    const key = `e${this.nextEnv++}`;
    helper.send({ t: 'env', key, env });
    this.envKeys.set(env, key);
    if (this.envKeys.size > MAX_ENVS) {
      const [oldest, oldKey] = this.envKeys.entries().next().value as [object, string];
      this.envKeys.delete(oldest);
      helper.send({ t: 'forget', key: oldKey });
    }
    return key;
  }

  private ensureHelper(): ChildProcess {
    if (this.helper?.connected) return this.helper;
    const helper = spawn(this.options.execPath ?? process.execPath, ['-e', SPAWNER_SCRIPT], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      serialization: 'advanced',
      // Its own group: a terminal's Ctrl-C reaches the daemon, which then closes it in order.
      detached: true,
      env: { PATH: process.env.PATH ?? '' },
    });
    this.envKeys.clear();
    this.helper = helper;
    helper.on('message', (message: FromSpawner) => this.onMessage(message));
    helper.on('error', () => {});
    // Whatever it held is lost: their pipes end and they exit failed; their cells are still the daemon's.
    helper.once('exit', () => {
      if (this.helper === helper) this.helper = undefined;
      for (const [id, run] of this.runs) {
        this.runs.delete(id);
        run.rejectStarted(new Error('the spawner process exited'));
        run.out.end();
        run.err.end();
        if (!run.exited) run.resolveExited({ code: null, signal: null });
      }
    });
    return helper;
  }

  private onMessage(message: FromSpawner): void {
    if (message.t === 'stuck') {
      this.joinBroken = true;
      return;
    }
    const run = this.runs.get(message.id);
    if (run === undefined) return;
    switch (message.t) {
      case 'started':
        run.cell?.adopt(message.pid, message.startTime);
        run.resolveStarted({ pid: message.pid, startTime: message.startTime });
        return;
      case 'failed':
        this.runs.delete(message.id);
        run.rejectStarted(new Error(message.error));
        run.out.end();
        run.err.end();
        run.resolveExited({ code: null, signal: null });
        return;
      case 'out':
        (message.fd === 1 ? run.out : run.err).write(Buffer.from(message.data));
        return;
      case 'eof':
        (message.fd === 1 ? run.out : run.err).end();
        if (run.exited && run.out.writableEnded && run.err.writableEnded) this.runs.delete(message.id);
        return;
      case 'exit':
        run.exited = true;
        run.resolveExited({ code: message.code, signal: message.signal });
        if (run.out.writableEnded && run.err.writableEnded) this.runs.delete(message.id);
        return;
      default:
        message satisfies never;
    }
  }
}
