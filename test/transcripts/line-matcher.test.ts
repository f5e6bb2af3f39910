import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isCrewError } from '../../src/core/errors.js';
import { createLineMatcher } from '../../src/transcripts/create-line-matcher.js';
import type { LineMatcher } from '../../src/transcripts/line-matcher.js';
import { numRuns } from '../helpers/fc-runs.js';

function matches(matcher: LineMatcher, line: string, pieceUnits = line.length || 1): boolean {
  matcher.begin();
  for (let i = 0; i < line.length; i += pieceUnits) matcher.feed(line.slice(i, i + pieceUnits));
  return matcher.end();
}

function refusalOf(pattern: string) {
  try {
    createLineMatcher(pattern);
  } catch (error) {
    if (isCrewError(error)) return error.refusal;
    throw error;
  }
  return undefined;
}

describe('createLineMatcher', () => {
  it.each([
    ['error', 'an error here', true],
    ['error', 'an err or here', false],
    ['^warn', 'warn: x', true],
    ['^warn', 'a warn', false],
    ['done$', 'all done', true],
    ['done$', 'done!', false],
    ['\\bcat\\b', 'the cat sat', true],
    ['\\bcat\\b', 'concatenate', false],
    ['\\Bcat', 'concatenate', true],
    ['colou?r', 'color', true],
    ['a{3}', 'aa', false],
    ['a{3}', 'xaaay', true],
    ['a{2,}b', 'aaab', true],
    ['[0-9]+ms', 'took 120ms', true],
    ['[^ ]+@[^ ]+', 'mail me@x.io', true],
    ['(?:foo|bar)baz', 'barbaz', true],
    ['(?<name>x)y', 'xy', true],
    ['\\d\\s\\w', '1 a', true],
    ['\\u00e9t\\u00e9', 'été', true],
    ['\\u{1F600}', 'smile 😀', true],
    ['.', '😀', true],
    ['^.$', '😀', true],
    ['(?i)ERROR', 'an error', true],
    ['(?i)[a-c]+z', 'ABCZ', true],
    ['(?i)[^a]', 'A', false],
    ['a{', 'a{', true],
    ['x*', '', true],
  ])('%j against %j is %s', (pattern, line, expected) => {
    expect(matches(createLineMatcher(pattern), line)).toBe(expected);
  });

  // Unicode property classes mean what JavaScript's `u` flag says, never the literal text `p{L}`.
  it.each([
    ['^\\p{L}+$', ['héllo', 'Ωμέγα', '東京', 'abc'], ['hé1lo', 'p{L}', '', 'a b']],
    ['\\p{Lu}', ['aBc', 'É'], ['abc', 'é1']],
    ['^\\P{L}+$', ['123 !', '😀'], ['1a', 'é']],
    ['\\p{Script=Greek}', ['abc λ'], ['abc']],
    ['^[\\p{N}_-]+$', ['12_٣-4'], ['12a']],
    ['(?i)^\\p{Ll}$', ['a', 'A'], ['1']],
    ['\\p{Emoji_Presentation}', ['ok 😀'], ['ok']],
  ] as const)('%j follows RegExp with the u flag', (pattern, hits, misses) => {
    const matcher = createLineMatcher(pattern);
    const ignoreCase = pattern.startsWith('(?i)');
    const native = new RegExp(ignoreCase ? pattern.slice(4) : pattern, ignoreCase ? 'iu' : 'u');
    for (const line of hits) {
      expect(native.test(line), line).toBe(true);
      expect(matches(matcher, line), line).toBe(true);
    }
    for (const line of misses) {
      expect(native.test(line), line).toBe(false);
      expect(matches(matcher, line), line).toBe(false);
    }
  });

  it('matches across pieces as on the whole line', () => {
    const matcher = createLineMatcher('needle\\d');
    expect(matches(matcher, 'hay hay needle7 hay', 1)).toBe(true);
    expect(matches(matcher, 'hay hay needle hay', 3)).toBe(false);
    const literal = createLineMatcher('needle');
    expect(matches(literal, 'hay needle hay', 2)).toBe(true);
    expect(matches(literal, 'hay needl hay', 2)).toBe(false);
  });

  it.each([
    ['(a', 'unterminated group'],
    ['a)', "unmatched ')'"],
    ['[a-', 'unterminated character class'],
    ['[z-a]', 'range out of order'],
    ['*a', 'nothing to repeat'],
    ['a**', 'nothing to repeat'],
    ['^*', 'nothing to repeat'],
    ['a{3,1}', 'out of order'],
    ['a{5000}', 'above 1000'],
    ['(a{1000}){10}', 'smaller pattern'],
    ['(?=a)', 'lookahead and lookbehind'],
    ['(?<!a)b', 'lookahead and lookbehind'],
    ['(a)\\1', 'backreferences'],
    ['\\', 'end of pattern'],
    ['', 'non-empty'],
    ['x'.repeat(1001), 'at most 1000'],
    ['\\p{Nope}', 'unknown Unicode property "Nope"'],
    ['\\pL', 'needs a property in braces'],
    ['\\p{L', 'needs a property in braces'],
    ['[\\P{Foo=Bar}]', 'unknown Unicode property'],
  ])('refuses %j (%s) as invalid_argument with path grep', (pattern, words) => {
    const refusal = refusalOf(pattern);
    expect(refusal).toMatchObject({ code: 'invalid_argument', path: 'grep' });
    expect(refusal?.message).toContain(words);
  });

  it('matches (a+)+$ against 50,000 a and a b in linear time', () => {
    const started = performance.now();
    expect(matches(createLineMatcher('(a+)+$'), `${'a'.repeat(50_000)}b`)).toBe(false);
    expect(matches(createLineMatcher('^(a|a)*$'), `${'a'.repeat(50_000)}b`)).toBe(false);
    expect(matches(createLineMatcher('(x+x+)+y'), 'x'.repeat(50_000))).toBe(false);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  // The engine agrees with JavaScript's own on the syntax they share.
  const atom = fc.constantFrom(
    'a',
    'b',
    'A',
    '1',
    '.',
    '[ab]',
    '[^a]',
    '[a-c1]',
    '\\d',
    '\\w',
    '\\s',
    '\\W',
    '\\b',
    '\\B',
    '^',
    '$',
    ' ',
  );
  const pattern: fc.Arbitrary<string> = fc.letrec<{ node: string }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      atom,
      fc.tuple(tie('node'), tie('node')).map(([x, y]) => x + y),
      fc.tuple(tie('node'), tie('node')).map(([x, y]) => `(${x}|${y})`),
      fc
        .tuple(tie('node'), fc.constantFrom('*', '+', '?', '{2}', '{1,2}', '{0,}', '*?'))
        .map(([x, q]) => `(?:${x})${q}`),
    ),
  })).node;
  const line = fc.string({
    unit: fc.constantFrom('a', 'b', 'A', 'B', '1', ' ', '_', 'é', 'c'),
    maxLength: 14,
  });

  it.each([
    ['with its DFA cache', undefined],
    ['in plain NFA simulation (cache of 1 state)', 1],
  ])('agrees with RegExp on random patterns and lines, %s (property)', (_mode, dfaCacheMaxStates) => {
    const options = dfaCacheMaxStates === undefined ? {} : { dfaCacheMaxStates };
    fc.assert(
      fc.property(
        pattern,
        fc.array(line, { minLength: 1, maxLength: 5 }),
        fc.boolean(),
        (source, lines, ignoreCase) => {
          const native = new RegExp(source, ignoreCase ? 'i' : '');
          const ours = createLineMatcher(ignoreCase ? `(?i)${source}` : source, options);
          for (const text of lines)
            expect(matches(ours, text, 3), `${source} on ${JSON.stringify(text)}`).toBe(native.test(text));
        },
      ),
      { numRuns: numRuns(2000) },
    );
  });
});
