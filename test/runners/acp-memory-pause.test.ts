/**
 * The memory pause on ACP runs, with the simulator as a real agent (issue 28, item 7): a run on a dedicated
 * runtime is offered to the pause once its process started, is stopped for real (state T) for longer than
 * the ACP request timeout without failing, resumes and completes; a paused run that is cancelled leaves no
 * process; a shared runtime's run is never offered. The pauser is driven by hand-made sampler views (memory
 * short or plentiful) so each pause falls exactly where the test needs it. Held means state T (SIGSTOP, the
 * process-group containment) or a frozen cgroup (`frozen 1` in its `cgroup.events`, the cgroup v2 one).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realClock } from '../../src/clock/real-clock.js';
import { AcpRunner } from '../../src/runners/acp-runner.js';
import type { AcpRuntime } from '../../src/runners/acp-runtime.js';
import { CgroupV2Containment, probeCgroupV2 } from '../../src/runners/cgroup-cell.js';
import { createContainment, processGroupContainment } from '../../src/runners/create-containment.js';
import { MemoryPauser } from '../../src/runners/memory-pauser.js';
import { PausableCells, type PausableRun } from '../../src/runners/pausable-cells.js';
import type { Containment } from '../../src/runners/run-cell.js';
import type { RunnerEvent } from '../../src/runners/runner.js';
import { grandchildPids, isAlive, procState, simAgent, waitUntil } from '../helpers/sim.js';
import { useRunner } from './runner-conformance.js';

/**
 * As small as lets the simulator start on a loaded 2-core host (3 s did not at a load of 34), so a pause
 * that let it count would fail the run.
 */
const REQUEST_TIMEOUT_MS = 5000;
/** How long a run paused in `initialize` is held: past the request timeout. */
const HOLD_MS = REQUEST_TIMEOUT_MS + 1000;

/** Cells that tell the test the moment a run is offered (the pause can then fall before `initialize`). */
class WatchedCells extends PausableCells {
  onAdd: (runId: string) => void = () => {};
  override add(runId: string, run: PausableRun): void {
    super.add(runId, run);
    this.onAdd(runId);
  }
}

let cells: WatchedCells;
let pauser: MemoryPauser;
/** A tick with memory short: every growing run but the oldest pauses. */
const short = () => pauser.tick({ availableGb: 0, currentGb: {}, settledGb: {}, expectedGb: {} });
/** A tick with memory back: paused runs resume. */
const plenty = () => pauser.tick({ availableGb: 1000, currentGb: {}, settledGb: {}, expectedGb: {} });
const pidOf = (runId: string) => (cells.get(runId)?.cell as AcpRuntime | undefined)?.pid;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const isStarted = (e: RunnerEvent) => e.type === 'started';

const probed = probeCgroupV2(`crew-test-${process.pid}`);
const hasCgroup = probed instanceof CgroupV2Containment;
if (probed instanceof CgroupV2Containment) probed.close();

/**
 * Whether `pid` is held by the memory pause: stopped by SIGSTOP, or (under `containment` a cgroup v2) its
 * run's cell frozen: `frozen 1` in the `cgroup.events` of its cgroup, a `run-…` directory in Crew's own.
 */
function isHeld(pid: number, containment: Containment): boolean {
  if (!(containment instanceof CgroupV2Containment)) return procState(pid) === 'T';
  try {
    const path = /^0::(.*)$/m.exec(readFileSync(`/proc/${pid}/cgroup`, 'utf8'))?.[1] ?? '';
    const name = path.slice(path.lastIndexOf('/') + 1);
    if (!name.startsWith('run-')) return false;
    return /^frozen 1$/m.test(readFileSync(join(containment.dir, name, 'cgroup.events'), 'utf8'));
  } catch {
    return false;
  }
}

for (const kind of ['process_group', 'cgroup_v2'] as const) {
  if (kind === 'process_group' || hasCgroup)
    describe(`the memory pause on ACP runs, real agent processes, ${kind} containment`, () => {
      let containment: Containment = processGroupContainment;
      const home = mkdtempSync(join(tmpdir(), 'crew-acp-pause-'));
      beforeAll(async () => {
        if (kind === 'cgroup_v2') containment = await createContainment({ crewHome: home });
        expect(containment.kind).toBe(kind);
      });
      afterAll(() => {
        containment.close();
        rmSync(home, { recursive: true, force: true });
      });
      const fixture = useRunner(() => {
        cells = new WatchedCells();
        pauser = new MemoryPauser({ cells, marginGb: 1, fallbackGb: 0 });
        return new AcpRunner({
          clock: realClock,
          killGraceMs: 1000,
          requestTimeoutMs: REQUEST_TIMEOUT_MS,
          pausable: cells,
          containment,
        });
      });
      const agent = simAgent();

      /** A run older than the one under test: the pause always keeps the oldest going. */
      async function ahead() {
        const r = fixture.start(agent, '#sim hang');
        await r.until(isStarted, 'ahead started');
        return r;
      }

      // The long hold and the shared runtime once: the containment changes only how a run is held.
      if (kind === 'process_group')
        it('holds a run stopped before it answers `initialize` past the request timeout; it resumes and completes', async () => {
          const first = await ahead();
          cells.onAdd = (runId) => {
            if (runId !== first.request.runId) short();
          };
          const r = fixture.start(agent, '#sim chunks=2 sleep=100ms');
          const runId = r.request.runId;
          await waitUntil(() => pauser.isPaused(runId), 5000, 'the run paused');
          const pid = pidOf(runId) as number;
          await waitUntil(() => isHeld(pid, containment), 5000, 'the agent stopped');
          await sleep(HOLD_MS);
          // Still held, and nothing timed out: the run has not even started its session.
          expect(isHeld(pid, containment)).toBe(true);
          expect(r.events).toEqual([]);
          plenty();
          expect(pauser.isPaused(runId)).toBe(false);
          expect(await r.ended).toMatchObject({ status: 'completed' });
          expect(r.output()).toContain('chunk 2/2');
          // Its offer ends with the run.
          expect(cells.get(runId)).toBeUndefined();
          first.handle.stop('cancel');
        }, 30_000);

      it('holds a run stopped mid-turn (no output while held); it resumes and completes', async () => {
        const first = await ahead();
        const r = fixture.start(agent, '#sim chunks=6 sleep=1200ms');
        await r.until((e) => e.type === 'output', 'first output');
        short();
        const runId = r.request.runId;
        expect(pauser.isPaused(runId)).toBe(true);
        const pid = pidOf(runId) as number;
        await waitUntil(() => isHeld(pid, containment), 5000, 'the agent stopped');
        const heldOutput = r.output();
        // A turn has no request timeout (its length is the gateway's to judge): a shorter hold shows it held.
        await sleep(1500);
        expect(isHeld(pid, containment)).toBe(true);
        expect(r.output()).toBe(heldOutput);
        expect(r.ends()).toEqual([]);
        plenty();
        expect(await r.ended).toMatchObject({ status: 'completed' });
        expect(r.output()).toContain('chunk 6/6');
        first.handle.stop('cancel');
      }, 30_000);

      it('cancelling a paused run ends it, grandchild included, and leaves no process', async () => {
        const first = await ahead();
        const r = fixture.start(agent, '#sim child=sleep hang');
        const withChild = await r.until(
          (e) => e.type === 'output' && /child: pid=/.test(e.text),
          'grandchild',
        );
        const [grandchild] = grandchildPids(withChild.type === 'output' ? withChild.text : '');
        short();
        const runId = r.request.runId;
        const pid = pidOf(runId) as number;
        await waitUntil(
          () => isHeld(pid, containment) && isHeld(grandchild!, containment),
          5000,
          'both stopped',
        );
        r.handle.stop('cancel');
        expect(await r.ended).toMatchObject({ status: 'cancelled' });
        // Checked at once: `ended` comes only after the cell is empty.
        expect(isAlive(pid)).toBe(false);
        expect(isAlive(grandchild!)).toBe(false);
        expect(cells.get(runId)).toBeUndefined();
        short();
        expect(pauser.isPaused(runId)).toBe(false);
        first.handle.stop('cancel');
      }, 30_000);

      if (kind === 'process_group')
        it('never offers a run on a shared runtime; a kept conversation leaves the pause when its turn ends', async () => {
          const shared = fixture.start(simAgent({ shared: true }), '#sim hang', { shared: true });
          await shared.until(isStarted, 'shared started');
          expect(cells.get(shared.request.runId)).toBeUndefined();
          const kept = fixture.start(agent, '#sim sleep=100ms', { keep: true });
          await kept.until(isStarted, 'kept started');
          expect(cells.get(kept.request.runId)).toBeDefined();
          expect(await kept.ended).toMatchObject({ status: 'completed' });
          expect(cells.get(kept.request.runId)).toBeUndefined();
          shared.handle.stop('cancel');
          await fixture.runner().release(kept.request.runId);
        }, 30_000);
    });
}
