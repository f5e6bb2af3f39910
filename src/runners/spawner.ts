import { PassThrough } from 'node:stream';
import type { ExitInfo } from './process-group.js';
import type { RunCell } from './run-cell.js';
import type { FromSpawner, SpawnerLink } from './spawner-link.js';
import {
  buildNativeSpawner,
  NativeSpawnerLink,
  nativeBuildFailure,
  nativeBuilding,
  nativeSpawnerPath,
  usableNativeSpawner,
} from './spawner-native.js';
import { NodeSpawnerLink } from './spawner-node-link.js';

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
  /** The Node binary that runs the Node helper. @default process.execPath */
  execPath?: string;
  /**
   * Which helper starts runs: `native` (the C helper, spawner-native.ts; `prepare()` builds it), `node`
   * (spawner-script.ts), or `auto`: the native one once built, else Node's. @default 'auto'
   */
  helper?: 'auto' | 'native' | 'node';
  /** Where the native helper is built and cached. @default `$XDG_CACHE_HOME/crew` or `~/.cache/crew` */
  cacheDir?: string;
}

/** Which helper starts command runs, in words (`resource_status.spawner`). */
export interface SpawnerStatus {
  helper: 'native' | 'node';
  reason: string;
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

/** Distinct environments the helper remembers at most; beyond, the least recently sent is forgotten. */
const MAX_ENVS = 64;

export class Spawner {
  private helper: SpawnerLink | undefined;
  /** Where the native helper is (or will be) built. */
  private readonly nativePath: string;
  /** The last build `prepare()` asked for. */
  private building: Promise<boolean> | undefined;
  /** The exit of a Node helper that gave way to the native one. */
  private retiring: Promise<void> | undefined;
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

  constructor(private readonly options: SpawnerOptions = {}) {
    this.nativePath = nativeSpawnerPath(options.cacheDir);
  }

  /** The helper's pid while it runs (tests look at it). */
  get pid(): number | undefined {
    return this.helper?.pid;
  }

  /** Which helper runs now, if one does. */
  get helperKind(): 'native' | 'node' | undefined {
    return this.helper?.kind;
  }

  /** Which helper starts the next run, and why (`resource_status.spawner`). */
  status(): SpawnerStatus {
    if (this.options.helper === 'node') return { helper: 'node', reason: 'host.spawner is node' };
    if (this.nativeReady())
      return { helper: 'native', reason: `the C helper built with the host's compiler: ${this.nativePath}` };
    if (nativeBuilding(this.nativePath)) return { helper: 'node', reason: 'the C helper is being built' };
    const failure = nativeBuildFailure(this.nativePath);
    return { helper: 'node', reason: failure ?? 'the C helper has not been built yet' };
  }

  /**
   * Builds the native helper if it is not built yet (the daemon calls this at start, without waiting);
   * resolves whether it can be used. Runs asked for before it is built start from the Node helper.
   */
  prepare(): Promise<boolean> {
    if (this.options.helper === 'node') return Promise.resolve(false);
    const building = buildNativeSpawner(this.nativePath);
    this.building = building;
    return building;
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
    const nul = nulIn(argv, options.cwd, options.env);
    if (nul !== undefined) return fail(`cannot start "${command}": ${nul} contains a NUL byte`);
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
    await this.helper?.close();
    // A build still running, and a helper that gave way, are waited for: no process outlives the daemon.
    await this.building;
    await this.retiring;
  }

  private envKey(helper: SpawnerLink, env: object): string {
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

  /**
   * The running helper, else a new one: the native helper where it is built (and asked for, or `auto`),
   * else the Node one. A Node helper holding no run gives way once the native one is built.
   */
  private ensureHelper(): SpawnerLink {
    const current = this.helper;
    if (current?.connected) {
      if (current.kind === 'native' || this.runs.size > 0 || !this.nativeReady()) return current;
      this.retiring = current.close();
    }
    const events = {
      onMessage: (message: FromSpawner) => this.onMessage(message),
      // Whatever it held is lost: their pipes end and they exit failed; their cells are still the daemon's.
      onExit: () => {
        if (this.helper === helper) this.helper = undefined;
        else return;
        for (const [id, run] of this.runs) {
          this.runs.delete(id);
          run.rejectStarted(new Error('the spawner process exited'));
          run.out.end();
          run.err.end();
          if (!run.exited) run.resolveExited({ code: null, signal: null });
        }
      },
    };
    const helper: SpawnerLink = this.nativeReady()
      ? new NativeSpawnerLink(this.nativePath, events)
      : new NodeSpawnerLink(this.options.execPath ?? process.execPath, events);
    this.envKeys.clear();
    this.helper = helper;
    return helper;
  }

  /** Whether runs start from the native helper now. */
  private nativeReady(): boolean {
    return this.options.helper !== 'node' && usableNativeSpawner(this.nativePath);
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

/** What of a spawn would carry a NUL byte (no process can be given one), in words; undefined when none. */
function nulIn(argv: readonly string[], cwd: string, env: object): string | undefined {
  if (argv.some((arg) => arg.includes('\0'))) return 'an argument';
  if (cwd.includes('\0')) return 'the working directory';
  let bad = envsChecked.get(env);
  if (bad === undefined) {
    bad = Object.entries(env).some(
      ([key, value]) => key.includes('\0') || (typeof value === 'string' && value.includes('\0')),
    );
    envsChecked.set(env, bad);
  }
  return bad ? 'the environment' : undefined;
}

/** Environments already looked at (each agent config's is one object, sent once): whether one has a NUL. */
const envsChecked = new WeakMap<object, boolean>();
