import { describe, expect, it } from 'vitest';
import { decidePauses, type PauseRun } from '../../src/core/pause-policy.js';
import { reserveStarts } from '../../src/core/reservation.js';

const run = (id: string, startedAt: number, over: Partial<PauseRun> = {}): PauseRun => ({
  id,
  startedAt,
  currentGb: 1,
  isGrowing: true,
  isPaused: false,
  expectedGb: 1,
  ...over,
});

describe('decidePauses', () => {
  it('pauses nothing while the memory left is at or above the margin', () => {
    expect(decidePauses({ availableGb: 1.5, marginGb: 1.5, runs: [run('a', 1), run('b', 2)] })).toEqual({
      pause: [],
      resume: [],
    });
  });

  it('under the margin pauses every growing run, newest first, and lets a settled run go on', () => {
    const runs = [run('old', 1, { isGrowing: false }), run('mid', 2), run('new', 3)];
    expect(decidePauses({ availableGb: 1, marginGb: 1.5, runs })).toEqual({
      pause: ['new', 'mid'],
      resume: [],
    });
  });

  it('keeps one growing run going when no run has settled (the oldest of equals), so some run reaches its end', () => {
    const runs = [run('b', 2), run('a', 1), run('c', 3)];
    expect(decidePauses({ availableGb: 0.2, marginGb: 1.5, runs }).pause).toEqual(['c', 'b']);
    expect(decidePauses({ availableGb: 0.2, marginGb: 1.5, runs: [run('only', 1)] }).pause).toEqual([]);
  });

  it('keeps going the growing run that holds the most, not the oldest', () => {
    // capsim, 8 GiB, seed 11: two 4 GiB runs; the oldest held 1.6 GiB, a newer one 2.7, with 2.25 GiB left.
    // The oldest going on would need 2.4 more and overflow; the newer one needs 1.3.
    const runs = [
      run('oldest', 1, { currentGb: 1.6 }),
      run('newer', 2, { currentGb: 2.7 }),
      run('newest', 3, { currentGb: 0.4 }),
    ];
    expect(decidePauses({ availableGb: 2.25, marginGb: 2.5, runs })).toEqual({
      pause: ['newest', 'oldest'],
      resume: [],
    });
  });

  it('reads a holding that is not a number as nothing when choosing the run to keep', () => {
    const runs = [run('a', 1, { currentGb: Number.NaN }), run('b', 2, { currentGb: 0.5 })];
    expect(decidePauses({ availableGb: 0.2, marginGb: 1.5, runs }).pause).toEqual(['a']);
  });

  it('does not pause a run already paused again', () => {
    const runs = [run('a', 1, { isGrowing: false }), run('b', 2, { isPaused: true }), run('c', 3)];
    expect(decidePauses({ availableGb: 0, marginGb: 1, runs }).pause).toEqual(['c']);
  });

  it('resumes the oldest paused run first once what it may still grow fits above the margin', () => {
    const runs = [
      run('going', 0, { isGrowing: false }),
      run('b', 2, { isPaused: true, currentGb: 0.5, expectedGb: 1.5 }),
      run('a', 1, { isPaused: true, currentGb: 0.5, expectedGb: 1.5 }),
    ];
    // 1 GiB above the margin: room for one run's 1 GiB more, not two.
    expect(decidePauses({ availableGb: 2.5, marginGb: 1.5, runs })).toEqual({ pause: [], resume: ['a'] });
    expect(decidePauses({ availableGb: 3.5, marginGb: 1.5, runs }).resume).toEqual(['a', 'b']);
    // Not yet: 0.9 GiB above the margin is short of the 1 GiB the oldest may still take.
    expect(decidePauses({ availableGb: 2.4, marginGb: 1.5, runs }).resume).toEqual([]);
  });

  it('resumes the oldest paused run when nothing else is going, even if it does not fit', () => {
    const runs = [
      run('b', 2, { isPaused: true, expectedGb: 9 }),
      run('a', 1, { isPaused: true, expectedGb: 9 }),
    ];
    expect(decidePauses({ availableGb: 1.6, marginGb: 1.5, runs }).resume).toEqual(['a']);
    // Under the margin too: the paused runs hold what is short, and only their going on frees it.
    expect(decidePauses({ availableGb: 0.1, marginGb: 1.5, runs })).toEqual({ pause: [], resume: ['a'] });
  });

  it('resumes every paused run when the memory reading is unknown or not a number', () => {
    const runs = [run('a', 1, { isPaused: true }), run('b', 2, { isPaused: true }), run('c', 3)];
    for (const availableGb of [undefined, Number.NaN, -1]) {
      expect(decidePauses({ availableGb, marginGb: 1.5, runs })).toEqual({ pause: [], resume: ['a', 'b'] });
    }
  });

  it('a margin of 0 never pauses', () => {
    expect(decidePauses({ availableGb: 0, marginGb: 0, runs: [run('a', 1), run('b', 2)] }).pause).toEqual([]);
  });

  it('a run whose expectation is not a number does not resume unless nothing else goes', () => {
    const runs = [run('s', 0, { isGrowing: false }), run('a', 1, { isPaused: true, expectedGb: Number.NaN })];
    expect(decidePauses({ availableGb: 50, marginGb: 1, runs }).resume).toEqual([]);
  });
});

describe("decidePauses with runs it cannot pause (a shared ACP runtime's sessions)", () => {
  const shared = (id: string, startedAt: number, over: Partial<PauseRun> = {}) =>
    run(id, startedAt, { isPausable: false, ...over });

  it('never pauses one, and still keeps a run it could pause going', () => {
    const runs = [run('a', 1), run('b', 2), shared('s', 3)];
    expect(decidePauses({ availableGb: 0.2, marginGb: 1.5, runs })).toEqual({ pause: ['b'], resume: [] });
    expect(decidePauses({ availableGb: 0.2, marginGb: 1.5, runs: [shared('s', 1)] }).pause).toEqual([]);
  });

  it('does not count one as going: it may be a parent waiting on the runs paused', () => {
    const runs = [shared('s', 1), run('a', 2, { isPaused: true }), run('b', 3, { isPaused: true })];
    expect(decidePauses({ availableGb: 0.2, marginGb: 1.5, runs })).toEqual({ pause: [], resume: ['a'] });
  });

  it('while one still grows, no paused run resumes over the margin: where it stops is unknown', () => {
    const runs = [shared('s', 1), run('a', 2), run('b', 3, { isPaused: true, expectedGb: 0.1 })];
    expect(decidePauses({ availableGb: 100, marginGb: 1.5, runs }).resume).toEqual([]);
    const settled = [shared('s', 1, { isGrowing: false }), ...runs.slice(1)];
    expect(decidePauses({ availableGb: 100, marginGb: 1.5, runs: settled }).resume).toEqual(['b']);
  });

  it('never resumes one, even on an unknown reading', () => {
    const runs = [shared('s', 1, { isPaused: true }), run('a', 2, { isPaused: true })];
    expect(decidePauses({ availableGb: undefined, marginGb: 1.5, runs }).resume).toEqual(['a']);
    expect(decidePauses({ availableGb: 100, marginGb: 1.5, runs }).resume).toEqual(['a']);
  });
});

describe('reserveStarts with a paused run', () => {
  it('lets no run start while one is paused, however much fits', () => {
    const input = {
      availableGb: 100,
      runs: [{ expectedGb: 1, currentGb: 1 }],
      nextExpectedGb: [1, 1],
      bufferGb: 1,
    };
    expect(reserveStarts(input).startsAllowed).toBe(2);
    expect(
      reserveStarts({ ...input, runs: [{ expectedGb: 1, currentGb: 1, isPaused: true }] }).startsAllowed,
    ).toBe(0);
  });
});
