/**
 * Cutting text to a bounded preview (DESIGN §6, completion events). Lengths are Unicode code points
 * ("chars"), never UTF-16 units, so a cut never splits a surrogate pair; where the runtime has
 * `Intl.Segmenter` a cut also never splits a grapheme (an emoji with a skin tone, a flag, a letter with
 * its combining accent), which can make the kept part a little shorter than asked.
 */

/** Which part of a text a preview keeps. */
export type KeepMode = 'head' | 'tail' | 'both';

export interface TruncateOptions {
  /** Which part survives: the start, the end, or half of each. */
  keep: KeepMode;
  /** Chars (code points) to keep; 0 disables truncation. */
  keepChars: number;
}

export interface Truncated {
  /** The preview; with `both` the head and tail are joined by a `…` line. */
  text: string;
  /** Chars of the original kept (the `…` separator is not counted). */
  kept: number;
  /** Chars in the original. */
  total: number;
  /** Whether anything was cut. */
  truncated: boolean;
}

/** The visible line between the head and tail of a `both` preview. */
export const ELISION_LINE = '…';

/** Keeps part of `text` per `options`; text within the bound comes back whole. */
export function truncate(text: string, options: TruncateOptions): Truncated {
  const total = countChars(text);
  const { keep, keepChars } = options;
  if (keepChars <= 0 || total <= keepChars) return { text, kept: total, total, truncated: false };
  if (keep === 'head') {
    const head = takeHead(text, keepChars);
    return { text: head, kept: countChars(head), total, truncated: true };
  }
  if (keep === 'tail') {
    const tail = takeTail(text, keepChars);
    return { text: tail, kept: countChars(tail), total, truncated: true };
  }
  const { headChars, tailChars } = splitBudget(keepChars);
  const head = takeHead(text, headChars);
  const tail = takeTail(text, tailChars);
  return {
    text: joinHeadTail(head, tail),
    kept: countChars(head) + countChars(tail),
    total,
    truncated: true,
  };
}

/** How a `both` preview shares `keepChars`: the head gets the odd char. */
export function splitBudget(keepChars: number): { headChars: number; tailChars: number } {
  const headChars = Math.ceil(keepChars / 2);
  return { headChars, tailChars: keepChars - headChars };
}

/** Joins a head and a tail with the elision on a line of its own. */
export function joinHeadTail(head: string, tail: string): string {
  const before = head === '' || head.endsWith('\n') ? '' : '\n';
  const after = tail.startsWith('\n') ? '' : '\n';
  return `${head}${before}${ELISION_LINE}${after}${tail}`;
}

/** Code points in `text` (a lone surrogate counts as one, as `for…of` does). */
export function countChars(text: string): number {
  let count = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    if (isHighSurrogate(text.charCodeAt(i)) && isLowSurrogate(text.charCodeAt(i + 1))) {
      count--;
      i++;
    }
  }
  return count;
}

/** At most the first `chars` code points of `text`, ending on a grapheme boundary. */
export function takeHead(text: string, chars: number): string {
  if (chars <= 0) return '';
  const end = graphemeBoundaryAtOrBefore(text, offsetAfterChars(text, chars));
  return text.slice(0, end);
}

/** At most the last `chars` code points of `text`, starting on a grapheme boundary. */
export function takeTail(text: string, chars: number): string {
  if (chars <= 0) return '';
  const start = graphemeBoundaryAtOrAfter(text, offsetBeforeLastChars(text, chars));
  return text.slice(start);
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}

/** Whether a UTF-16 index falls between the halves of a surrogate pair. */
function splitsPair(text: string, index: number): boolean {
  return (
    index > 0 &&
    index < text.length &&
    isLowSurrogate(text.charCodeAt(index)) &&
    isHighSurrogate(text.charCodeAt(index - 1))
  );
}

/** The UTF-16 index just after the first `chars` code points. */
function offsetAfterChars(text: string, chars: number): number {
  let index = 0;
  for (let seen = 0; seen < chars && index < text.length; seen++) {
    index += isHighSurrogate(text.charCodeAt(index)) && isLowSurrogate(text.charCodeAt(index + 1)) ? 2 : 1;
  }
  return index;
}

/** The UTF-16 index where the last `chars` code points begin. */
function offsetBeforeLastChars(text: string, chars: number): number {
  let index = text.length;
  for (let seen = 0; seen < chars && index > 0; seen++) {
    index -=
      isLowSurrogate(text.charCodeAt(index - 1)) && isHighSurrogate(text.charCodeAt(index - 2)) ? 2 : 1;
  }
  return index;
}

// Grapheme rules are local, so segmenting a window around the cut finds the right boundary without
// segmenting (and allocating for) a whole transcript. The window start is taken as a boundary; a cluster
// longer than the window falls back to the code point cut.
const GRAPHEME_WINDOW_UNITS = 64;
let segmenter: Intl.Segmenter | null | undefined;

function graphemeSegmenter(): Intl.Segmenter | null {
  if (segmenter === undefined) {
    segmenter =
      typeof Intl.Segmenter === 'function'
        ? new Intl.Segmenter(undefined, { granularity: 'grapheme' })
        : null;
  }
  return segmenter;
}

function windowAround(text: string, index: number): { from: number; to: number } {
  let from = Math.max(0, index - GRAPHEME_WINDOW_UNITS);
  if (splitsPair(text, from)) from--;
  let to = Math.min(text.length, index + GRAPHEME_WINDOW_UNITS);
  if (splitsPair(text, to)) to++;
  return { from, to };
}

function graphemeBoundaryAtOrBefore(text: string, index: number): number {
  const seg = graphemeSegmenter();
  if (!seg || index <= 0 || index >= text.length) return index;
  const { from, to } = windowAround(text, index);
  let best = -1;
  for (const { index: at } of seg.segment(text.slice(from, to))) {
    if (from + at > index) break;
    if (from + at > from || from === 0) best = from + at;
  }
  return best < 0 ? index : best;
}

function graphemeBoundaryAtOrAfter(text: string, index: number): number {
  const seg = graphemeSegmenter();
  if (!seg || index <= 0 || index >= text.length) return index;
  const { from, to } = windowAround(text, index);
  for (const { index: at } of seg.segment(text.slice(from, to))) {
    if (from + at >= index && (from + at > from || from === 0)) return from + at;
  }
  return to === text.length ? to : index;
}
