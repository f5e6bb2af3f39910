import type { Clock } from '../core/clock.js';
import type { KillOutcome } from './process-group.js';
import type { RunCell } from './run-cell.js';

export interface StopCellOptions {
  /** Time between SIGTERM and SIGKILL. */
  graceMs: number;
  clock: Clock;
  /** How often to look whether the cell is empty. @default 20 */
  pollMs?: number;
  /** How long to wait for the cell to empty after SIGKILL before giving up. @default 5000 */
  afterKillMs?: number;
}

function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.setTimer(resolve, ms));
}

/**
 * Ends every process in a run's cell: SIGTERM to all, SIGKILL to all after `graceMs` if any remain, then
 * removes the cell. Polling yields to the event loop, which is what lets Node reap a dead leader.
 */
export async function stopCell(cell: RunCell, options: StopCellOptions): Promise<KillOutcome> {
  const { clock, graceMs } = options;
  const pollMs = options.pollMs ?? 20;
  const afterKillMs = options.afterKillMs ?? 5000;
  try {
    if (cell.members().length === 0) return 'already_gone';
    cell.signal('SIGTERM');
    // A paused run (the memory pause) acts on SIGTERM only once it runs again; a frozen cgroup not at all.
    cell.pause(false);
    const termAt = clock.now();
    while (clock.now() - termAt < graceMs) {
      await sleep(clock, Math.min(pollMs, graceMs - (clock.now() - termAt)));
      if (cell.members().length === 0) return 'terminated';
    }
    cell.signal('SIGKILL');
    cell.pause(false);
    const killAt = clock.now();
    for (;;) {
      await sleep(clock, pollMs);
      if (cell.members().length === 0) return 'killed';
      if (clock.now() - killAt >= afterKillMs) return 'stuck';
      // A process forked between the look and the kill (no cgroup.kill) gets it now.
      cell.signal('SIGKILL');
    }
  } finally {
    await release(cell, clock, pollMs, afterKillMs);
  }
}

/**
 * Removes the cell once the host lets it: a killed process whose parent had already exited stays a
 * zombie (and a cgroup stays populated) until init reaps it. Bounded; what is left is swept next start.
 */
async function release(cell: RunCell, clock: Clock, pollMs: number, waitMs: number): Promise<void> {
  const since = clock.now();
  while (!cell.release() && clock.now() - since < waitMs) await sleep(clock, pollMs);
}
