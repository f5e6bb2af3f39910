import { execFile } from 'node:child_process';
import type { ProcEntry, ProcTable } from './process-tree.js';

/**
 * macOS has no `/proc`: the sampler runs one `ps` per tick for all runs. `ps` reports no session id, so
 * the process group stands in for it (runs start as session leaders, hence as group leaders too).
 */
export const PS_ARGS = ['-axo', 'pid=,ppid=,pgid=,rss=,time=,state=,lstart='] as const;

/** `[dd-][hh:]mm:ss[.cc]` → seconds. */
export function parseCpuTime(text: string): number | undefined {
  const match = /^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+(?:\.\d+)?)$/.exec(text);
  if (!match) return undefined;
  const [, days, hours, minutes, seconds] = match;
  return Number(days ?? 0) * 86_400 + Number(hours ?? 0) * 3600 + Number(minutes) * 60 + Number(seconds);
}

/** Parses `ps` output in the {@link PS_ARGS} format; malformed lines are skipped. */
export function parsePsTable(text: string): ProcTable {
  const table: ProcTable = new Map();
  for (const line of text.split('\n')) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 7) continue;
    const [pid, ppid, pgid, rssKib, time, state] = fields;
    const cpuSecs = parseCpuTime(time as string);
    const startMs = Date.parse(fields.slice(6).join(' '));
    const entry: ProcEntry = {
      pid: Number(pid),
      ppid: Number(ppid),
      session: Number(pgid),
      startTime: Math.floor(startMs / 1000),
      rssBytes: Number(rssKib) * 1024,
      cpuSecs: cpuSecs ?? Number.NaN,
      state: state as string,
    };
    const numbers = [entry.pid, entry.ppid, entry.session, entry.startTime, entry.rssBytes, entry.cpuSecs];
    if (numbers.every(Number.isFinite)) table.set(entry.pid, entry);
  }
  return table;
}

/** Runs `ps` once and parses it; an empty table when `ps` fails. */
export function readPsTable(command = 'ps'): Promise<ProcTable> {
  return new Promise((resolve) => {
    execFile(command, [...PS_ARGS], { maxBuffer: 32 * 1024 * 1024 }, (error, stdout) => {
      resolve(error ? new Map() : parsePsTable(stdout));
    });
  });
}
