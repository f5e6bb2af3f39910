import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isCrewError, type Refusal } from '../../src/core/errors.js';
import { fileSource } from '../../src/transcripts/file-bytes.js';
import { pageHeader } from '../../src/transcripts/page-collector.js';
import { pageTranscript } from '../../src/transcripts/paging.js';
import type { PageOptions } from '../../src/transcripts/transcript-store.js';

let dir: string;
let path: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'crew-paging-'));
  path = join(dir, 'result.txt');
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Lines `line 0` … `line n-1`, every third with `fizz`. */
function writeLines(count: number): void {
  const lines = Array.from({ length: count }, (_, i) => `line ${i}${i % 3 === 0 ? ' fizz' : ''}`);
  writeFileSync(path, `${lines.join('\n')}\n`);
}

// Paging as users see it (headers, offsets, grep, maxChars) is in transcript-store-conformance.ts; these
// are the pager's own edges: its `more` flag, clamping, refusals, and costly patterns.

async function refusal(options: Partial<PageOptions>): Promise<Refusal> {
  try {
    await pageTranscript(fileSource(path), { maxChars: 1000, ...options });
  } catch (error) {
    if (isCrewError(error)) return error.refusal;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('pageTranscript', () => {
  it('writes the continuation header exactly', () => {
    expect(pageHeader(1, 200, 1000, true)).toBe(
      '[lines 1-200 of 1000 | more available — call again with offset=200]',
    );
    expect(pageHeader(801, 1000, 1000, false)).toBe('[lines 801-1000 of 1000]');
  });

  it('with no paging arguments returns the whole transcript, without a header, when it fits', async () => {
    writeLines(5);
    const page = await pageTranscript(fileSource(path), { maxChars: 1000 });
    expect(page).toEqual({
      text: 'line 0 fizz\nline 1\nline 2\nline 3 fizz\nline 4',
      fromLine: 1,
      toLine: 5,
      totalLines: 5,
      more: false,
    });
    writeFileSync(path, '');
    expect(await pageTranscript(fileSource(path), { maxChars: 1000 })).toMatchObject({
      text: '',
      totalLines: 0,
    });
  });

  it('clamps a huge limit instead of refusing it', async () => {
    writeLines(12_000);
    const page = await pageTranscript(fileSource(path), { offset: 0, limit: 1e12, maxChars: 10_000_000 });
    expect(page).toMatchObject({ fromLine: 1, toLine: 10_000, totalLines: 12_000, more: true });
    const infinite = await pageTranscript(fileSource(path), {
      offset: 0,
      limit: Number.POSITIVE_INFINITY,
      maxChars: 10_000_000,
    });
    expect(infinite.toLine).toBe(10_000);
  });

  it.each<[Partial<PageOptions>, string]>([
    [{ offset: -1 }, 'offset'],
    [{ offset: 1.5 }, 'offset'],
    [{ offset: Number.NaN }, 'offset'],
    [{ limit: -5 }, 'limit'],
    [{ limit: 0 }, 'limit'],
    [{ limit: 2.5 }, 'limit'],
    [{ limit: Number.NaN }, 'limit'],
    [{ grep: '(unclosed' }, 'grep'],
    [{ grep: '[z-a]' }, 'grep'],
    [{ grep: '(a)\\1' }, 'grep'],
  ])('refuses %j as invalid_argument with path %s', async (options, argPath) => {
    writeLines(3);
    expect(await refusal(options)).toMatchObject({ code: 'invalid_argument', path: argPath });
  });

  it('refuses a missing transcript as not_found', async () => {
    expect(await refusal({ offset: 0 })).toMatchObject({ code: 'not_found' });
  });

  it('answers (a+)+$ over 50,000 a and a b within a second', async () => {
    writeFileSync(path, `${'a'.repeat(50_000)}b\nxyz\n${'a'.repeat(50_000)}\n`);
    const started = performance.now();
    const page = await pageTranscript(fileSource(path), { grep: '(a+)+$', maxChars: 100 });
    expect(performance.now() - started).toBeLessThan(1000);
    expect(page.text).toBe(`[lines 1-3 of 3]\n3: ${'a'.repeat(97)} … [line 3 cut: 97 of 50000 chars shown]`);
  });

  it('stops a grep whose pattern defeats the matcher cache, with a continuation', async () => {
    // (a|b)*a(a|b){15}c over random a/b text needs ~65,000 DFA states: the cache cannot hold them, so
    // the matcher falls back to plain NFA simulation and the work budget ends the call early.
    let seed = 12_345;
    const bit = () => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) & 1;
    };
    const lines = Array.from({ length: 500 }, () =>
      Array.from({ length: 4000 }, () => (bit() ? 'a' : 'b')).join(''),
    );
    writeFileSync(path, `${lines.join('\n')}\n`);
    const started = performance.now();
    const page = await pageTranscript(fileSource(path), { grep: '(a|b)*a(a|b){15}c', maxChars: 1000 });
    // The work budget (counted, not timed) is what stops it: toLine below. The clock only guards against a
    // runaway (the whole text through the NFA takes minutes); a loaded machine took 4.3 s, a quiet one < 1 s.
    expect(performance.now() - started).toBeLessThan(20_000);
    expect(page.more).toBe(true);
    expect(page.toLine).toBeLessThan(500);
    expect(page.text.split('\n')).toEqual([
      `[lines 1-${page.toLine} of 500 | more available — call again with offset=${page.toLine}]`,
      `[grep stopped at line ${page.toLine}: the pattern is too costly to finish in one call]`,
      '(no matching lines)',
    ]);
  });
});

describe('pageTranscript with a wall-clock budget (agent.grep_budget_ms)', () => {
  /** A clock that moves 1 ms each time it is read: the budget is spent after that many reads. */
  const tickingClock = () => {
    let nowMs = 0;
    return () => nowMs++;
  };

  it('stops when the budget is spent and returns the matches so far with the continuation', async () => {
    writeLines(1000);
    const page = await pageTranscript(
      fileSource(path),
      { grep: 'fizz$', limit: 500, maxChars: 100_000 },
      { budgetMs: 30, now: tickingClock() },
    );
    expect(page.more).toBe(true);
    expect(page.toLine).toBeGreaterThan(0);
    expect(page.toLine).toBeLessThan(1000);
    const [header, note, ...shown] = page.text.split('\n');
    expect(header).toBe(
      `[lines 1-${page.toLine} of 1000 | more available — call again with offset=${page.toLine}]`,
    );
    expect(note).toBe(
      `[grep stopped at line ${page.toLine} after 30 ms (agent.grep_budget_ms): call again with offset=${page.toLine} to go on]`,
    );
    // Every match before the stop, none after it, none missed.
    const expected = Array.from({ length: page.toLine! }, (_, i) => i)
      .filter((i) => i % 3 === 0)
      .map((i) => `${i + 1}: line ${i} fizz`);
    expect(shown).toEqual(expected);
  });

  it('goes on from the continuation offset until the end, seeing every match once', async () => {
    writeLines(300);
    const seen: string[] = [];
    let offset = 0;
    for (let calls = 0; calls < 100; calls++) {
      const page = await pageTranscript(
        fileSource(path),
        { grep: 'fizz$', offset, limit: 1000, maxChars: 100_000 },
        { budgetMs: 20, now: tickingClock() },
      );
      seen.push(...page.text.split('\n').filter((line) => /^\d+: /.test(line)));
      if (!page.more) break;
      offset = page.toLine;
    }
    expect(seen).toEqual(Array.from({ length: 100 }, (_, k) => k * 3).map((i) => `${i + 1}: line ${i} fizz`));
  });

  it('does not spend a budget it has: a grep within budget reads to the end', async () => {
    writeLines(30);
    const page = await pageTranscript(
      fileSource(path),
      { grep: 'fizz$', maxChars: 100_000 },
      { budgetMs: 1_000_000, now: tickingClock() },
    );
    expect(page.more).toBe(false);
    expect(page.text).not.toContain('grep stopped');
  });
});
