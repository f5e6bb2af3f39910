import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { INTEGRATION_TESTS, SLOW_TESTS } from '../tiers.js';
import { EXPECTED_SECONDS } from './expected-seconds.js';
import { longestFirst } from './longest-first.js';

const REPO_ROOT = join(import.meta.dirname, '..', '..');

describe('longestFirst (the order test files start in, within a tier group)', () => {
  it('starts the longest file first on a fresh clone, from the expected table', () => {
    const order = longestFirst(
      [
        { file: 'a.test.ts', group: 1 },
        { file: 'b.test.ts', group: 1 },
        { file: 'c.test.ts', group: 1 },
      ],
      new Map([
        ['b.test.ts', 100],
        ['c.test.ts', 40],
      ]),
    );
    expect(order.map((e) => e.file)).toEqual(['b.test.ts', 'c.test.ts', 'a.test.ts']);
  });

  it("prefers this machine's own last duration to the table", () => {
    const order = longestFirst(
      [
        { file: 'a.test.ts', group: 1, lastMs: 90_000 },
        { file: 'b.test.ts', group: 1 },
      ],
      new Map([
        ['a.test.ts', 10],
        ['b.test.ts', 60],
      ]),
    );
    expect(order.map((e) => e.file)).toEqual(['a.test.ts', 'b.test.ts']);
  });

  it('keeps the groups in their order: a long file never jumps ahead of an earlier group', () => {
    const order = longestFirst(
      [
        { file: 'slow.test.ts', group: 1 },
        { file: 'unit.test.ts', group: 0 },
      ],
      new Map([['slow.test.ts', 500]]),
    );
    expect(order.map((e) => e.file)).toEqual(['unit.test.ts', 'slow.test.ts']);
  });

  it('is a stable total order: unknown files of equal weight by path, whatever order they came in', () => {
    const entries = ['d', 'b', 'c', 'a'].map((f) => ({ file: `${f}.test.ts`, group: 1 }));
    expect(longestFirst(entries, new Map()).map((e) => e.file)).toEqual([
      'a.test.ts',
      'b.test.ts',
      'c.test.ts',
      'd.test.ts',
    ]);
    expect(longestFirst([...entries].reverse(), new Map()).map((e) => e.file)).toEqual([
      'a.test.ts',
      'b.test.ts',
      'c.test.ts',
      'd.test.ts',
    ]);
  });
});

describe('the expected-seconds table', () => {
  it('names only test files that exist, in the integration or slow tier, with a positive time', () => {
    expect(EXPECTED_SECONDS.size).toBeGreaterThan(10);
    for (const [file, seconds] of EXPECTED_SECONDS) {
      expect(existsSync(join(REPO_ROOT, file)), file).toBe(true);
      const listed = [...SLOW_TESTS, ...INTEGRATION_TESTS].some(
        (glob) => glob === file || (glob.endsWith('/**/*.test.ts') && file.startsWith(glob.slice(0, -12))),
      );
      expect(listed, `${file} is in the integration or slow tier`).toBe(true);
      expect(seconds, file).toBeGreaterThan(0);
    }
  });
});
