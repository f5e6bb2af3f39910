import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readGatewayFile } from '../../src/daemon/daemon-address.js';
import { bundledCommand } from './test-bundle.js';

export interface DaemonProcess {
  home: string;
  url: string;
  token: string;
  proc: ChildProcess;
  stderr: () => string;
  /** SIGTERM and wait for the exit; resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** Removes the home directory. */
  cleanup(): void;
}

/** The file and argv that run `crew <args>` from the test bundle as a real process. */
export function crewCommand(args: string[]): [string, string[]] {
  const [node, ...rest] = bundledCommand('cli/main', ...args) as [string, ...string[]];
  return [node, rest];
}

/**
 * Starts a real `crew serve` on a free port in a fresh (or given) CREW_HOME. `crew` is the argv that runs
 * the CLI (default: the test bundle's, {@link crewCommand}); `serve --port 0` is appended.
 */
export async function startDaemonProcess(
  options: {
    home?: string;
    config?: Record<string, unknown>;
    env?: NodeJS.ProcessEnv;
    crew?: [string, ...string[]];
  } = {},
): Promise<DaemonProcess> {
  const home = options.home ?? mkdtempSync(join(tmpdir(), 'crew-daemon-'));
  const config = {
    'agent.subagent_spawn_stagger_secs': 0,
    'agent.spawn_min_memory_gb': 0,
    ...options.config,
  };
  writeFileSync(join(home, 'config.json'), JSON.stringify(config));
  rmSync(join(home, 'gateway.json'), { force: true });
  const [node, args] = options.crew
    ? [options.crew[0], [...options.crew.slice(1), 'serve', '--port', '0']]
    : crewCommand(['serve', '--port', '0']);
  const proc = spawn(node, args, {
    env: { ...process.env, CREW_HOME: home, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  proc.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  proc.stdout?.resume();
  // Generous: a start takes about a second, but many seconds on a machine the integration tier loads.
  const deadline = Date.now() + 45_000;
  // The daemon writes gateway.json in place, so it can be seen empty or half written for a moment.
  const file = await pollFor(
    'crew serve to write gateway.json',
    () => {
      if (proc.exitCode === null && Date.now() <= deadline) return readGatewayFile(home);
      proc.kill('SIGKILL');
      throw new Error(`crew serve did not start: ${err}`);
    },
    50_000, // past the deadline above, whose error says why
  );
  const token = readFileSync(join(home, 'token'), 'utf8').trim();
  return {
    home,
    url: file.url,
    token,
    proc,
    stderr: () => err,
    stop(signal = 'SIGTERM') {
      return new Promise((resolve) => {
        if (proc.exitCode !== null) return resolve(proc.exitCode);
        proc.once('exit', (code) => resolve(code));
        proc.kill(signal);
      });
    },
    cleanup() {
      rmSync(home, { recursive: true, force: true });
    },
  };
}

export async function api(
  d: Pick<DaemonProcess, 'url' | 'token'>,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const response = await fetch(`${d.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${d.token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text);
  } catch {
    json = { raw: text };
  }
  return { status: response.status, body: json };
}

/** Polls `fn` until it yields a value (not `undefined`), or fails after `timeoutMs` naming `what`. */
export async function pollFor<T>(
  what: string,
  fn: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
