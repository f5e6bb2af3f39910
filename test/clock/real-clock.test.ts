import { describe, expect, it } from 'vitest';
import { neverBackwards } from '../../src/clock/real-clock.js';

describe('neverBackwards', () => {
  it('holds the highest reading while the wall clock is stepped back, then follows it again', () => {
    const wall = [1000, 1005, 990, 995, 1004, 1010];
    const now = neverBackwards(() => wall.shift() ?? Number.NaN);
    expect(Array.from({ length: 6 }, now)).toEqual([1000, 1005, 1005, 1005, 1005, 1010]);
  });
});
