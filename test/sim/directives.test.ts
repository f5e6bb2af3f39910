import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { composeChunks, DEFAULT_ANSWER, filler, splitEvenly } from '../../src/sim/answer.js';
import {
  defaultDirectives,
  parseDirectives,
  parseDurationMs,
  parseSizeBytes,
  tokenize,
} from '../../src/sim/directives.js';

describe('parseDirectives', () => {
  it('gives the defaults for a prompt without a #sim line', () => {
    expect(parseDirectives('just do the task\nplease')).toEqual({
      directives: defaultDirectives(),
      problems: [],
    });
  });

  it('reads every directive of the design example', () => {
    const { directives, problems } = parseDirectives(
      'task text\n#sim sleep=800ms chunks=20 bytes=4096 mem=200mb cpu=0.5 fail=crash hang exit=3 echo child=sleep tools=5 ask info',
    );
    expect(problems).toEqual([]);
    expect(directives).toEqual({
      sleepMs: 800,
      chunks: 20,
      bytes: 4096,
      memBytes: 200 * 1024 * 1024,
      cpuFraction: 0.5,
      fail: 'crash',
      hang: true,
      exitCode: 3,
      echo: true,
      child: 'sleep',
      tools: 5,
      writes: [],
      ask: true,
      info: true,
    });
  });

  it('reads write="path=content" in order, with \\n as a newline, and reports a write without a path', () => {
    const { directives, problems } = parseDirectives(
      '#sim write=a/b.txt=one\\ntwo write="/abs/x=1" write="=nope" write=bare',
    );
    expect(directives.writes).toEqual([
      { path: 'a/b.txt', content: 'one\ntwo' },
      { path: '/abs/x', content: '1' },
    ]);
    expect(problems).toHaveLength(2);
  });

  it('accepts leading whitespace, several #sim lines (later wins) and CRLF', () => {
    const { directives } = parseDirectives('  #sim sleep=2s tools=1\r\nbody\r\n#sim tools=3');
    expect(directives.sleepMs).toBe(2000);
    expect(directives.tools).toBe(3);
  });

  it('ignores words that only look similar', () => {
    expect(parseDirectives('#simulate sleep=5s\ntext#sim sleep=5s\nsee sim sleep=5s').directives).toEqual(
      defaultDirectives(),
    );
  });

  it('reads #sim anywhere in a line, as a parent that wraps the task leaves it', () => {
    const wrapped = parseDirectives('Please do this task: #sim sleep=2s tools=3\nThanks.');
    expect(wrapped.problems).toEqual([]);
    expect(wrapped.directives).toMatchObject({ sleepMs: 2000, tools: 3 });
    const quoted = parseDirectives('Task: "#sim echo" and `#sim chunks=4`');
    expect(quoted.directives).toMatchObject({ echo: true, chunks: 4 });
  });

  it('mid-line, takes known directives only up to the first other word, and says nothing about prose', () => {
    const prose = parseDirectives(
      'We tag simulator prompts with #sim in the docs; #sim is just a marker here.',
    );
    expect(prose).toEqual({ directives: defaultDirectives(), problems: [] });
    // The simulator's own messages, relayed to a simulated parent in a completion event, stay inert.
    expect(parseDirectives('sim: simulated error (#sim fail=error)').directives).toEqual(defaultDirectives());
    const then = parseDirectives('run #sim sleep=1s then report back with sleep=9s');
    expect(then.directives.sleepMs).toBe(1000);
    expect(then.problems).toEqual([]);
    // A known directive with a bad value is still reported, as at the start of a line.
    expect(parseDirectives('run #sim sleep=soon').problems).toEqual([
      '#sim sleep: expected a duration like 800ms or 2s, got "soon"',
    ]);
  });

  it('a spawn task quoted mid-line keeps its own #sim for the child', () => {
    const { directives } = parseDirectives('Fan out: #sim spawn="#sim sleep=50ms" wave wait');
    expect(directives.parent).toEqual({ tasks: ['#sim sleep=50ms'], wave: true, after: 'wait' });
    expect(directives.sleepMs).toBe(0);
  });

  it('reports bad values and unknown directives but applies the rest', () => {
    const { directives, problems } = parseDirectives(
      '#sim sleep=soon chunks=0 fail=explode exit=256 cpu=2 mem=lots child=yes echo=1 frobnicate tools=2',
    );
    expect(directives).toEqual({ ...defaultDirectives(), tools: 2 });
    expect(problems).toEqual([
      '#sim sleep: expected a duration like 800ms or 2s, got "soon"',
      '#sim chunks: expected an integer 1..100000, got "0"',
      '#sim fail: expected crash, error or refusal, got "explode"',
      '#sim exit: expected an exit code 0..255, got "256"',
      '#sim cpu: expected a fraction 0..1, got "2"',
      '#sim mem: expected a size like 200mb, got "lots"',
      '#sim child: expected sleep, got "yes"',
      '#sim echo takes no value',
      '#sim frobnicate: unknown directive',
    ]);
  });

  it('reports a directive that needs a value and has none', () => {
    expect(parseDirectives('#sim sleep').problems).toEqual([
      '#sim sleep: expected a duration like 800ms or 2s, got no value',
    ]);
  });

  it('reads parent directives: spawn tasks verbatim and in order, wave, wait', () => {
    const { directives, problems } = parseDirectives(
      'fan out\n#sim spawn="#sim sleep=50ms" spawn="say \\"hi\\"" spawn="" wave wait',
    );
    expect(problems).toEqual([]);
    expect(directives).toEqual({
      ...defaultDirectives(),
      parent: { tasks: ['#sim sleep=50ms', 'say "hi"', ''], wave: true, after: 'wait' },
    });
  });

  it('yields by default, and adds up spawn tasks over several #sim lines', () => {
    const { directives, problems } = parseDirectives('#sim spawn=a\n#sim spawn="b c" sleep=1s');
    expect(problems).toEqual([]);
    expect(directives.parent).toEqual({ tasks: ['a', 'b c'], wave: false, after: 'yield' });
    expect(directives.sleepMs).toBe(1000);
  });

  it('reports parent directives it cannot use', () => {
    expect(parseDirectives('#sim wave wait').problems).toEqual([
      '#sim wave: needs at least one spawn="task"',
      '#sim wait: needs at least one spawn="task"',
    ]);
    const both = parseDirectives('#sim spawn=a wait yield wave=1 spawn');
    expect(both.directives.parent).toEqual({ tasks: ['a'], wave: false, after: 'yield' });
    expect(both.problems).toEqual([
      '#sim yield: wait and yield exclude each other; the last one applies',
      '#sim wave takes no value',
      '#sim spawn: expected a task like spawn="#sim sleep=50ms", got no value',
    ]);
  });
});

describe('tokenize', () => {
  it('keeps quoted values whole and unescapes them', () => {
    expect(tokenize(' spawn="two words" spawn="say \\"hi\\"" wave x=1 ')).toEqual([
      { name: 'spawn', value: 'two words' },
      { name: 'spawn', value: 'say "hi"' },
      { name: 'wave' },
      { name: 'x', value: '1' },
    ]);
  });
});

describe('units', () => {
  it.each([
    ['800ms', 800],
    ['2s', 2000],
    ['1.5s', 1500],
    ['2m', 120_000],
    ['250', 250],
    ['2S', 2000],
  ])('duration %s = %d ms', (text, ms) => {
    expect(parseDurationMs(text)).toBe(ms);
  });

  it.each(['', 's', '-1s', '2h', '1e3'])('duration %j is not one', (text) => {
    expect(parseDurationMs(text)).toBeUndefined();
  });

  it.each([
    ['4096', 4096],
    ['4kb', 4096],
    ['4k', 4096],
    ['200mb', 200 * 1024 ** 2],
    ['1.5GB', 1.5 * 1024 ** 3],
    ['12b', 12],
  ])('size %s = %d bytes', (text, bytes) => {
    expect(parseSizeBytes(text)).toBe(bytes);
  });

  it.each(['', 'mb', '-4kb', '4tb'])('size %j is not one', (text) => {
    expect(parseSizeBytes(text)).toBeUndefined();
  });
});

describe('composeChunks', () => {
  const base = { echo: false, chunks: 1 };

  it('answers a short deterministic text by default', () => {
    expect(composeChunks(base, 'anything')).toEqual([DEFAULT_ANSWER]);
  });

  it('gives one numbered line per chunk', () => {
    expect(composeChunks({ ...base, chunks: 3 }, 'x')).toEqual([
      'sim: chunk 1/3\n',
      'sim: chunk 2/3\n',
      'sim: chunk 3/3\n',
    ]);
  });

  it('gives exactly `bytes` bytes over `chunks` chunks', () => {
    const chunks = composeChunks({ ...base, bytes: 4096, chunks: 20 }, 'x');
    expect(chunks).toHaveLength(20);
    expect(Buffer.byteLength(chunks.join(''))).toBe(4096);
    expect(chunks.join('')).toBe(filler(4096));
  });

  it('echoes the prompt, cut into chunks', () => {
    const prompt = 'hello world\n#sim echo chunks=4';
    const chunks = composeChunks({ ...base, echo: true, chunks: 4 }, prompt);
    expect(chunks).toHaveLength(4);
    expect(chunks.join('')).toBe(prompt);
  });

  it('never makes empty chunks', () => {
    expect(splitEvenly('ab', 5)).toEqual(['a', 'b']);
    expect(splitEvenly('', 5)).toEqual([]);
    expect(splitEvenly('😀😀', 2)).toEqual(['😀', '😀']);
  });

  it('cuts at the same code points with or without surrogates in the text (property)', () => {
    // The reference: cut an array of code points (what the fast path for surrogate-free text replaces).
    const byCodePoints = (text: string, parts: number) => {
      const chars = Array.from(text);
      const count = Math.max(1, Math.min(parts, chars.length));
      return chars.length === 0
        ? []
        : Array.from({ length: count }, (_, i) =>
            chars
              .slice(Math.floor((i * chars.length) / count), Math.floor(((i + 1) * chars.length) / count))
              .join(''),
          );
    };
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), fc.string({ unit: 'grapheme' })),
        fc.integer({ min: 1, max: 40 }),
        (text, parts) => {
          expect(splitEvenly(text, parts)).toEqual(byCodePoints(text, parts));
        },
      ),
    );
  });

  it('fills with numbered 64-byte lines', () => {
    const text = filler(130);
    expect(text.length).toBe(130);
    expect(text.split('\n')[0]).toMatch(/^sim output line 000001 \.+$/);
    expect(text.indexOf('\n')).toBe(63);
  });
});
