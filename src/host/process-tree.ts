import { closeSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import { type ProcUnits, readProcUnits } from './auxv.js';
import { hostPath, readHostText } from './host-fs.js';
import { type ProcStat, parseProcStat } from './proc-stat.js';

/**
 * Process trees from one snapshot of the process table. A run's tree is everything reachable by the
 * ppid walk from its root ∪ every process in the root's session (runs start detached, as session
 * leaders, so grandchildren reparented to init are still found). Identity is (pid, start time): a
 * root pid now held by another process has no tree.
 */

/** One process, in units the sampler can sum across platforms. */
export interface ProcEntry {
  pid: number;
  ppid: number;
  /** Linux: the session id; macOS: the process group id (what `ps` can report). */
  session: number;
  /** Linux: start time in clock ticks after boot (the raw `starttime`); macOS: epoch seconds. */
  startTime: number;
  rssBytes: number;
  /** Own CPU plus that of waited-for children, seconds. */
  cpuSecs: number;
  state: string;
}

export type ProcTable = Map<number, ProcEntry>;

/** `/proc/<pid>/stat` under the host root, parsed; `undefined` when the process is gone. */
export function readProcStat(hostRoot: string, pid: number): ProcStat | undefined {
  const text = readHostText(hostRoot, `proc/${pid}/stat`);
  return text === undefined ? undefined : parseProcStat(text);
}

/** A Linux stat line in the sampler's units: bytes and CPU seconds (the auxv page size and tick rate). */
export function procEntryOf(stat: ProcStat, units: ProcUnits): ProcEntry {
  return {
    pid: stat.pid,
    ppid: stat.ppid,
    session: stat.session,
    startTime: stat.starttime,
    rssBytes: stat.rssPages * units.pageSizeBytes,
    cpuSecs: (stat.utime + stat.stime + stat.cutime + stat.cstime) / units.clockTicksPerSec,
    state: stat.state,
  };
}

/** A stat line is well under 1 KiB; one buffer serves every read of a tick. */
const statBuffer = Buffer.alloc(4096);

/**
 * One stat file with open + read + close into the shared buffer: about 40% cheaper than `readFileSync`,
 * which must first `fstat` (a `/proc` file reports size 0) and then read until EOF.
 */
function readStatText(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const length = readSync(fd, statBuffer, 0, statBuffer.length, null);
    return length < statBuffer.length
      ? statBuffer.toString('latin1', 0, length)
      : readFileSync(path, 'latin1');
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/**
 * Every process under `<hostRoot>/proc`, read once (no subprocess). Processes that vanish mid-read are
 * skipped. This is the sampler's hot path: one `readFileSync` per process and no per-file path joining.
 */
export function readProcTable(hostRoot: string, units: ProcUnits): ProcTable {
  const table: ProcTable = new Map();
  const procDir = hostPath(hostRoot, 'proc');
  let names: string[];
  try {
    names = readdirSync(procDir);
  } catch {
    return table;
  }
  for (const name of names) {
    const code = name.charCodeAt(0);
    if (code < 48 || code > 57) continue;
    const text = readStatText(`${procDir}/${name}/stat`);
    if (text === undefined) continue;
    const stat = parseProcStat(text);
    if (stat) table.set(stat.pid, procEntryOf(stat, units));
  }
  return table;
}

/**
 * The pids of a tree, the root first. Empty when the root pid belongs to a process with another start
 * time (PID reuse). When the root has exited, the survivors of its session still form its tree (a session
 * id stays allocated while any member lives, so it cannot have been reused). The session joins only when
 * the root leads it: a root sharing the gateway's session must not drag the gateway in. Pid 0 and 1 never
 * root a tree.
 */
export function treeOf(table: ProcTable, rootPid: number, rootStartTime?: number): number[] {
  if (!Number.isInteger(rootPid) || rootPid <= 1) return [];
  const root = table.get(rootPid);
  if (root && rootStartTime !== undefined && root.startTime !== rootStartTime) return [];
  const seeds: number[] = root ? [rootPid] : [];
  if (!root || root.session === rootPid) {
    for (const entry of table.values()) {
      if (entry.pid === rootPid || entry.session !== rootPid) continue;
      if (rootStartTime !== undefined && entry.startTime < rootStartTime) continue;
      seeds.push(entry.pid);
    }
  }
  const children = new Map<number, number[]>();
  for (const entry of table.values()) {
    const list = children.get(entry.ppid);
    if (list) list.push(entry.pid);
    else children.set(entry.ppid, [entry.pid]);
  }
  const seen = new Set<number>();
  const order: number[] = [];
  const queue = [...seeds];
  for (let i = 0; i < queue.length; i++) {
    const pid = queue[i] as number;
    if (seen.has(pid)) continue;
    seen.add(pid);
    order.push(pid);
    for (const child of children.get(pid) ?? []) if (!seen.has(child)) queue.push(child);
  }
  return order;
}

/**
 * The pids of the tree rooted at `rootPid` (see {@link treeOf}) from a fresh read of the host's process
 * table. The runner uses it to kill what survives of a lost run.
 */
export function listTree(hostRoot: string, rootPid: number, rootStartTime?: number): number[] {
  return treeOf(readProcTable(hostRoot, readProcUnits(hostRoot)), rootPid, rootStartTime);
}
