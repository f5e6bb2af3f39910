/**
 * Sets of code points for the grep engine: the ranges behind `\d`, `\w`, `\s` and `.`, range
 * arithmetic for classes, and the membership test (with case folding for `(?i)`).
 */

/** Inclusive code point ranges, sorted and merged. */
export type CodePointRanges = ReadonlyArray<readonly [number, number]>;

/** A set of code points; `negated` matches every code point outside `ranges`. */
export interface CharSet {
  ranges: CodePointRanges;
  negated: boolean;
}

export const MAX_CODE_POINT = 0x10ffff;
export const DIGIT: CodePointRanges = [[0x30, 0x39]];
export const WORD: CodePointRanges = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
];
export const SPACE: CodePointRanges = normalize([
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
]);
export const LINE_TERMINATORS: CodePointRanges = [
  [0x0a, 0x0a],
  [0x0d, 0x0d],
  [0x2028, 0x2029],
];

/** Every code point outside `ranges` (which must be normalized). */
export function complement(ranges: CodePointRanges): [number, number][] {
  const out: [number, number][] = [];
  let next = 0;
  for (const [lo, hi] of ranges) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_CODE_POINT) out.push([next, MAX_CODE_POINT]);
  return out;
}

/** Sorts and merges ranges that touch or overlap. */
export function normalize(ranges: ReadonlyArray<readonly [number, number]>): [number, number][] {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [lo, hi] of sorted) {
    const last = out[out.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

/** `\w` as `\b` sees it: ASCII letters, digits and `_`. */
export function isWordChar(codePoint: number): boolean {
  return (
    (codePoint >= 0x30 && codePoint <= 0x39) ||
    (codePoint >= 0x41 && codePoint <= 0x5a) ||
    codePoint === 0x5f ||
    (codePoint >= 0x61 && codePoint <= 0x7a)
  );
}

/** Whether a set takes a char; with `ignoreCase` a char is in the set when any of its cases is. */
export function setAccepts(set: CharSet, codePoint: number, ignoreCase: boolean): boolean {
  return (inRanges(set, codePoint) || (ignoreCase && otherCaseInRanges(set, codePoint))) !== set.negated;
}

function otherCaseInRanges(set: CharSet, codePoint: number): boolean {
  const char = String.fromCodePoint(codePoint);
  for (const variant of [char.toLowerCase(), char.toUpperCase()]) {
    const folded = variant.codePointAt(0)!;
    // Only one-to-one case mappings (`ß` upper-cases to `SS`, which a single char cannot match).
    if (folded !== codePoint && variant.length === String.fromCodePoint(folded).length) {
      if (inRanges(set, folded)) return true;
    }
  }
  return false;
}

function inRanges(set: CharSet, codePoint: number): boolean {
  const { ranges } = set;
  let low = 0;
  let high = ranges.length - 1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    const [from, to] = ranges[mid]!;
    if (codePoint < from) high = mid - 1;
    else if (codePoint > to) low = mid + 1;
    else return true;
  }
  return false;
}

/** Property names and values as `\p{…}` spells them: `L`, `Letter`, `Script=Greek`, `sc=Latn`. */
const PROPERTY_NAME = /^[A-Za-z_]+(?:=[A-Za-z_0-9]+)?$/;
/** Valid names only (a finite set), so the cache is bounded whatever callers send. */
const propertyCache = new Map<string, CodePointRanges>();

/**
 * The code points of a Unicode property (`\p{L}`, `\p{Script=Greek}`), as JavaScript's own `u`-mode
 * RegExp defines them, so grep and `RegExp` agree; undefined when the name is not a property. Worked
 * out once per name: one regex pass over a string of every code point (surrogates tested alone).
 */
export function unicodePropertyRanges(name: string): CodePointRanges | undefined {
  const cached = propertyCache.get(name);
  if (cached !== undefined) return cached;
  let runs: RegExp;
  try {
    if (!PROPERTY_NAME.test(name)) throw new SyntaxError(name);
    runs = new RegExp(`\\p{${name}}+`, 'gu');
  } catch {
    return undefined;
  }
  const ranges: [number, number][] = [];
  for (const text of everyCodePoint()) {
    runs.lastIndex = 0;
    for (let found = runs.exec(text); found; found = runs.exec(text)) {
      const run = found[0];
      const lastUnits = run.length > 1 && isLowSurrogate(run.charCodeAt(run.length - 1)) ? 2 : 1;
      ranges.push([run.codePointAt(0)!, run.codePointAt(run.length - lastUnits)!]);
    }
  }
  const single = new RegExp(`^\\p{${name}}$`, 'u');
  for (let c = 0xd800; c <= 0xdfff; c++) if (single.test(String.fromCharCode(c))) ranges.push([c, c]);
  const merged = normalize(ranges);
  propertyCache.set(name, merged);
  return merged;
}

let allCodePoints: readonly string[] | undefined;

/** Every code point but the surrogates, as two strings (before and after them), built once. */
function everyCodePoint(): readonly string[] {
  if (!allCodePoints) {
    const build = (from: number, to: number): string => {
      const parts: string[] = [];
      for (let start = from; start <= to; start += 4096) {
        const points: number[] = [];
        for (let c = start; c <= Math.min(to, start + 4095); c++) points.push(c);
        parts.push(String.fromCodePoint(...points));
      }
      return parts.join('');
    };
    allCodePoints = [build(0, 0xd7ff), build(0xe000, MAX_CODE_POINT)];
  }
  return allCodePoints;
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}
