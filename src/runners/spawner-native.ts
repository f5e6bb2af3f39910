import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readdirSync, renameSync, rmSync, type Stats, statSync } from 'node:fs';
import { constants, endianness, homedir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  endChild,
  type FromSpawner,
  type LinkEvents,
  type SpawnerLink,
  settledAt,
  type ToSpawner,
} from './spawner-link.js';
import { NATIVE_SPAWNER_C } from './spawner-native-source.js';

/**
 * The native helper (issue 32 §4): the C program in spawner-native-source.ts, built once per machine with
 * the host's C compiler (`$CC`, else `cc`) into a per-user cache named by the source's hash, and spoken to
 * in length-prefixed frames over its stdin and stdout. Building is asynchronous (`buildNativeSpawner`) and
 * never required: until a build exists, or where none can be made (no compiler, a big-endian host, a cache
 * that cannot be written), runs start from the Node helper.
 */

const HASH = createHash('sha256').update(NATIVE_SPAWNER_C).digest('hex').slice(0, 16);

/** Where the built helper lives: `$XDG_CACHE_HOME/crew` or `~/.cache/crew`, private to this user. */
export function nativeSpawnerPath(cacheDir = defaultCacheDir()): string {
  return join(cacheDir, `crew-spawner-${HASH}`);
}

function defaultCacheDir(): string {
  const xdg = process.env.XDG_CACHE_HOME;
  return join(xdg?.startsWith('/') ? xdg : join(homedir(), '.cache'), 'crew');
}

/**
 * The built helper at `path` if it can be used: a regular file of this user's that no one else may write
 * (a binary another user could replace would run as this one), in a directory no one else may write.
 */
export function usableNativeSpawner(path: string): boolean {
  if (endianness() !== 'LE') return false;
  try {
    const uid = process.getuid?.();
    const mine = (info: Stats) => (uid === undefined || info.uid === uid) && (info.mode & 0o022) === 0;
    const file = statSync(path);
    // Its directory too: whoever may write there may put another file in its place.
    return file.isFile() && mine(file) && mine(statSync(dirname(path)));
  } catch {
    return false;
  }
}

const builds = new Map<string, Promise<boolean>>();
/** Why the last build at a path made nothing, in words (`Spawner.status`). */
const failures = new Map<string, string>();

/** Why no native helper could be built at `path`, if a build was tried and failed. */
export function nativeBuildFailure(path: string): string | undefined {
  return failures.get(path);
}

/** Whether a build of `path` runs now. */
export function nativeBuilding(path: string): boolean {
  return builds.has(path);
}

/**
 * Builds the helper at `path` unless a usable one is there; resolves whether one is there now. Compiled
 * to a private temporary name and renamed, so concurrent builds (two daemons) never run a half-written
 * file. One build per path per process.
 */
export function buildNativeSpawner(path: string): Promise<boolean> {
  if (usableNativeSpawner(path)) return Promise.resolve(true);
  const running = builds.get(path);
  if (running) return running;
  const build = compile(path).finally(() => builds.delete(path));
  builds.set(path, build);
  return build;
}

async function compile(path: string): Promise<boolean> {
  const failed = (reason: string): false => {
    failures.set(path, reason);
    return false;
  };
  if (endianness() !== 'LE') return failed('a big-endian host (the helper speaks little-endian frames)');
  const dir = dirname(path);
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    return failed(`its cache directory ${dir} cannot be made: ${(error as Error).message}`);
  }
  const compiler = process.env.CC !== undefined && process.env.CC !== '' ? process.env.CC : 'cc';
  const outcome = await new Promise<string | undefined>((resolve) => {
    const cc = spawn(compiler, ['-O2', '-std=gnu11', '-o', temporary, '-x', 'c', '-'], {
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    // A compiler that hangs is not waited for past a minute.
    const timer = setTimeout(() => cc.kill('SIGKILL'), 60_000);
    cc.once('error', () => resolve(`no C compiler (${compiler} could not be started)`));
    cc.once('exit', (code, signal) =>
      resolve(code === 0 ? undefined : `${compiler} failed (${code === null ? signal : `exit ${code}`})`),
    );
    cc.once('close', () => clearTimeout(timer));
    cc.stdin.on('error', () => {});
    cc.stdin.end(NATIVE_SPAWNER_C);
  });
  try {
    if (outcome !== undefined) return failed(outcome);
    chmodSync(temporary, 0o755);
    renameSync(temporary, path);
    pruneOldBuilds(dir);
    if (!usableNativeSpawner(path)) return failed(`${path} is not this user's alone`);
    failures.delete(path);
    return true;
  } catch (error) {
    return failed(`it could not be put in place: ${(error as Error).message}`);
  } finally {
    rmSync(temporary, { force: true });
  }
}

/** Builds of other sources (other Crew versions) kept beside the newest; older ones are removed. */
export const KEPT_BUILDS = 4;

/**
 * Each Crew version builds its own helper: without a bound the cache would grow by one file per upgrade.
 * The newest {@link KEPT_BUILDS} stay (versions installed side by side each keep theirs); removing one
 * that a running daemon uses is harmless (its file lives on until that helper exits).
 */
function pruneOldBuilds(dir: string): void {
  try {
    const builds = readdirSync(dir)
      .filter((name) => /^crew-spawner-[0-9a-f]{16}$/.test(name))
      .map((name) => ({ path: join(dir, name), at: statSync(join(dir, name)).mtimeMs }))
      .sort((a, b) => b.at - a.at);
    for (const old of builds.slice(KEPT_BUILDS)) rmSync(old.path, { force: true });
  } catch {
    // A cache it cannot list or prune only keeps more files.
  }
}

const SIGNAL_NAMES = new Map<number, NodeJS.Signals>(
  Object.entries(constants.signals).map(([name, number]) => [number, name as NodeJS.Signals]),
);

/** Frame types, as the C source numbers them. */
const IN = { env: 1, forget: 2, spawn: 3, drop: 4 } as const;
const OUT = { started: 1, failed: 2, out: 3, eof: 4, exit: 5, unjoined: 6 } as const;

/** The native helper at `path`, spoken to in frames. */
export class NativeSpawnerLink implements SpawnerLink {
  readonly kind = 'native' as const;
  private readonly helper: ChildProcess;
  private readonly gone: Promise<void>;
  /** Bytes of a frame not yet whole. */
  private pending: Buffer = Buffer.alloc(0);
  /** Spawns asked to join a cgroup, until answered: an unjoined one is sent again through its wrapper. */
  private readonly joining = new Map<number, Extract<ToSpawner, { t: 'spawn' }>>();

  constructor(
    path: string,
    private readonly events: LinkEvents,
  ) {
    const helper = spawn(path, [], {
      stdio: ['pipe', 'pipe', 'inherit'],
      // Its own group: a terminal's Ctrl-C reaches the daemon, which then closes it in order.
      detached: true,
      env: {},
    });
    this.helper = helper;
    helper.stdin?.on('error', () => {});
    helper.stdout?.on('data', (chunk: Buffer) => this.onData(chunk));
    helper.on('error', () => {});
    // `close`, not `exit`: frames it wrote before exiting are read first.
    helper.once('close', () => events.onExit());
    // Its `close`: exited and its stdout ended, so every frame it wrote before exiting has been read.
    this.gone = settledAt(helper, 'close');
  }

  get pid(): number | undefined {
    return this.helper.pid;
  }

  get connected(): boolean {
    const { stdin, exitCode, signalCode } = this.helper;
    return stdin?.writable === true && exitCode === null && signalCode === null;
  }

  send(message: ToSpawner): void {
    switch (message.t) {
      case 'env': {
        const parts = [message.key];
        for (const [key, value] of Object.entries(message.env)) {
          if (value !== undefined) parts.push(`${key}=${String(value)}`);
        }
        this.write(IN.env, Buffer.alloc(0), parts);
        return;
      }
      case 'forget':
        this.write(IN.forget, Buffer.alloc(0), [message.key]);
        return;
      case 'drop': {
        const head = Buffer.alloc(4);
        head.writeUInt32LE(message.id, 0);
        this.write(IN.drop, head, []);
        return;
      }
      case 'spawn': {
        if (message.join !== undefined) this.joining.set(message.id, message);
        const head = Buffer.alloc(12);
        head.writeUInt32LE(message.id, 0);
        head.writeInt32LE(message.oomScoreAdj, 4);
        head.writeUInt32LE(message.args.length, 8);
        const strings = [message.file, message.check ?? '', message.cwd, message.envKey, message.join ?? ''];
        this.write(IN.spawn, head, [...strings, ...message.args]);
        return;
      }
      default:
        message satisfies never;
    }
  }

  close(): Promise<void> {
    // The end of its stdin ends it.
    return endChild(this.helper, this.gone, () => this.helper.stdin?.end());
  }

  /** One frame: length, type, `head`, then each string NUL-terminated. */
  private write(type: number, head: Buffer, strings: readonly string[]): void {
    let size = 5 + head.length;
    for (const text of strings) size += Buffer.byteLength(text) + 1;
    const frame = Buffer.alloc(size);
    frame.writeUInt32LE(size - 4, 0);
    frame[4] = type;
    head.copy(frame, 5);
    let at = 5 + head.length;
    for (const text of strings) {
      at += frame.write(text, at);
      frame[at++] = 0;
    }
    this.helper.stdin?.write(frame);
  }

  private onData(chunk: Buffer): void {
    let data = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    let at = 0;
    while (data.length - at >= 4) {
      const size = data.readUInt32LE(at);
      if (data.length - at - 4 < size) break;
      this.onFrame(data[at + 4] as number, data.subarray(at + 5, at + 4 + size));
      at += 4 + size;
    }
    data = data.subarray(at);
    // Copied when kept: a subarray would pin the whole chunk it came from.
    this.pending = data.length > 0 ? Buffer.from(data) : Buffer.alloc(0);
  }

  private onFrame(type: number, body: Buffer): void {
    const id = body.readUInt32LE(0);
    let message: FromSpawner;
    switch (type) {
      case OUT.started: {
        const start = Number(body.readBigInt64LE(8));
        this.joining.delete(id);
        message = { t: 'started', id, pid: body.readInt32LE(4), ...(start >= 0 ? { startTime: start } : {}) };
        break;
      }
      case OUT.failed:
        this.joining.delete(id);
        message = { t: 'failed', id, error: body.toString('utf8', 4) };
        break;
      case OUT.out:
        // Not copied here: the spawner copies it into the run's stream at once.
        message = { t: 'out', id, fd: body[4] === 2 ? 2 : 1, data: body.subarray(5) };
        break;
      case OUT.eof:
        message = { t: 'eof', id, fd: body[4] === 2 ? 2 : 1 };
        break;
      case OUT.exit: {
        const code = body.readInt32LE(4);
        const signal = body.readInt32LE(8);
        message = {
          t: 'exit',
          id,
          code: code >= 0 ? code : null,
          signal: signal > 0 ? (SIGNAL_NAMES.get(signal) ?? null) : null,
        };
        break;
      }
      case OUT.unjoined: {
        // The child could not join its cell (nothing ran): started again through the cell's shell wrapper.
        const asked = this.joining.get(id);
        this.joining.delete(id);
        if (asked?.wrapper === undefined) {
          message = { t: 'failed', id, error: body.toString('utf8', 4) };
          break;
        }
        const { join: _join, home: _home, wrapper, ...rest } = asked;
        this.send({
          ...rest,
          file: wrapper[0] as string,
          args: [...wrapper.slice(1), asked.file, ...asked.args],
          check: asked.file,
        });
        return;
      }
      default:
        return;
    }
    this.events.onMessage(message);
  }
}
