import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isCrewError, type Refusal } from '../../src/core/errors.js';
import { type PageOptions, pageHeader, pageTranscript } from '../../src/transcripts/paging.js';

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
function writeLines(count: number, trailingNewline = true): void {
  const lines = Array.from({ length: count }, (_, i) => `line ${i}${i % 3 === 0 ? ' fizz' : ''}`);
  writeFileSync(path, lines.join('\n') + (trailingNewline ? '\n' : ''));
}

async function refusal(options: Partial<PageOptions>): Promise<Refusal> {
  try {
    await pageTranscript(path, { maxChars: 1000, ...options });
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

  it('pages with offset/limit: X = offset + 1, Y = offset + lines, and offset=Y continues', async () => {
    writeLines(10);
    const first = await pageTranscript(path, { offset: 0, limit: 4, maxChars: 1000 });
    expect(first).toEqual({
      text: '[lines 1-4 of 10 | more available — call again with offset=4]\nline 0 fizz\nline 1\nline 2\nline 3 fizz',
      fromLine: 1,
      toLine: 4,
      totalLines: 10,
      more: true,
    });
    const next = await pageTranscript(path, { offset: first.toLine, limit: 4, maxChars: 1000 });
    expect(next.text.split('\n')).toEqual([
      '[lines 5-8 of 10 | more available — call again with offset=8]',
      'line 4',
      'line 5',
      'line 6 fizz',
      'line 7',
    ]);
    const last = await pageTranscript(path, { offset: next.toLine, limit: 4, maxChars: 1000 });
    expect(last.text).toBe('[lines 9-10 of 10]\nline 8\nline 9 fizz');
    expect(last.more).toBe(false);
  });

  it('counts an unterminated last line, and no empty line after a final newline', async () => {
    writeLines(3, false);
    expect((await pageTranscript(path, { offset: 0, maxChars: 1000 })).totalLines).toBe(3);
    writeLines(3, true);
    expect((await pageTranscript(path, { offset: 0, maxChars: 1000 })).totalLines).toBe(3);
    writeFileSync(path, 'a\n\nb\n');
    expect((await pageTranscript(path, { offset: 0, maxChars: 1000 })).text).toBe('[lines 1-3 of 3]\na\n\nb');
  });

  it('returns an empty page with a header saying so for an offset past the end', async () => {
    writeLines(10);
    for (const offset of [10, 11, 1_000_000]) {
      expect(await pageTranscript(path, { offset, maxChars: 1000 })).toEqual({
        text: `[no lines at offset=${offset}: the transcript has 10 lines]`,
        fromLine: offset + 1,
        toLine: offset,
        totalLines: 10,
        more: false,
      });
    }
  });

  it('with no paging arguments returns the whole transcript, without a header, when it fits', async () => {
    writeLines(5);
    const page = await pageTranscript(path, { maxChars: 1000 });
    expect(page).toEqual({
      text: 'line 0 fizz\nline 1\nline 2\nline 3 fizz\nline 4',
      fromLine: 1,
      toLine: 5,
      totalLines: 5,
      more: false,
    });
    writeFileSync(path, '');
    expect(await pageTranscript(path, { maxChars: 1000 })).toMatchObject({ text: '', totalLines: 0 });
  });

  it('with no paging arguments stops at maxChars on a line boundary, then the header', async () => {
    writeLines(10);
    // "line 0 fizz\nline 1\nline 2" is 25 chars; one more line would pass 30.
    const page = await pageTranscript(path, { maxChars: 30 });
    expect(page.text).toBe(
      '[lines 1-3 of 10 | more available — call again with offset=3]\nline 0 fizz\nline 1\nline 2',
    );
    const rest = await pageTranscript(path, { offset: page.toLine, maxChars: 30 });
    expect(rest.text.split('\n')[1]).toBe('line 3 fizz');
  });

  it('shows the start of a line longer than a page, says so, and moves past it', async () => {
    writeFileSync(path, `${'x'.repeat(100)}\nshort\n`);
    const page = await pageTranscript(path, { maxChars: 20 });
    expect(page.text).toBe(
      `[lines 1-1 of 2 | more available — call again with offset=1]\n${'x'.repeat(20)} … [line 1 cut: 20 of 100 chars shown]`,
    );
  });

  it('never cuts a page inside a multi-byte char', async () => {
    writeFileSync(path, `${'😀'.repeat(50)}\n`);
    // The only line: nothing more to page, so no header.
    const page = await pageTranscript(path, { maxChars: 7 });
    expect(page.text).toBe(`${'😀'.repeat(7)} … [line 1 cut: 7 of 50 chars shown]`);
  });

  it('keeps matching lines with their 1-based numbers; limit counts matches', async () => {
    writeLines(10);
    const page = await pageTranscript(path, { grep: 'fizz', limit: 2, maxChars: 1000 });
    // Lines 1 and 4 match; the scan stopped at the next match (line 7), so offset=6 resumes there.
    expect(page.text).toBe(
      '[lines 1-6 of 10 | more available — call again with offset=6]\n1: line 0 fizz\n4: line 3 fizz',
    );
    const next = await pageTranscript(path, { grep: 'fizz', offset: page.toLine, limit: 2, maxChars: 1000 });
    expect(next.text).toBe('[lines 7-10 of 10]\n7: line 6 fizz\n10: line 9 fizz');
  });

  it('says so when nothing matches', async () => {
    writeLines(10);
    expect((await pageTranscript(path, { grep: 'buzz', maxChars: 1000 })).text).toBe(
      '[lines 1-10 of 10]\n(no matching lines)',
    );
  });

  it('clamps a huge limit instead of refusing it', async () => {
    writeLines(12_000);
    const page = await pageTranscript(path, { offset: 0, limit: 1e12, maxChars: 10_000_000 });
    expect(page).toMatchObject({ fromLine: 1, toLine: 10_000, totalLines: 12_000, more: true });
    const infinite = await pageTranscript(path, {
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
    const page = await pageTranscript(path, { grep: '(a+)+$', maxChars: 100 });
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
    const page = await pageTranscript(path, { grep: '(a|b)*a(a|b){15}c', maxChars: 1000 });
    expect(performance.now() - started).toBeLessThan(3000);
    expect(page.more).toBe(true);
    expect(page.toLine).toBeLessThan(500);
    expect(page.text.split('\n')).toEqual([
      `[lines 1-${page.toLine} of 500 | more available — call again with offset=${page.toLine}]`,
      `[grep stopped at line ${page.toLine}: the pattern is too costly to finish in one call]`,
      '(no matching lines)',
    ]);
  });
});
