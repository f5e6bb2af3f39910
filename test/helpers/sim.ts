import { readFileSync } from 'node:fs';
import type { AgentDef } from '../../src/core/agent-def.js';
import { bundledCommand } from './test-bundle.js';

/**
 * Running `crew-sim-agent` from the test bundle in tests, and looking at the processes it leaves behind.
 */

/** The argv that runs the bundled simulator (absolute paths, so any cwd works), plus `args`. */
export function simCommand(...args: string[]): string[] {
  return bundledCommand('sim/main', ...args);
}

/** A named agent that runs the simulator (over ACP) with `args` on its command line. */
export function simAgent(options: { shared?: boolean; args?: string[]; name?: string } = {}): AgentDef {
  return {
    name: options.name ?? 'sim',
    runner: 'acp',
    command: simCommand(...(options.args ?? [])),
    shared: options.shared ?? false,
    skills: [],
  };
}

/** `/proc/<pid>/stat` fields from field 3 (state) on; undefined when the process is gone or off Linux. */
function statFields(pid: number): string[] | undefined {
  try {
    const line = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return line.slice(line.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/**
 * Whether `pid` is a live process. A zombie is not: an orphaned grandchild can stay one for a while
 * where init reaps lazily, yet it holds no resources and cannot run.
 */
export function isAlive(pid: number): boolean {
  const fields = statFields(pid);
  if (fields) return fields[0] !== 'Z' && fields[0] !== 'X';
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The state letter of `pid` (`T`: stopped, as the memory pause leaves it); undefined when it is gone. */
export function procState(pid: number): string | undefined {
  return statFields(pid)?.[0];
}

/** Resident set size of `pid` in bytes (Linux). */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for ${pid}`);
  return Number(kb) * 1024;
}

/** Polls `check` until it returns true; throws after `timeoutMs`. For states no event announces. */
export async function waitUntil(check: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Pids in `text` written by `#sim child=sleep` (`child: pid=N`). */
export function grandchildPids(text: string): number[] {
  return [...text.matchAll(/child: pid=(\d+)/g)].map((m) => Number(m[1]));
}

/** The object a `#sim info` line in `text` reports. */
export function infoOf(text: string): Record<string, unknown> {
  const line = /^info: (.*)$/m.exec(text)?.[1];
  if (line === undefined) throw new Error(`no info line in ${JSON.stringify(text.slice(0, 200))}`);
  return JSON.parse(line) as Record<string, unknown>;
}
