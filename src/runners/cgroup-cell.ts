import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Containment, RunCell } from './run-cell.js';

/**
 * The cgroup v2 containment (see run-cell.ts): each run gets `<crew cgroup>/<key>`, a leaf under a
 * directory of Crew's own (`crew-<hash of CREW_HOME>`, beside the gateway in its own cgroup, so two
 * gateways on one host never touch each other's). The leader writes its own pid into the leaf's
 * `cgroup.procs` and then execs the agent (`/bin/sh -c 'echo $$ > "$0"; exec "$@"'`: the agent's argv
 * is passed as arguments, never parsed by the shell), so even a child it forks at once is inside. Ending
 * a run writes `cgroup.kill` (kernel 5.14+; before that each member is killed until none is left), and
 * the empty leaf is removed.
 */
export class CgroupV2Containment implements Containment {
  readonly kind = 'cgroup_v2' as const;
  constructor(
    /** Crew's directory of run cgroups (absolute, under the cgroup2 mount). */
    readonly dir: string,
    readonly reason: string,
  ) {}

  open(key: string): RunCell {
    return new CgroupCell(join(this.dir, safeName(key)), this.home);
  }

  /**
   * The `cgroup.procs` of the cgroup {@link dir} was made in: this process's, and so its children's (the
   * spawner's), where a spawner goes back to after forking a run inside its cell.
   */
  private get home(): string {
    return join(dirname(this.dir), 'cgroup.procs');
  }

  /**
   * Ends and removes every cell left in {@link dir} whose key is not in `live` (a previous gateway's
   * runs, after a crash), waiting up to `waitMs` for their processes to die; returns how many it removed.
   */
  async sweep(live: ReadonlySet<string> = new Set(), waitMs = 5000): Promise<number> {
    const left = listCells(this.dir)
      .filter((name) => !live.has(name))
      .map((name) => new CgroupCell(join(this.dir, name), this.home));
    for (const cell of left) cell.signal('SIGKILL');
    const deadline = Date.now() + waitMs;
    while (left.some((cell) => cell.members().length > 0) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    let removed = 0;
    for (const cell of left) if (cell.release()) removed += 1;
    return removed;
  }

  close(): void {
    try {
      rmdirSync(this.dir);
    } catch {
      // A cell still busy (a zombie its new parent has not reaped yet): the next start sweeps it.
    }
  }

  /** The names of the cells now under {@link dir}. */
  cells(): string[] {
    return listCells(this.dir);
  }
}

function listCells(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
  } catch {
    return [];
  }
}

/** A cgroup name from a run id: only `[A-Za-z0-9_.-]`, never `.`/`..`, bounded. */
function safeName(key: string): string {
  const name = `run-${key.replace(/[^A-Za-z0-9_.-]/g, '_')}`.slice(0, 200);
  return name;
}

/** Joins the cgroup whose `cgroup.procs` is `$0`, then becomes `"$@"` (same pid). */
const JOIN_SCRIPT = 'echo $$ 2>/dev/null >"$0"; exec "$@"';

class CgroupCell implements RunCell {
  readonly kind = 'cgroup_v2' as const;
  private made = false;
  /**
   * The leader until it is known to be inside (or gone). The leader joins by itself before it execs the
   * agent (JOIN_SCRIPT); a stop, signal or pause that comes before that first moves it in itself.
   */
  private leader: { pid: number; startTime: number | undefined } | undefined;

  constructor(
    private readonly path: string,
    /** Where a spawner that joined this cell to fork its leader goes back to (see {@link forkInto}). */
    private readonly home: string,
  ) {}

  private ensure(): boolean {
    if (this.made) return true;
    try {
      mkdirSync(this.path, { recursive: true });
      this.made = true;
    } catch {
      // Reported by the runner as an uncontained start only if adopt fails too.
    }
    return this.made;
  }

  wrap(argv: readonly string[]): string[] {
    if (!this.ensure()) return [...argv];
    return ['/bin/sh', '-c', JOIN_SCRIPT, join(this.path, 'cgroup.procs'), ...argv];
  }

  /**
   * A spawner joins the cell, forks, and goes back (issue 32 §4): the leader is born inside, with no
   * `/bin/sh` between (an exec and about a millisecond of CPU per run). The daemon never forks this way
   * (moving its own threads in and out would stall them); only the spawner, a small helper that does
   * nothing else while it forks, and whose runs' cells nobody signals before it reported the start.
   */
  forkInto(): { join: string; home: string } | undefined {
    if (!this.ensure()) return undefined;
    return { join: join(this.path, 'cgroup.procs'), home: this.home };
  }

  /**
   * Remembers the leader; writes nothing now. Moving a process between cgroups waits for the kernel's
   * cgroup lock (an RCU grace period: milliseconds, up to tens under load), and the leader pays that
   * itself in JOIN_SCRIPT before it runs the agent. Writing it here too blocked the daemon's thread that
   * long per run (issue 32 §4); the write is kept only for a stop that may come before the join.
   */
  adopt(pid: number, startTime?: number): void {
    if (!this.ensure()) return;
    this.leader = { pid, startTime };
  }

  /** The leader exited: a later stop must not look for it by pid (which may be another process's by then). */
  leaderExited(): void {
    this.leader = undefined;
  }

  /**
   * Before a look or a signal: a leader that may not have joined yet is moved in first, so it is seen and
   * ended (rewriting one already inside changes nothing). A pid whose start time is not the leader's is
   * another process now: it is left alone.
   */
  private pinLeader(): void {
    const leader = this.leader;
    if (leader === undefined) return;
    this.leader = undefined;
    if (leader.startTime !== undefined && startTimeOf(leader.pid) !== leader.startTime) return;
    try {
      writeFileSync(join(this.path, 'cgroup.procs'), `${leader.pid}\n`);
    } catch {
      // Already exited: nothing of it to hold.
    }
  }

  members(): number[] {
    this.pinLeader();
    let text: string;
    try {
      text = readFileSync(join(this.path, 'cgroup.procs'), 'utf8');
    } catch {
      return [];
    }
    const pids: number[] = [];
    for (const line of text.split('\n')) {
      const pid = Number(line);
      if (line !== '' && Number.isSafeInteger(pid) && pid > 0 && !isZombie(pid)) pids.push(pid);
    }
    return pids;
  }

  signal(signal: NodeJS.Signals): void {
    this.pinLeader();
    if (signal === 'SIGKILL') {
      try {
        writeFileSync(join(this.path, 'cgroup.kill'), '1');
        return;
      } catch {
        // No cgroup.kill (before 5.14) or no cell: kill one by one below.
      }
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
    this.pinLeader();
    try {
      writeFileSync(join(this.path, 'cgroup.freeze'), isPaused ? '1' : '0');
      return;
    } catch {
      // No freezer here (or the cell is gone): stop and continue each process instead.
    }
    this.signal(isPaused ? 'SIGSTOP' : 'SIGCONT');
  }

  /** Whether the cell is gone now. */
  release(): boolean {
    // A leaf with live processes cannot go (EBUSY); the runner releases only after the cell emptied,
    // and a sweep on the next start removes what a crash left.
    try {
      rmdirSync(this.path);
      return true;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'ENOENT';
    }
  }
}

/** The process's start time (clock ticks after boot, `/proc/<pid>/stat` field 22); undefined when it is gone. */
function startTimeOf(pid: number): number | undefined {
  try {
    const line = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const value = Number(line.slice(line.lastIndexOf(')') + 2).split(' ')[19]);
    return Number.isSafeInteger(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function isZombie(pid: number): boolean {
  try {
    const line = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const state = line.slice(line.lastIndexOf(')') + 2, line.lastIndexOf(')') + 3);
    return state === 'Z' || state === 'X';
  } catch {
    return true;
  }
}

/** Where cgroup v2 is mounted, from `/proc/self/mounts`; undefined when it is not. */
export function cgroupV2Mount(mountsText: string): string | undefined {
  for (const line of mountsText.split('\n')) {
    const [, mountPoint, type] = line.split(' ');
    if (type === 'cgroup2' && mountPoint !== undefined) return mountPoint.replace(/\\040/g, ' ');
  }
  return undefined;
}

/** This process's cgroup v2 path (`0::/path` in `/proc/self/cgroup`); undefined when it has none. */
export function ownCgroupV2Path(cgroupText: string): string | undefined {
  for (const line of cgroupText.split('\n')) {
    if (line.startsWith('0::')) return line.slice(3).trim() || '/';
  }
  return undefined;
}

/**
 * A cgroup v2 containment under this process's own cgroup, if the host lets Crew make a child cgroup AND
 * move a process into it (tried for real with a short `sh`); else the reason it cannot, in words.
 */
export function probeCgroupV2(dirName: string): CgroupV2Containment | { reason: string } {
  let mounts: string;
  let own: string;
  try {
    mounts = readFileSync('/proc/self/mounts', 'utf8');
    own = readFileSync('/proc/self/cgroup', 'utf8');
  } catch {
    return { reason: 'no /proc (not Linux): no cgroups' };
  }
  const mount = cgroupV2Mount(mounts);
  if (mount === undefined) return { reason: 'no cgroup v2 hierarchy is mounted' };
  const path = ownCgroupV2Path(own);
  if (path === undefined) return { reason: 'this process is in no cgroup v2' };
  const dir = join(mount, path, dirName);
  const probe = join(dir, `probe-${process.pid}`);
  try {
    mkdirSync(probe, { recursive: true });
  } catch (error) {
    return {
      reason: `cannot make a cgroup under ${join(mount, path)} (${(error as NodeJS.ErrnoException).code})`,
    };
  }
  try {
    const moved = spawnSync('/bin/sh', ['-c', 'echo $$ >"$0"', join(probe, 'cgroup.procs')], {
      stdio: 'ignore',
      timeout: 5000,
    });
    if (moved.status !== 0) return { reason: `cannot move a process into a cgroup under ${dir}` };
  } finally {
    try {
      rmdirSync(probe);
    } catch {
      // Its process exited; an EBUSY here would be swept on the next start.
    }
  }
  return new CgroupV2Containment(dir, `a cgroup v2 per run under ${dir}`);
}
