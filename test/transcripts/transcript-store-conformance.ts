import { describe, expect, it } from 'vitest';
import { isCrewError, type Refusal } from '../../src/core/errors.js';
import { type KeepMode, truncate } from '../../src/core/truncate.js';
import type { PageOptions, TranscriptStore } from '../../src/transcripts/transcript-store.js';

/**
 * The TranscriptStore contract (the port's doc comment, DESIGN §6 Paging, docs/decisions.md "Page line
 * numbers"), run against every adapter: the file store and the in-memory one must page, cut and preview
 * alike, since unit tests run on one and users on the other.
 */
export interface TranscriptStoreFixture {
  store: TranscriptStore;
  /** Lets written output reach readers before `close` (the file store's delayed flush). */
  settle(): Promise<void>;
  /** Whether the run has a transcript in the store's bytes (a file, or an entry in memory). */
  exists(runId: string): boolean;
  dispose(): Promise<void>;
}

export type MakeTranscriptStore = (options: { maxBytes: number }) => Promise<TranscriptStoreFixture>;

const CUT_NOTE = 'bytes (agent.transcript_max_bytes); the run went on]';
const marker = (keptBytes: number) => `[transcript cut at ${keptBytes} ${CUT_NOTE}`;

/** Lines `line 0` … `line n-1`, every third with `fizz`, each ending in a newline. */
function numberedLines(count: number): string {
  return Array.from({ length: count }, (_, i) => `line ${i}${i % 3 === 0 ? ' fizz' : ''}\n`).join('');
}

async function record(store: TranscriptStore, runId: string, ...chunks: string[]) {
  const writer = store.open(runId);
  for (const chunk of chunks) writer.write(chunk);
  return writer.close();
}

export function describeTranscriptStore(name: string, make: MakeTranscriptStore): void {
  describe(`TranscriptStore conformance: ${name}`, () => {
    /** Runs `body` on a fresh store (cut at `maxBytes`), disposing it afterwards. */
    async function withStore(
      body: (store: TranscriptStore, fixture: TranscriptStoreFixture) => Promise<void>,
      maxBytes = 1_000_000,
    ): Promise<void> {
      const fixture = await make({ maxBytes });
      try {
        await body(fixture.store, fixture);
      } finally {
        await fixture.dispose();
      }
    }

    async function refusalOf(store: TranscriptStore, runId: string, options: PageOptions): Promise<Refusal> {
      try {
        await store.page(runId, options);
      } catch (error) {
        if (isCrewError(error)) return error.refusal;
        throw error;
      }
      throw new Error(`expected ${JSON.stringify(options)} to be refused`);
    }

    describe('writing', () => {
      it('counts what it received in chars (code points) and UTF-8 bytes', () =>
        withStore(async (store) => {
          // 6 + 2 chars, 7 + 5 bytes.
          expect(await record(store, 'r1', 'héllo ', '😀\n')).toEqual({
            chars: 8,
            bytes: 12,
            cut: false,
            gapBytes: 0,
          });
        }));

      it('makes output readable before close once the writer flushes', () =>
        withStore(async (store, fixture) => {
          const writer = store.open('r1');
          writer.write('partial\nline');
          await fixture.settle();
          expect((await store.page('r1', { maxChars: 1000 })).text).toBe('partial\nline');
          await writer.close();
        }));

      it('ignores writes after close', () =>
        withStore(async (store) => {
          const writer = store.open('r1');
          writer.write('kept');
          await writer.close();
          writer.write(' dropped');
          expect((await store.page('r1', { maxChars: 1000 })).text).toBe('kept');
        }));

      it('starts a transcript afresh when the run is opened again', () =>
        withStore(async (store) => {
          await record(store, 'r1', 'first\n');
          await record(store, 'r1', 'second\n');
          expect((await store.page('r1', { maxChars: 1000 })).text).toBe('second');
          expect((await store.preview('r1', { keep: 'head', keepChars: 100 })).text).toBe('second\n');
        }));

      it('makes no transcript for a run that prints nothing, which reads as an empty one', () =>
        withStore(async (store, fixture) => {
          const writer = store.open('r1');
          expect(await writer.close()).toEqual({ chars: 0, bytes: 0, cut: false, gapBytes: 0 });
          expect(fixture.exists('r1')).toBe(false);
          expect(await store.page('r1', { maxChars: 1000 })).toMatchObject({ text: '', totalLines: 0 });
          expect(await store.preview('r1', { keep: 'both', keepChars: 10 })).toEqual({
            text: '',
            kept: 0,
            total: 0,
            truncated: false,
          });
          await record(store, 'r2', 'out\n');
          expect(fixture.exists('r2')).toBe(true); // made by the first output
        }));

      it('empties the transcript of a run opened again that then prints nothing', () =>
        withStore(async (store) => {
          await record(store, 'r1', 'first\n');
          expect(await record(store, 'r1')).toEqual({ chars: 0, bytes: 0, cut: false, gapBytes: 0 });
          expect(await store.page('r1', { maxChars: 1000 })).toMatchObject({ text: '', totalLines: 0 });
          expect((await store.preview('r1', { keep: 'head', keepChars: 100 })).text).toBe('');
        }));

      it('joins a surrogate pair split across two writes', () =>
        withStore(async (store) => {
          expect(await record(store, 'r1', 'x\uD83D', '\uDE00y')).toEqual({
            chars: 3,
            bytes: 6,
            cut: false,
            gapBytes: 0,
          });
          expect((await store.page('r1', { maxChars: 1000 })).text).toBe('x😀y');
        }));

      it('gives each run its own path', () =>
        withStore(async (store) => {
          expect(store.pathOf('r1')).toBe(store.pathOf('r1'));
          expect(store.pathOf('r1')).not.toBe(store.pathOf('r2'));
          expect(store.pathOf('r1')).toContain('r1');
        }));
    });

    describe('the cut at maxBytes', () => {
      it('keeps output up to the bound, then one marker line; later output is counted, not kept', () =>
        withStore(async (store) => {
          // 9 bytes, then a 3-byte char that would straddle the bound of 10, then more.
          const totals = await record(store, 'r1', 'abcdefghi', '€', 'later output, dropped');
          expect(totals).toEqual({ chars: 9 + 1 + 21, bytes: 9 + 3 + 21, cut: true, gapBytes: 0 });
          expect((await store.page('r1', { maxChars: 1000 })).text).toBe(`abcdefghi\n${marker(9)}`);
        }, 10));

      it('keeps output exactly at the bound without a marker', () =>
        withStore(async (store) => {
          expect(await record(store, 'r1', '0123456789')).toMatchObject({ cut: false });
          expect((await store.page('r1', { maxChars: 1000 })).text).toBe('0123456789');
        }, 10));

      it('never splits a 4-byte char at the bound', () =>
        withStore(async (store) => {
          await record(store, 'r1', 'ab😀😀\n'); // the second emoji straddles byte 6
          const { text } = await store.page('r1', { maxChars: 1000 });
          expect(text).toBe(`ab😀\n${marker(6)}`);
          expect(text).not.toContain('\uFFFD');
        }, 6));

      it('shows the marker in a tail preview, counted in the total', () =>
        withStore(async (store) => {
          await record(store, 'r1', 'é'.repeat(80)); // 160 bytes, cut at 100
          const preview = await store.preview('r1', { keep: 'tail', keepChars: 20 });
          const whole = `${'é'.repeat(50)}\n${marker(100)}\n`;
          expect(preview).toEqual(truncate(whole, { keep: 'tail', keepChars: 20 }));
          expect(preview.text.endsWith('the run went on]\n')).toBe(true);
        }, 100));
    });

    describe('paging', () => {
      it('pages with offset/limit: X = offset + 1, Y = offset + lines, and offset=Y continues', () =>
        withStore(async (store) => {
          await record(store, 'r1', numberedLines(10));
          const first = await store.page('r1', { offset: 0, limit: 4, maxChars: 1000 });
          expect(first).toMatchObject({
            text: '[lines 1-4 of 10 | more available — call again with offset=4]\nline 0 fizz\nline 1\nline 2\nline 3 fizz',
            fromLine: 1,
            toLine: 4,
            totalLines: 10,
          });
          const next = await store.page('r1', { offset: first.toLine ?? -1, limit: 4, maxChars: 1000 });
          expect(next).toMatchObject({ fromLine: 5, toLine: 8 });
          expect(next.text.split('\n')).toEqual([
            '[lines 5-8 of 10 | more available — call again with offset=8]',
            'line 4',
            'line 5',
            'line 6 fizz',
            'line 7',
          ]);
          const last = await store.page('r1', { offset: next.toLine ?? -1, limit: 4, maxChars: 1000 });
          expect(last.text).toBe('[lines 9-10 of 10]\nline 8\nline 9 fizz');
        }));

      it('gives 200 lines by default once any paging argument is passed', () =>
        withStore(async (store) => {
          await record(store, 'r1', numberedLines(250));
          const page = await store.page('r1', { offset: 0, maxChars: 1_000_000 });
          expect(page).toMatchObject({ fromLine: 1, toLine: 200, totalLines: 250 });
          expect(page.text.split('\n')[0]).toBe(
            '[lines 1-200 of 250 | more available — call again with offset=200]',
          );
        }));

      it('counts lines as `wc -l` does, plus an unterminated last line', () =>
        withStore(async (store) => {
          await record(store, 'r1', 'a\nb\nc');
          expect((await store.page('r1', { offset: 0, maxChars: 1000 })).totalLines).toBe(3);
          await record(store, 'r2', 'a\n\nb\n');
          expect((await store.page('r2', { offset: 0, maxChars: 1000 })).text).toBe(
            '[lines 1-3 of 3]\na\n\nb',
          );
        }));

      it('says so for an offset past the end', () =>
        withStore(async (store) => {
          await record(store, 'r1', numberedLines(10));
          for (const offset of [10, 11, 1_000_000]) {
            expect(await store.page('r1', { offset, maxChars: 1000 })).toMatchObject({
              text: `[no lines at offset=${offset}: the transcript has 10 lines]`,
              fromLine: offset + 1,
              toLine: offset,
              totalLines: 10,
            });
          }
        }));

      it('without paging arguments returns the whole transcript, with no header, when it fits', () =>
        withStore(async (store) => {
          await record(store, 'r1', numberedLines(5));
          expect(await store.page('r1', { maxChars: 1000 })).toMatchObject({
            text: 'line 0 fizz\nline 1\nline 2\nline 3 fizz\nline 4',
            fromLine: 1,
            toLine: 5,
            totalLines: 5,
          });
        }));

      it('without paging arguments stops at maxChars on a line boundary, then the header', () =>
        withStore(async (store) => {
          await record(store, 'r1', numberedLines(10));
          // "line 0 fizz\nline 1\nline 2" is 25 chars; one more line would pass 30.
          const page = await store.page('r1', { maxChars: 30 });
          expect(page.text).toBe(
            '[lines 1-3 of 10 | more available — call again with offset=3]\nline 0 fizz\nline 1\nline 2',
          );
          const rest = await store.page('r1', { offset: page.toLine ?? -1, maxChars: 30 });
          expect(rest.text.split('\n')[1]).toBe('line 3 fizz');
        }));

      it('shows the start of a line longer than a page, never splitting a char, and moves past it', () =>
        withStore(async (store) => {
          await record(store, 'r1', `${'😀'.repeat(50)}\nshort\n`);
          expect((await store.page('r1', { maxChars: 7 })).text).toBe(
            `[lines 1-1 of 2 | more available — call again with offset=1]\n${'😀'.repeat(7)} … [line 1 cut: 7 of 50 chars shown]`,
          );
        }));
    });

    describe('grep', () => {
      it('shows matching lines as `<n>: <text>` with 1-based numbers; limit counts matches', () =>
        withStore(async (store) => {
          await record(store, 'r1', numberedLines(10));
          const page = await store.page('r1', { grep: 'fizz', limit: 2, maxChars: 1000 });
          // Lines 1 and 4 match; the scan stopped at the next match (line 7), so offset=6 resumes there.
          expect(page.text).toBe(
            '[lines 1-6 of 10 | more available — call again with offset=6]\n1: line 0 fizz\n4: line 3 fizz',
          );
          const next = await store.page('r1', {
            grep: 'fizz',
            offset: page.toLine ?? -1,
            limit: 2,
            maxChars: 1000,
          });
          expect(next.text).toBe('[lines 7-10 of 10]\n7: line 6 fizz\n10: line 9 fizz');
        }));

      it('matches regular expressions, case-insensitively with (?i)', () =>
        withStore(async (store) => {
          await record(store, 'r1', 'Error: one\nok\nerror: two\nERRORS\n');
          expect((await store.page('r1', { grep: '^error: \\w+$', maxChars: 1000 })).text).toBe(
            '[lines 1-4 of 4]\n3: error: two',
          );
          expect((await store.page('r1', { grep: '(?i)^error', maxChars: 1000 })).text).toBe(
            '[lines 1-4 of 4]\n1: Error: one\n3: error: two\n4: ERRORS',
          );
        }));

      it('says so when nothing matches', () =>
        withStore(async (store) => {
          await record(store, 'r1', numberedLines(10));
          expect((await store.page('r1', { grep: 'buzz', maxChars: 1000 })).text).toBe(
            '[lines 1-10 of 10]\n(no matching lines)',
          );
        }));
    });

    describe('refusals', () => {
      it.each<[Partial<PageOptions>, string]>([
        [{ offset: -1 }, 'offset'],
        [{ offset: 1.5 }, 'offset'],
        [{ limit: 0 }, 'limit'],
        [{ limit: 2.5 }, 'limit'],
        [{ grep: '(unclosed' }, 'grep'],
        [{ grep: '(a)\\1' }, 'grep'],
      ])('refuses %j as invalid_argument with path %s, with or without a transcript', (options, path) =>
        withStore(async (store) => {
          await record(store, 'r1', numberedLines(3));
          for (const runId of ['r1', 'never-written']) {
            expect(await refusalOf(store, runId, { maxChars: 1000, ...options })).toMatchObject({
              code: 'invalid_argument',
              path,
            });
          }
        }),
      );
    });

    describe('previews', () => {
      const text = `first line 漢字\n${'body 😀 text é\n'.repeat(40)}last line 👍🏽 end`;

      it.each<[KeepMode, number]>([
        ['head', 50],
        ['tail', 50],
        ['both', 51],
        ['head', 1],
        ['tail', 3], // "end" … the tail must not start inside 👍🏽
        ['tail', 8], // "🏽 end": the cut falls inside the grapheme 👍🏽
      ])('keeps what truncate() keeps (keep=%s, %i chars)', (keep, keepChars) =>
        withStore(async (store) => {
          await record(store, 'r1', text);
          expect(await store.preview('r1', { keep, keepChars })).toEqual(truncate(text, { keep, keepChars }));
        }),
      );

      it('returns the whole transcript when it fits or keepChars is 0', () =>
        withStore(async (store) => {
          await record(store, 'r1', 'short 😀');
          expect(await store.preview('r1', { keep: 'head', keepChars: 7 })).toEqual({
            text: 'short 😀',
            kept: 7,
            total: 7,
            truncated: false,
          });
          await record(store, 'r2', text);
          expect((await store.preview('r2', { keep: 'tail', keepChars: 0 })).text).toBe(text);
        }));
    });

    describe('missing and pruned transcripts', () => {
      const empty = { text: '', kept: 0, total: 0, truncated: false };

      it('reads a transcript never written as an empty one', () =>
        withStore(async (store) => {
          expect(await store.page('never-written', { maxChars: 1000 })).toMatchObject({
            text: '',
            totalLines: 0,
          });
          expect((await store.page('never-written', { offset: 0, maxChars: 1000 })).text).toBe(
            '[no lines at offset=0: the transcript has 0 lines]',
          );
          expect(await store.preview('never-written', { keep: 'both', keepChars: 10 })).toEqual(empty);
        }));

      it('prunes one run, which then reads as never written; other runs keep theirs', () =>
        withStore(async (store) => {
          await record(store, 'r1', numberedLines(3));
          await record(store, 'r2', 'kept\n');
          await store.prune('r1');
          expect(await store.page('r1', { maxChars: 1000 })).toMatchObject({ text: '', totalLines: 0 });
          expect(await store.preview('r1', { keep: 'head', keepChars: 10 })).toEqual(empty);
          expect((await store.page('r2', { maxChars: 1000 })).text).toBe('kept');
          await store.prune('r1'); // again: not an error
          await store.prune('never-written');
        }));

      it('keeps a pruned run pruned while its writer still writes', () =>
        withStore(async (store) => {
          const writer = store.open('r1');
          writer.write('before\n');
          await store.prune('r1');
          writer.write('after\n');
          await writer.close();
          expect(await store.page('r1', { maxChars: 1000 })).toMatchObject({ text: '', totalLines: 0 });
        }));
    });
  });
}
