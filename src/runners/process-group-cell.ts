import { readdirSync, readFileSync } from 'node:fs';
import { parseProcStat } from '../host/proc-stat.js';
import type { Containment, RunCell } from './run-cell.js';

/**
 * The containment when no cgroup can be made (see run-cell.ts): the leader's process group and session,
 * every descendant by parent pid (which finds a `setsid` child while its parent lives), and every process
 * an earlier look found (identity: pid and start time), so a child found while its parent lived is still
 * ended after it was handed to init.
 *
 * Rejected: `prctl(PR_SET_CHILD_SUBREAPER)`, which would keep orphans as Crew's children, is not
 * reachable from Node without a native addon.
 */
export class ProcessGroupContainment implements Containment {
  readonly kind = 'process_group' as const;
  constructor(readonly reason: string) {}

  open(_key: string): RunCell {
    return new ProcessGroupCell();
  }

  close(): void {}
}

/** Processes remembered beyond this are dropped oldest first: a fork bomb must not grow the gateway. */
const MAX_REMEMBERED = 4096;

class ProcessGroupCell implements RunCell {
  readonly kind = 'process_group' as const;
  private leader: number | undefined;
  private leaderStart: number | undefined;
  /** pid → start time of every process seen in the tree. */
  private readonly seen = new Map<number, number>();
  /**
   * Once the leader's exit was seen: the number of the last `/proc` read then. A read taken after it shows
   * the run as it was after its leader exited, which is all its end needs: such a read, taken for another
   * cell's end, is shared (see {@link procTable}); each later look of this cell needs a newer one.
   */
  private sharedAfter: number | undefined;

  wrap(argv: readonly string[]): string[] {
    return [...argv];
  }

  adopt(pid: number, startTime: number | undefined): void {
    this.leader = pid;
    this.leaderStart = startTime;
  }

  leaderExited(): Promise<void> {
    this.sharedAfter = procTable.reads;
    return procTable.soon();
  }

  members(): number[] {
    const leader = this.leader;
    if (leader === undefined) return [];
    const table = this.sharedAfter === undefined ? procTable.fresh() : procTable.after(this.sharedAfter);
    if (this.sharedAfter !== undefined) this.sharedAfter = procTable.reads;
    if (table === undefined) return isGroupSignalable(leader) ? [leader] : [];
    const seeds: number[] = [];
    const leaderEntry = table.get(leader);
    if (
      leaderEntry !== undefined &&
      (this.leaderStart === undefined || leaderEntry.startTime === this.leaderStart)
    )
      seeds.push(leader);
    for (const entry of table.values()) {
      // The group and the session the leader leads (ids stay allocated while a member lives, so a
      // match is this run's), a child that left only one of them still has the other.
      if (entry.pgrp === leader || entry.session === leader) seeds.push(entry.pid);
    }
    // What an earlier look found, if it is still the same process.
    for (const [pid, startTime] of [...this.seen]) {
      if (table.get(pid)?.startTime === startTime) seeds.push(pid);
      else this.seen.delete(pid);
    }
    const children = new Map<number, number[]>();
    for (const entry of table.values()) {
      const list = children.get(entry.ppid);
      if (list) list.push(entry.pid);
      else children.set(entry.ppid, [entry.pid]);
    }
    const live: number[] = [];
    const visited = new Set<number>();
    for (let i = 0; i < seeds.length; i++) {
      const pid = seeds[i] as number;
      if (visited.has(pid) || pid <= 1 || pid === process.pid) continue;
      visited.add(pid);
      const entry = table.get(pid);
      if (entry === undefined) continue;
      if (entry.state !== 'Z' && entry.state !== 'X') {
        live.push(pid);
        this.remember(pid, entry.startTime);
      }
      for (const child of children.get(pid) ?? []) seeds.push(child);
    }
    return live;
  }

  private remember(pid: number, startTime: number): void {
    if (this.seen.has(pid)) return;
    if (this.seen.size >= MAX_REMEMBERED) this.seen.delete(this.seen.keys().next().value as number);
    this.seen.set(pid, startTime);
  }

  signal(signal: NodeJS.Signals): void {
    if (this.leader === undefined) return;
    try {
      process.kill(-this.leader, signal);
    } catch {
      // The group is gone; its members that left it are signalled below.
    }
    for (const pid of this.members()) {
      try {
        process.kill(pid, signal);
      } catch {
        // Gone meanwhile.
      }
    }
  }

  pause(isPaused: boolean): void {
    this.signal(isPaused ? 'SIGSTOP' : 'SIGCONT');
  }

  release(): boolean {
    this.seen.clear();
    return true;
  }
}

function isGroupSignalable(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

interface Entry {
  pid: number;
  ppid: number;
  pgrp: number;
  session: number;
  state: string;
  startTime: number;
}

/**
 * Reads of the whole `/proc` (about 10 µs a process: 4.5 ms of the daemon's thread on a host of 400),
 * numbered, the last one kept. Each run end used to read all of `/proc` again for itself; now a leader's
 * exit asks for a read at the end of the event loop's turn (`soon`), which every exit heard in that turn
 * shares: while the daemon is busy reading, the next exits queue, and are all heard in one turn.
 */
export const procTable = {
  /** How many reads so far (tests count them). */
  reads: 0,
  last: undefined as Map<number, Entry> | undefined,
  /** A new read. */
  fresh(): Map<number, Entry> | undefined {
    this.reads += 1;
    this.last = readTable();
    return this.last;
  },
  /** The last read if it was taken after read number `after`, else a new one. */
  after(after: number): Map<number, Entry> | undefined {
    return this.reads > after ? this.last : this.fresh();
  },
  pending: undefined as Promise<void> | undefined,
  /**
   * A new read once the event loop has taken in what has come (I/O first, then `setImmediate`): every
   * leader exit heard before it shares it. One run end waits a turn; a burst waits one read.
   */
  soon(): Promise<void> {
    this.pending ??= new Promise((resolve) =>
      setImmediate(() => {
        this.pending = undefined;
        this.fresh();
        resolve();
      }),
    );
    return this.pending;
  },
};

/** Every process in `/proc`, read once; undefined where there is no `/proc` (macOS). */
function readTable(): Map<number, Entry> | undefined {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return undefined;
  }
  const table = new Map<number, Entry>();
  for (const name of names) {
    const code = name.charCodeAt(0);
    if (code < 48 || code > 57) continue;
    let text: string;
    try {
      text = readFileSync(`/proc/${name}/stat`, 'latin1');
    } catch {
      continue;
    }
    const stat = parseProcStat(text);
    if (stat === undefined) continue;
    table.set(stat.pid, {
      pid: stat.pid,
      ppid: stat.ppid,
      pgrp: stat.pgrp,
      session: stat.session,
      state: stat.state,
      startTime: stat.starttime,
    });
  }
  return table;
}
