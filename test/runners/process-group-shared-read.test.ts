import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { isAlive } from '../../src/runners/process-group.js';
import { ProcessGroupContainment, procTable } from '../../src/runners/process-group-cell.js';
import type { RunCell } from '../../src/runners/run-cell.js';

/**
 * The process-group fallback reads all of `/proc` to find a run's processes (issue 32 §4: 4.5 ms of the
 * daemon's thread per run end). Run ends whose leaders' exits were all seen before one read share it; what
 * must still hold: each cell finds what its run left behind after its leader exited, and no cell's later
 * look reuses a read it already used.
 */

const containment = new ProcessGroupContainment('test: shared /proc reads');
const cells: RunCell[] = [];
afterEach(() => {
  for (const cell of cells.splice(0)) cell.signal('SIGKILL');
});

/** A leader that starts a background `sleep` in its group, prints its pid and exits; its cell, adopted. */
async function leaderLeavingAChild(): Promise<{ cell: RunCell; child: number }> {
  // The sleep's output goes nowhere, so the leader's pipe ends with the leader.
  const proc = spawn('sh', ['-c', 'sleep 30 >/dev/null & echo $!'], {
    detached: true,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const cell = containment.open('run');
  cells.push(cell);
  cell.adopt(proc.pid as number, undefined);
  let out = '';
  proc.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  await new Promise((resolve) => proc.once('close', resolve));
  return { cell, child: Number(out.trim()) };
}

describe('process-group cells share a /proc read between run ends', () => {
  it('ends heard in one turn share one read, taken after them; each still finds what its run left', async () => {
    const a = await leaderLeavingAChild();
    const b = await leaderLeavingAChild();
    expect(isAlive(a.child) && isAlive(b.child)).toBe(true);
    // Both exits heard in one turn (as the helper's exit messages arrive together), then both ends look.
    const before = procTable.reads;
    await Promise.all([a.cell.leaderExited?.(), b.cell.leaderExited?.()]);
    expect(procTable.reads - before).toBe(1);
    expect(a.cell.members()).toEqual([a.child]);
    expect(b.cell.members()).toEqual([b.child]);
    expect(procTable.reads - before).toBe(1);
    // A second look of a cell needs a read newer than the one it used.
    a.cell.signal('SIGKILL');
    expect(procTable.reads - before).toBe(2);
    await expect.poll(() => a.cell.members()).toEqual([]);
    expect(b.cell.members()).toEqual([b.child]);
  });

  it('an exit heard after the last read gets a newer one, which finds the child forked just before the exit', async () => {
    const a = await leaderLeavingAChild();
    await a.cell.leaderExited?.();
    expect(a.cell.members()).toEqual([a.child]);
    const b = await leaderLeavingAChild();
    const before = procTable.reads;
    // Looked at without waiting for the turn's read: it reads for itself.
    void b.cell.leaderExited?.();
    expect(b.cell.members()).toEqual([b.child]);
    expect(procTable.reads - before).toBe(1);
  });

  it('a cell whose leader still runs always reads afresh', () => {
    const proc = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
    const cell = containment.open('live');
    cells.push(cell);
    cell.adopt(proc.pid as number, undefined);
    const before = procTable.reads;
    expect(cell.members()).toEqual([proc.pid]);
    expect(cell.members()).toEqual([proc.pid]);
    expect(procTable.reads - before).toBe(2);
  });
});
