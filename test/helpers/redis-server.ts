import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Debian's `redis-server`; `scripts/ensure-system-packages.sh` installs it on CI. */
export const REDIS_SERVER_BIN = process.env.CREW_REDIS_SERVER ?? '/usr/bin/redis-server';

/**
 * Why the Redis tests cannot run here, or undefined when they can. On CI (`CI=true`) they always run:
 * a missing binary there fails the test rather than skipping it.
 */
export function redisSkipReason(): string | undefined {
  if (process.env.CI === 'true') return undefined;
  if (existsSync(REDIS_SERVER_BIN)) return undefined;
  return `${REDIS_SERVER_BIN} is missing: run scripts/ensure-system-packages.sh (apt-get install redis-server) to run the cluster tests`;
}

export interface RedisServer {
  port: number;
  url: string;
  /** Stops the server (SIGTERM, or SIGKILL) and waits for its exit; its port stays reserved for `start`. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same port (empty: no persistence). */
  start(): Promise<void>;
  /** Stops it and removes its directory. */
  close(): Promise<void>;
  isRunning(): boolean;
}

/**
 * A private `redis-server` on a free loopback port, without persistence (`--save '' --appendonly no`), in
 * a temporary directory; resolves once it answers PING.
 */
export async function startRedisServer(): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'crew-redis-'));
  const port = await freePort();
  let proc: ChildProcess | undefined;
  let err = '';
  const start = async () => {
    err = '';
    const child = spawn(
      REDIS_SERVER_BIN,
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout?.resume();
    child.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
    });
    proc = child;
    const deadline = Date.now() + 10_000;
    while (!(await pings(port))) {
      if (child.exitCode !== null || Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`redis-server did not answer PING on port ${port}: ${err}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    const child = proc;
    proc = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill(signal);
    });
  };
  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    stop,
    start,
    isRunning: () => proc !== undefined && proc.exitCode === null,
    async close() {
      await stop('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Whether a Redis on `port` answers `PING` with `+PONG`. */
function pings(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    let answer = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.on('data', (d: Buffer) => {
      answer += d.toString();
      if (answer.includes('\r\n')) done(answer.startsWith('+PONG'));
    });
    socket.connect(port, '127.0.0.1', () => socket.write('PING\r\n'));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
