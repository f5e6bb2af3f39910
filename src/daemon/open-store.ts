import type { Clock } from '../core/clock.js';
import { listTree } from '../host/process-tree.js';
import { createContainment } from '../runners/create-containment.js';
import { killIfSame } from '../runners/process-group.js';
import type { Containment } from '../runners/run-cell.js';
import { SqliteStore } from '../store/sqlite-store.js';
import type { DaemonBase } from './daemon-parts.js';

/**
 * The run store (`$CREW_HOME/crew.db`) and the containment runs start in; the process trees of runs a
 * previous gateway left executing are ended here, before anything new starts.
 */
export async function openStore(
  base: DaemonBase,
  hostRoot: string,
): Promise<{ store: SqliteStore; containment: Containment }> {
  const { crewHome, env, cleanups, clock } = base;
  const store = new SqliteStore(`${crewHome}/crew.db`);
  cleanups.add(() => store.close());
  // Before the lost runs' trees below: a cgroup left by a crashed gateway is ended and removed here.
  const containment = await createContainment({
    crewHome,
    mode: env.CREW_CONTAINMENT === 'process_group' ? 'process_group' : 'auto',
  });
  cleanups.add(() => containment.close());
  await endLostTrees(store, hostRoot, clock);
  return { store, containment };
}

/** Runs that were executing when a previous gateway died: their trees may still run; end them. */
async function endLostTrees(store: SqliteStore, hostRoot: string, clock: Clock): Promise<void> {
  for (const record of store.restartState().executing) {
    if (record.pid === undefined || record.startTime === undefined) continue;
    const survivors = listTree(hostRoot, record.pid, record.startTime);
    await killIfSame(record.pid, record.startTime, { graceMs: 1000, clock });
    for (const pid of survivors) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}
