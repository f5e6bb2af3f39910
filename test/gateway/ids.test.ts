import { describe, expect, it } from 'vitest';
import { createIds } from '../../src/gateway/ids.js';

describe('ids', () => {
  it('are 12 characters, unique and in creation order within a start, each kind with its letter', () => {
    const ids = createIds();
    const runs = Array.from({ length: 50_000 }, () => ids.run());
    expect(new Set(runs).size).toBe(runs.length);
    expect([...runs].sort()).toEqual(runs);
    for (const id of [runs[0], runs.at(-1), ids.batch(), ids.event()])
      expect(id).toMatch(/^[rwe][0-9a-z]{11}$/);
    expect(ids.batch()[0]).toBe('w');
    expect(ids.event()[0]).toBe('e');
  });

  it('differ between starts by their random prefix', () => {
    const prefixes = new Set(Array.from({ length: 200 }, () => createIds().run().slice(1, 7)));
    // 200 draws from 36^6 prefixes: a repeat is a one-in-ten-thousand event, so near all are distinct.
    expect(prefixes.size).toBeGreaterThanOrEqual(199);
  });
});
