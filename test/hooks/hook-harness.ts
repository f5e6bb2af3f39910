import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { hookCli } from '../../src/hooks/claude-hook-cli.js';
import { bundledCommand } from '../helpers/test-bundle.js';

/** Shared by the hook tests: fixtures, a throwaway CREW_HOME, and the hook run in- or out-of-process. */

export const REPO_ROOT = join(import.meta.dirname, '../..');
const FIXTURES = join(REPO_ROOT, 'test/fixtures/claude');

export type Payload = Record<string, unknown>;

/** A fixture from `test/fixtures/claude/<name>.json` with top-level fields replaced. */
export function fixture(name: string, overrides: Payload = {}): Payload {
  const payload = JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), 'utf8')) as Payload;
  return { ...payload, ...overrides };
}

export function fixtureText(name: string): string {
  return readFileSync(join(FIXTURES, `${name}.json`), 'utf8');
}

export interface TempDir {
  dir: string;
  cleanup(): void;
}

export function tempDir(prefix = 'crew-hook-'): TempDir {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function writeConfig(crewHome: string, config: Payload): void {
  writeFileSync(join(crewHome, 'config.json'), JSON.stringify(config));
}

export interface HookRun {
  code: number;
  stdout: string;
  stderr: string;
}

function collect(stream: PassThrough): () => string {
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  return () => Buffer.concat(chunks).toString('utf8');
}

/** Runs `hookCli` in this process with `stdin` (a payload object or raw text) and a fixed time. */
export async function runHookInProcess(
  args: string[],
  stdin: Payload | string,
  options: { env: NodeJS.ProcessEnv; cwd?: string; nowMs?: number },
): Promise<HookRun> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out = collect(stdout);
  const err = collect(stderr);
  const text = typeof stdin === 'string' ? stdin : JSON.stringify(stdin);
  const nowMs = options.nowMs;
  const code = await hookCli(
    args,
    {
      stdin: Readable.from(text.length > 0 ? [Buffer.from(text)] : []),
      stdout,
      stderr,
      env: options.env,
      cwd: options.cwd ?? REPO_ROOT,
    },
    nowMs === undefined ? {} : { clock: { now: () => nowMs } },
  );
  return { code, stdout: out(), stderr: err() };
}

/** `crew hook claude` for one event, in process, as Claude Code would send it. */
export function hookEvent(crewHome: string, payload: Payload | string, nowMs?: number): Promise<HookRun> {
  return runHookInProcess(['claude'], payload, {
    env: { CREW_HOME: crewHome },
    ...(nowMs !== undefined && { nowMs }),
  });
}

/** The argv that starts `claude-hook-bin claude` from the test bundle, as Claude Code would. */
export function hookCommand(): string[] {
  return bundledCommand('hooks/claude-hook-bin', 'claude');
}

/** Starts the hook as a real process; stdin stays open until the returned `send`. */
export function startHookProcess(crewHome: string): {
  child: ChildProcess;
  send(payload: Payload | string): void;
  done: Promise<HookRun>;
} {
  const [node, ...args] = hookCommand() as [string, ...string[]];
  const child = spawn(node, args, {
    cwd: REPO_ROOT,
    env: { ...process.env, CREW_HOME: crewHome },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const done = new Promise<HookRun>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
  return {
    child,
    send(payload) {
      child.stdin?.end(typeof payload === 'string' ? payload : JSON.stringify(payload));
    },
    done,
  };
}

/** Runs the hook process once with `payload` on stdin. */
export function runHookProcess(crewHome: string, payload: Payload | string): Promise<HookRun> {
  const run = startHookProcess(crewHome);
  run.send(payload);
  return run.done;
}

/** The permission decision in a hook's stdout, or `undefined` when it printed none (allow). */
export function decisionOf(run: HookRun): { decision: string; reason: string } | undefined {
  if (run.stdout.trim() === '') return undefined;
  const output = JSON.parse(run.stdout) as {
    hookSpecificOutput: {
      hookEventName: string;
      permissionDecision: string;
      permissionDecisionReason: string;
    };
  };
  if (output.hookSpecificOutput.hookEventName !== 'PreToolUse') throw new Error('wrong hookEventName');
  return {
    decision: output.hookSpecificOutput.permissionDecision,
    reason: output.hookSpecificOutput.permissionDecisionReason,
  };
}
