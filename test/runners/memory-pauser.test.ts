/**
 * The memory pause's action on the sampler's view: which runs it may stop (the ones in `PausableCells`)
 * and which it must leave going (every other run the sampler sees: a shared ACP runtime's sessions).
 */
import { describe, expect, it } from 'vitest';
import { MemoryPauser, type PauseTick } from '../../src/runners/memory-pauser.js';
import { PausableCells } from '../../src/runners/pausable-cells.js';

/** A cell that records what it was told. */
function recordingCell() {
  const calls: boolean[] = [];
  return { calls, pause: (isPaused: boolean) => calls.push(isPaused) };
}

const short = (currentGb: Record<string, number>): PauseTick => ({
  availableGb: 0.1,
  currentGb,
  settledGb: {},
  expectedGb: {},
});

describe('MemoryPauser', () => {
  it('pauses the newest growing run and keeps the oldest going when every run is pausable', () => {
    const cells = new PausableCells();
    const a = recordingCell();
    const b = recordingCell();
    cells.add('a', { cell: a, agent: 'x', startedAt: 1 });
    cells.add('b', { cell: b, agent: 'x', startedAt: 2 });
    const pauser = new MemoryPauser({ cells, marginGb: 1, fallbackGb: 1 });
    pauser.tick(short({ a: 0.5, b: 0.5 }));
    expect(pauser.pausedRuns()).toEqual(['b']);
    expect(a.calls).toEqual([]);
    expect(b.calls).toEqual([true]);
  });

  it('never touches a live run it cannot pause, and resumes none while that run still grows', () => {
    const cells = new PausableCells();
    const a = recordingCell();
    const b = recordingCell();
    cells.add('a', { cell: a, agent: 'x', startedAt: 1 });
    cells.add('b', { cell: b, agent: 'x', startedAt: 2 });
    const pauser = new MemoryPauser({ cells, marginGb: 1, fallbackGb: 0.1 });
    // `shared` is a run the sampler sees that no cell offers (a session of a shared runtime), the newest.
    pauser.tick(short({ a: 0.5, b: 0.5, shared: 2 }));
    expect(pauser.pausedRuns()).toEqual(['b']);
    expect(pauser.isPaused('shared')).toBe(false);
    // Memory returns, but the shared run still grows: where it stops is unknown, b stays paused.
    const plenty = { availableGb: 50, currentGb: { a: 0.5, b: 0.5, shared: 2 }, expectedGb: {} };
    pauser.tick({ ...plenty, settledGb: {} });
    expect(b.calls).toEqual([true]);
    // It settled: b resumes.
    pauser.tick({ ...plenty, settledGb: { shared: 2 } });
    expect(b.calls).toEqual([true, false]);
    expect(a.calls).toEqual([]);
  });
});
