/**
 * The pattern language of `spawn_status` `grep`: JavaScript regular expression syntax without the parts
 * that need backtracking (backreferences, lookahead, lookbehind), so it can run in linear time (see
 * `grep-program.ts` and `nfa-matcher.ts`). A leading `(?i)` makes it case-insensitive. Each line of the
 * transcript is matched on its own: `^` and `$` are the line's start and end.
 *
 * Every problem is an `invalid_argument` refusal with path `grep`.
 */
import { CrewError, refuse } from '../core/errors.js';
import {
  type CharSet,
  type CodePointRanges,
  complement,
  DIGIT,
  LINE_TERMINATORS,
  MAX_CODE_POINT,
  normalize,
  SPACE,
  unicodePropertyRanges,
  WORD,
} from './char-set.js';

export type { CharSet } from './char-set.js';

export type AssertKind = 'line_start' | 'line_end' | 'word_boundary' | 'not_word_boundary';

export type PatternNode =
  | { type: 'empty' }
  | { type: 'set'; set: CharSet }
  | { type: 'cat'; items: PatternNode[] }
  | { type: 'alt'; items: PatternNode[] }
  | { type: 'repeat'; item: PatternNode; min: number; max: number }
  | { type: 'assert'; kind: AssertKind };

export interface ParsedPattern {
  root: PatternNode;
  ignoreCase: boolean;
  /** The pattern as plain text when it has no special characters (a fast path can use `indexOf`). */
  literal: string | null;
}

/** Longest accepted pattern, in chars. */
export const GREP_PATTERN_MAX_CHARS = 1000;
/** Largest count in `{m,n}`. */
export const GREP_REPEAT_MAX = 1000;

const SPECIAL = new Set([...'\\^$.|?*+()[]{}'].map((c) => c.codePointAt(0)!));

/** Parses a grep pattern; throws an `invalid_argument` {@link CrewError} (path `grep`) when it is not one. */
export function parseGrepPattern(source: string): ParsedPattern {
  if (source.length === 0)
    fail('Expected `grep` to be a non-empty pattern; omit it to page without filtering');
  if (source.length > GREP_PATTERN_MAX_CHARS) {
    fail(`Expected \`grep\` to be at most ${GREP_PATTERN_MAX_CHARS} chars, got ${source.length}`);
  }
  const ignoreCase = source.startsWith('(?i)');
  const body = ignoreCase ? source.slice(4) : source;
  const codePoints = Array.from(body, (c) => c.codePointAt(0)!);
  const literal = !ignoreCase && body !== '' && !codePoints.some((c) => SPECIAL.has(c)) ? body : null;
  const parser = new Parser(codePoints);
  const root = parser.parseAlternation();
  if (!parser.atEnd()) fail(`Invalid \`grep\` pattern: unmatched ')' at ${parser.position}`);
  return { root, ignoreCase, literal };
}

function fail(message: string): never {
  throw new CrewError(refuse('invalid_argument', message, { path: 'grep' }));
}

class Parser {
  position = 0;

  constructor(private readonly source: readonly number[]) {}

  atEnd(): boolean {
    return this.position >= this.source.length;
  }

  parseAlternation(): PatternNode {
    const items = [this.parseConcatenation()];
    while (this.peekIs('|')) {
      this.position++;
      items.push(this.parseConcatenation());
    }
    return items.length === 1 ? items[0]! : { type: 'alt', items };
  }

  private parseConcatenation(): PatternNode {
    const items: PatternNode[] = [];
    while (!this.atEnd() && !this.peekIs('|') && !this.peekIs(')')) items.push(this.parseRepetition());
    if (items.length === 0) return { type: 'empty' };
    return items.length === 1 ? items[0]! : { type: 'cat', items };
  }

  private parseRepetition(): PatternNode {
    const start = this.position;
    const item = this.parseAtom();
    const bounds = this.parseQuantifier();
    if (!bounds) return item;
    // `^*` is an error, as in JavaScript; `(^)*` is allowed, and harmless.
    if (item.type === 'assert' && this.source[start] !== 0x28) {
      fail(`Invalid \`grep\` pattern: nothing to repeat at ${start}`);
    }
    if (this.peekIs('?')) this.position++; // lazy: the same lines match
    if (this.quantifierAhead()) fail(`Invalid \`grep\` pattern: nothing to repeat at ${this.position}`);
    return { type: 'repeat', item, min: bounds.min, max: bounds.max };
  }

  private parseQuantifier(): { min: number; max: number } | null {
    const c = this.peekChar();
    if (c === '*' || c === '+' || c === '?') {
      this.position++;
      return { min: c === '+' ? 1 : 0, max: c === '?' ? 1 : Number.POSITIVE_INFINITY };
    }
    if (c !== '{') return null;
    const braces = this.readBraces();
    if (!braces) return null;
    this.position = braces.end;
    return braces;
  }

  private quantifierAhead(): boolean {
    const c = this.peekChar();
    return c === '*' || c === '+' || c === '?' || (c === '{' && this.readBraces() !== null);
  }

  /** `{m}`, `{m,}` or `{m,n}` at the current position; anything else is a literal `{`. */
  private readBraces(): { min: number; max: number; end: number } | null {
    let i = this.position + 1;
    const readInt = (): number | null => {
      const from = i;
      while (i < this.source.length && this.source[i]! >= 0x30 && this.source[i]! <= 0x39) i++;
      return i > from ? Number(String.fromCodePoint(...this.source.slice(from, i))) : null;
    };
    const min = readInt();
    if (min === null) return null;
    let max = min;
    if (this.source[i] === 0x2c) {
      i++;
      max = readInt() ?? Number.POSITIVE_INFINITY;
    }
    if (this.source[i] !== 0x7d) return null;
    if (max < min) fail('Invalid `grep` pattern: numbers out of order in {} quantifier');
    if (min > GREP_REPEAT_MAX || (Number.isFinite(max) && max > GREP_REPEAT_MAX)) {
      fail(`Invalid \`grep\` pattern: a {} count is above ${GREP_REPEAT_MAX}`);
    }
    return { min, max, end: i + 1 };
  }

  private parseAtom(): PatternNode {
    const at = this.position;
    const c = this.source[this.position++]!;
    switch (String.fromCodePoint(c)) {
      case '(':
        return this.parseGroup(at);
      case ')':
        return fail(`Invalid \`grep\` pattern: unmatched ')' at ${at}`);
      case '[':
        return { type: 'set', set: this.parseClass(at) };
      case '.':
        return { type: 'set', set: { ranges: LINE_TERMINATORS, negated: true } };
      case '^':
        return { type: 'assert', kind: 'line_start' };
      case '$':
        return { type: 'assert', kind: 'line_end' };
      case '\\':
        return this.parseEscape(at);
      case '*':
      case '+':
      case '?':
        return fail(`Invalid \`grep\` pattern: nothing to repeat at ${at}`);
      case '{':
        this.position = at;
        if (this.readBraces()) fail(`Invalid \`grep\` pattern: nothing to repeat at ${at}`);
        this.position = at + 1;
        return literal(c);
      default:
        return literal(c);
    }
  }

  private parseGroup(at: number): PatternNode {
    if (this.peekIs('?')) {
      const next = this.source[this.position + 1];
      const after = this.source[this.position + 2];
      if (next === 0x3a) {
        this.position += 2; // (?:
      } else if (next === 0x3d || next === 0x21 || (next === 0x3c && (after === 0x3d || after === 0x21))) {
        fail(
          'Unsupported `grep` pattern: lookahead and lookbehind are not available (grep runs in linear time)',
        );
      } else if (next === 0x3c) {
        const close = this.source.indexOf(0x3e, this.position + 2);
        if (close < 0) fail(`Invalid \`grep\` pattern: unterminated group name at ${at}`);
        this.position = close + 1; // (?<name>: the name does not matter for a line match
      } else {
        fail(`Invalid \`grep\` pattern: invalid group at ${at} ((?i) is only allowed at the start)`);
      }
    }
    const inner = this.parseAlternation();
    if (!this.peekIs(')')) fail(`Invalid \`grep\` pattern: unterminated group at ${at}`);
    this.position++;
    return inner;
  }

  private parseEscape(at: number): PatternNode {
    if (this.atEnd()) fail('Invalid `grep` pattern: \\ at end of pattern');
    const c = String.fromCodePoint(this.source[this.position]!);
    switch (c) {
      case 'b':
        this.position++;
        return { type: 'assert', kind: 'word_boundary' };
      case 'B':
        this.position++;
        return { type: 'assert', kind: 'not_word_boundary' };
      case 'k':
        return fail(
          'Unsupported `grep` pattern: backreferences are not available (grep runs in linear time)',
        );
      default:
        if (c >= '1' && c <= '9') {
          fail('Unsupported `grep` pattern: backreferences are not available (grep runs in linear time)');
        }
        return { type: 'set', set: this.parseSetEscape(at, false) };
    }
  }

  /** An escape that stands for a set of chars, after its `\`; `inClass` makes `\b` a backspace. */
  private parseSetEscape(at: number, inClass: boolean): CharSet {
    const c = String.fromCodePoint(this.source[this.position++]!);
    switch (c) {
      case 'd':
        return { ranges: DIGIT, negated: false };
      case 'D':
        return { ranges: DIGIT, negated: true };
      case 'w':
        return { ranges: WORD, negated: false };
      case 'W':
        return { ranges: WORD, negated: true };
      case 's':
        return { ranges: SPACE, negated: false };
      case 'S':
        return { ranges: SPACE, negated: true };
      case 'p':
      case 'P':
        return { ranges: this.parseProperty(at), negated: c === 'P' };
      default:
        return single(this.parseCharEscape(c, at, inClass));
    }
  }

  /** `{Name}` after `\p` or `\P`: a Unicode property as JavaScript's `u` flag knows it. */
  private parseProperty(at: number): CodePointRanges {
    const close = this.peekIs('{') ? this.source.indexOf(0x7d, this.position) : -1;
    if (close < 0) {
      fail(
        `Invalid \`grep\` pattern: \\p at ${at} needs a property in braces, e.g. \\p{L} (a letter) or \\p{Script=Greek}`,
      );
    }
    const name = String.fromCodePoint(...this.source.slice(this.position + 1, close));
    const ranges = unicodePropertyRanges(name);
    if (!ranges) {
      fail(
        `Invalid \`grep\` pattern: unknown Unicode property "${name}" at ${at}; use a name JavaScript knows, e.g. L, Lu, N, P, Script=Greek`,
      );
    }
    this.position = close + 1;
    return ranges;
  }

  private parseCharEscape(c: string, at: number, inClass: boolean): number {
    switch (c) {
      case 't':
        return 0x09;
      case 'n':
        return 0x0a;
      case 'v':
        return 0x0b;
      case 'f':
        return 0x0c;
      case 'r':
        return 0x0d;
      case '0':
        return 0;
      case 'b':
        if (inClass) return 0x08;
        break;
      case 'c': {
        const letter = this.source[this.position];
        if (letter !== undefined && /[A-Za-z]/.test(String.fromCodePoint(letter))) {
          this.position++;
          return letter % 32;
        }
        return 0x5c;
      }
      case 'x':
        return this.readHex(2) ?? 0x78;
      case 'u':
        return this.readUnicodeEscape(at);
    }
    return c.codePointAt(0)!; // identity escape: \. \/ \- …
  }

  private readUnicodeEscape(at: number): number {
    if (this.peekIs('{')) {
      const close = this.source.indexOf(0x7d, this.position);
      const digits = close < 0 ? '' : String.fromCodePoint(...this.source.slice(this.position + 1, close));
      const value = /^[0-9a-fA-F]{1,6}$/.test(digits) ? Number.parseInt(digits, 16) : Number.NaN;
      if (!(value <= MAX_CODE_POINT)) fail(`Invalid \`grep\` pattern: invalid \\u{…} escape at ${at}`);
      this.position = close + 1;
      return value;
    }
    return this.readHex(4) ?? 0x75;
  }

  private readHex(count: number): number | null {
    const digits = String.fromCodePoint(...this.source.slice(this.position, this.position + count));
    if (digits.length !== count || !/^[0-9a-fA-F]+$/.test(digits)) return null;
    this.position += count;
    return Number.parseInt(digits, 16);
  }

  private parseClass(at: number): CharSet {
    const negated = this.peekIs('^');
    if (negated) this.position++;
    const ranges: [number, number][] = [];
    for (;;) {
      if (this.atEnd()) fail(`Invalid \`grep\` pattern: unterminated character class at ${at}`);
      if (this.peekIs(']')) {
        this.position++;
        return { ranges: normalize(ranges), negated };
      }
      const low = this.parseClassAtom();
      if (
        this.peekIs('-') &&
        this.source[this.position + 1] !== 0x5d &&
        this.position + 1 < this.source.length
      ) {
        this.position++;
        const high = this.parseClassAtom();
        if (typeof low === 'number' && typeof high === 'number') {
          if (high < low) fail(`Invalid \`grep\` pattern: range out of order in character class at ${at}`);
          ranges.push([low, high]);
          continue;
        }
        // `[\d-z]`: a class escape cannot bound a range, so the `-` is literal.
        ranges.push(...asRanges(low), [0x2d, 0x2d], ...asRanges(high));
        continue;
      }
      ranges.push(...asRanges(low));
    }
  }

  /** One member of a class: a code point, or a set such as `\d`. */
  private parseClassAtom(): number | CharSet {
    const at = this.position;
    const c = this.source[this.position++]!;
    if (c !== 0x5c) return c;
    if (this.atEnd()) fail(`Invalid \`grep\` pattern: unterminated character class at ${at}`);
    const set = this.parseSetEscape(at, true);
    const only = set.ranges[0];
    return !set.negated && set.ranges.length === 1 && only && only[0] === only[1] ? only[0] : set;
  }

  private peekChar(): string | undefined {
    const c = this.source[this.position];
    return c === undefined ? undefined : String.fromCodePoint(c);
  }

  private peekIs(char: string): boolean {
    return this.source[this.position] === char.codePointAt(0);
  }
}

function literal(codePoint: number): PatternNode {
  return { type: 'set', set: single(codePoint) };
}

function single(codePoint: number): CharSet {
  return { ranges: [[codePoint, codePoint]], negated: false };
}

function asRanges(member: number | CharSet): [number, number][] {
  if (typeof member === 'number') return [[member, member]];
  return member.negated ? complement(member.ranges) : member.ranges.map(([lo, hi]) => [lo, hi]);
}
