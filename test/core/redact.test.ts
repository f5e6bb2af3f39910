import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  mayHoldSecret,
  PRIVATE_KEY_SHAPE,
  redact,
  redactByTable,
  SECRET_SHAPES,
  taskPreview,
  URL_SHAPES,
} from '../../src/core/redact.js';
import { numRuns } from '../helpers/fc-runs.js';
import { HOSTILE_REDACT_UNITS, hostileText } from '../helpers/redact-hostile.js';

const ROWS = [...SECRET_SHAPES, ...URL_SHAPES, PRIVATE_KEY_SHAPE];
const MASKED = ROWS.flatMap((row) =>
  row.redacts.map(([input, expected]) => [row.name, input, expected] as const),
);
const UNTOUCHED = ROWS.flatMap((row) => row.keeps.map((input) => [row.name, input] as const));

// Prose and paths no row is about, kept exactly.
const PROSE: readonly string[] = [
  'Please refactor the scheduler so the queue stays FIFO.',
  'The fix landed in 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39 yesterday.',
  'run id 550e8400-e29b-41d4-a716-446655440000',
  'edit /home/user/projects/crew/src/core/redact.ts and test/core/redact.test.ts',
  'C:\\Users\\alice\\AppData\\Local\\crew\\config.json',
  '"integrity": "sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+5T4ZrwtL1ldQV0BpkEXS3bpcLYMhXbyJsJ0WvQ=="',
  'git checkout 9fceb02d0ae598e95dc970b74767f19372d61af8 && npm ci',
  '',
];

describe('redact', () => {
  it('has a must-mask case and a must-keep lookalike on every row', () => {
    for (const row of ROWS) {
      expect(row.redacts.length, row.name).toBeGreaterThan(0);
      expect(row.keeps.length, row.name).toBeGreaterThan(0);
    }
    expect(MASKED.length).toBeGreaterThanOrEqual(50);
    expect(UNTOUCHED.length).toBeGreaterThanOrEqual(40);
  });

  it.each(MASKED)('%s: masks %j', (_row, input, expected) => {
    expect(redact(input)).toBe(expected);
  });

  it.each(UNTOUCHED)('%s: keeps the lookalike %j', (_row, input) => {
    expect(redact(input)).toBe(input);
  });

  it.each(PROSE)('leaves %j untouched', (input) => {
    expect(redact(input)).toBe(input);
  });

  // Benign words around a case: the case masks exactly as alone, a lookalike stays whole.
  const word = fc.constantFrom('the', 'fix', 'run', 'tests', 'please', 'and', 'then', 'deploy', 'now', 'ok');
  const words = fc.array(word, { maxLength: 6 }).map((w) => w.join(' '));

  it('masks every case wherever it sits in a task (property)', () => {
    fc.assert(
      fc.property(fc.constantFrom(...MASKED), words, words, ([, input, expected], before, after) => {
        expect(redact(`${before} ${input} ${after}`)).toBe(`${before} ${expected} ${after}`);
      }),
      { numRuns: numRuns(2000) },
    );
  });

  it('keeps every lookalike wherever it sits in a task (property)', () => {
    fc.assert(
      fc.property(fc.constantFrom(...UNTOUCHED), words, words, ([, input], before, after) => {
        const text = `${before} ${input} ${after}`;
        expect(redact(text)).toBe(text);
      }),
      { numRuns: numRuns(2000) },
    );
  });

  it('keeps the text around a masked secret in a long task', () => {
    const task = `Deploy with AKIAIOSFODNN7EXAMPLE.\n${'Then run the tests. '.repeat(100)}Done.`;
    expect(redact(task)).toBe(task.replace('AKIAIOSFODNN7EXAMPLE', '[REDACTED:aws_key]'));
  });

  const fragments = [
    'AKIA',
    'IOSFODNN7EXAMPLE',
    'password',
    'token',
    'secret',
    'api_key',
    '=',
    ': ',
    ' ',
    '"',
    "'",
    '\n',
    'https://',
    'http://',
    'user:pass@',
    '@',
    'webhook.site',
    'oast.fun',
    'example.com',
    '/',
    '?',
    '&',
    '.',
    '-',
    '_',
    'eyJ',
    'abcdefgh12',
    'ghp_',
    'sk-',
    'sk-ant-',
    'sk_live_',
    'xoxb-',
    'glpat-',
    'AIza',
    'Bearer ',
    'Authorization: ',
    '--password ',
    '-----BEGIN PRIVATE KEY-----',
    '-----END PRIVATE KEY-----',
    'QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODkw',
    'deadbeef'.repeat(5),
    '0123456789abcdefABCDEF',
    '[REDACTED:secret]',
    'x'.repeat(20),
  ];
  const hostile = fc
    .array(fc.oneof(fc.constantFrom(...fragments), fc.string({ unit: 'binary-ascii', maxLength: 8 })), {
      maxLength: 30,
    })
    .map((parts) => parts.join(''));

  it('is idempotent and never throws (property)', () => {
    fc.assert(
      fc.property(fc.oneof(hostile, fc.string({ unit: 'binary' })), (text) => {
        const once = redact(text);
        expect(redact(once)).toBe(once);
      }),
      { numRuns: numRuns(3000) },
    );
  });

  it.each([
    'http://(webhook.site@',
    'postgres://u:[REDACTED:secret]@h',
    'password=[REDACTED:secret]',
    '--password Authorization: Authorization: 0\u0000\u0000\u0000\u0000\u0000\u0000\u0000',
    'webhook.site.xoxb-Authorization: ',
    'oast.fun.ghp_QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODkw',
  ])('is idempotent on %j (found by the property)', (text) => {
    const once = redact(text);
    expect(redact(once)).toBe(once);
  });

  it('redacts 100 KB of random input well under 100 ms', () => {
    const input = fc.sample(hostile, { numRuns: 20_000, seed: 42 }).join(' ').slice(0, 100_000);
    expect(input.length).toBe(100_000);
    redact(input); // warm up the regexes
    const started = performance.now();
    redact(input);
    expect(performance.now() - started).toBeLessThan(100);
  });

  /** Fastest of a few runs of `fn(text)`, in ms: the least disturbed by the rest of the machine. */
  function fastestMs(fn: (text: string) => unknown, text: string): number {
    fn(text); // warm up
    let best = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      fn(text);
      best = Math.min(best, performance.now() - started);
    }
    return best;
  }

  /** A linear baseline: three global passes over the same text, one with a callback per token. */
  const linearBaseline = (text: string) =>
    text
      .replace(/[^\s]+/g, (token) => token)
      .replace(/\s/g, ' ')
      .split(/[/.:=]/).length;

  // 100k chars of one unit repeated, built to make a backtracking pattern rescan. Measured on 2 cores,
  // redact costs at most ~17x the baseline on any of these; a pattern that rescans the rest of the text
  // from every position costs thousands of times it at this size. The bound is relative, so a slow or
  // busy machine moves both sides.
  it.each(HOSTILE_REDACT_UNITS)('stays linear on hostile input: %s', (_name, unit) => {
    const text = hostileText(unit, 100_000);
    const baselineMs = Math.max(fastestMs(linearBaseline, text), 0.05);
    const redactMs = fastestMs(redact, text);
    expect(
      redactMs,
      `${redactMs.toFixed(2)} ms vs a linear baseline of ${baselineMs.toFixed(2)} ms`,
    ).toBeLessThan(baselineMs * 100);
  });

  it('the linear-time bound catches a backtracking pattern (the check can fail)', () => {
    const text = 'a'.repeat(20_000);
    const baselineMs = Math.max(fastestMs(linearBaseline, text), 0.05);
    const rescanning = (t: string) => t.replace(/a*b/g, '');
    expect(fastestMs(rescanning, text)).toBeGreaterThan(baselineMs * 100);
  });
});

describe('taskPreview', () => {
  it('redacts, collapses whitespace and cuts to 200 chars by default', () => {
    const task = `Fix   the\n\n build using ghp_16C7e42F292c6912E7710c838347Ae178B4a\t${'and more '.repeat(50)}`;
    const preview = taskPreview(task);
    expect(preview.startsWith('Fix the build using [REDACTED:github_token] and more')).toBe(true);
    expect([...preview]).toHaveLength(200);
    expect(preview.endsWith('…')).toBe(true);
  });

  it('redacts before cutting, so a secret cut in half cannot leak its start', () => {
    const task = `${'x'.repeat(190)} AKIAIOSFODNN7EXAMPLE`;
    expect(taskPreview(task, 200)).not.toContain('AKIA');
  });

  it('keeps a short task whole and honours maxChars', () => {
    expect(taskPreview('  hello \n world  ')).toBe('hello world');
    expect(taskPreview('abcdef', 4)).toBe('abc…');
  });

  it('collapses whitespace as one replace of every run of it would, single spaces kept as they are', () => {
    const piece = fc.constantFrom('a', 'b c', ' ', '  ', '\t', '\n', '\u00a0', '\u2003', '\r\n', 'x');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const task = pieces.join('');
        expect(taskPreview(task, 1000)).toBe(task.replace(/\s+/g, ' ').trim());
      }),
    );
  });
});

describe('the pre-check (mayHoldSecret)', () => {
  // Every piece of every must-mask case that the full table changes: the pre-check must flag it, so the
  // fast path can never skip a secret of any row (a new row whose secrets escape it fails here).
  it.each(MASKED)('%s: flags every substring of %j that the table would mask', (_row, input) => {
    const chars = [...input];
    let changed = 0;
    for (let from = 0; from < chars.length; from++) {
      for (let to = from + 1; to <= chars.length; to++) {
        const piece = chars.slice(from, to).join('');
        if (redactByTable(piece) === piece) continue;
        changed++;
        expect(mayHoldSecret(piece), piece).toBe(true);
        expect(redact(piece)).toBe(redactByTable(piece));
      }
    }
    expect(changed, 'the whole case is masked').toBeGreaterThan(0);
  });

  it('passes prose without those marks untouched and flags each mark', () => {
    for (const text of [
      'task 42',
      'Please refactor the scheduler so the queue stays FIFO',
      'summarise part 3 of it',
    ])
      expect(mayHoldSecret(text), text).toBe(false);
    for (const text of ['a: b', 'x=y', 'use --flag', 'see hookb.in', 'eyJ', 'Bearer', 'abcdefghijklmno'])
      expect(mayHoldSecret(text), text).toBe(true);
  });

  it('agrees with the full table on random text (property)', () => {
    const alphabet = fc.constantFrom(
      ...'abcXYZ019_-+/~.:= \n"\'@'.split(''),
      'eyJ',
      'bearer ',
      'sk-',
      'ghp_',
      'AKIA',
    );
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 60 }), (parts) => {
        const text = parts.join('');
        if (!mayHoldSecret(text)) expect(redactByTable(text)).toBe(text);
        expect(redact(text)).toBe(redactByTable(text));
      }),
      { numRuns: numRuns(3000) },
    );
  });
});
