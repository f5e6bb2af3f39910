/**
 * Containment of one run's processes (issue 28, item 3). A process that leaves the run's process group
 * (`setsid`, a double fork, a Node child spawned `detached`) must still be found and ended when the run
 * ends. A {@link RunCell} holds every process one run (or one shared runtime) starts, in whatever group or
 * session, for as long as the host lets Crew know:
 *
 * - `cgroup_v2`: a cgroup per run under Crew's own; the leader joins it before it runs the agent, so all
 *   it ever starts is in it, and `cgroup.kill` ends them all. Complete.
 * - `process_group`: where no cgroup is writable (a normal user without delegation, macOS): the leader's
 *   group and session, plus every descendant by parent pid, plus every process the cell has seen before.
 *   A process that left the session AND lost its parent before the cell ever looked is out of reach.
 *
 * Left out: CPU or memory limits (a cell only holds and ends processes).
 */

export type ContainmentKind = 'cgroup_v2' | 'process_group';

/** Chooses the cells runs get; one per gateway. */
export interface Containment {
  readonly kind: ContainmentKind;
  /** Why this containment is in force, in words (`resource_status.containment.reason`). */
  readonly reason: string;
  /** A fresh cell for one run or runtime; `key` names it (a run id). Never throws. */
  open(key: string): RunCell;
  /** Removes what the containment itself left on the host (Crew's cgroup directory) if it is empty. */
  close(): void;
}

export interface RunCell {
  readonly kind: ContainmentKind;
  /**
   * The argv that starts `argv` inside the cell as the same process (the leader keeps its pid), so that
   * nothing it starts, however soon, is outside.
   */
  wrap(argv: readonly string[]): string[];
  /**
   * Where a helper that forks the leader (the spawner, spawner.ts) can start it inside the cell without
   * `wrap`'s shell: it writes its own pid into `join`, forks, and writes it into `home` again, so the
   * child is born inside. Undefined: use `wrap`.
   */
  forkInto?(): { join: string; home: string } | undefined;
  /** The leader, once spawned (its pid is also its process group id). */
  adopt(pid: number, startTime: number | undefined): void;
  /**
   * The leader exited (its pid may be reused from now on): the cell no longer looks for it by pid. What it
   * returns is awaited before the run's end looks into the cell (the process-group fallback reads `/proc`
   * once for all the ends heard in one turn of the event loop).
   */
  leaderExited?(): void | Promise<void>;
  /** The live processes in the cell now (zombies are not live). */
  members(): number[];
  /** Sends `signal` to every process in the cell (SIGKILL: at once, to all, where the host can). */
  signal(signal: NodeJS.Signals): void;
  /**
   * Pauses (`true`) or resumes (`false`) every process in the cell: `cgroup.freeze` for a cgroup, else
   * SIGSTOP / SIGCONT to each process (the memory pause, `src/core/pause-policy.ts`). Never throws.
   */
  pause(isPaused: boolean): void;
  /** Removes what the cell left on the host (a cgroup directory) once it is empty; idempotent. Whether it is gone. */
  release(): boolean;
}
