import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countChars, type KeepMode, takeHead, takeTail, truncate } from '../../src/core/truncate.js';

const hasLoneSurrogate = (text: string): boolean =>
  /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);

describe('truncate', () => {
  const ten = '0123456789';

  it.each<[KeepMode, number, string]>([
    ['head', 9, '012345678'],
    ['tail', 9, '123456789'],
    ['both', 9, '01234\n…\n6789'],
  ])('keep=%s cuts one char above the bound (10 chars, keep %i)', (keep, keepChars, expected) => {
    expect(truncate(ten, { keep, keepChars })).toEqual({
      text: expected,
      kept: 9,
      total: 10,
      truncated: true,
    });
  });

  it.each<KeepMode>(['head', 'tail', 'both'])('keep=%s leaves text exactly at the bound whole', (keep) => {
    expect(truncate(ten, { keep, keepChars: 10 })).toEqual({
      text: ten,
      kept: 10,
      total: 10,
      truncated: false,
    });
  });

  it.each<KeepMode>(['head', 'tail', 'both'])('keep=%s leaves text one below the bound whole', (keep) => {
    expect(truncate(ten, { keep, keepChars: 11 })).toEqual({
      text: ten,
      kept: 10,
      total: 10,
      truncated: false,
    });
  });

  it('keepChars 0 disables truncation', () => {
    const long = 'x'.repeat(100_000);
    expect(truncate(long, { keep: 'head', keepChars: 0 })).toEqual({
      text: long,
      kept: 100_000,
      total: 100_000,
      truncated: false,
    });
  });

  it('handles empty text', () => {
    for (const keep of ['head', 'tail', 'both'] as const) {
      expect(truncate('', { keep, keepChars: 5 })).toEqual({ text: '', kept: 0, total: 0, truncated: false });
    }
  });

  it('counts code points, not UTF-16 units', () => {
    // 4 emoji (8 units) and 3 CJK chars: 7 chars.
    const text = '😀😁😂🤣漢字語';
    expect(countChars(text)).toBe(7);
    expect(truncate(text, { keep: 'head', keepChars: 7 }).truncated).toBe(false);
    expect(truncate(text, { keep: 'head', keepChars: 3 })).toEqual({
      text: '😀😁😂',
      kept: 3,
      total: 7,
      truncated: true,
    });
    expect(truncate(text, { keep: 'tail', keepChars: 4 }).text).toBe('🤣漢字語');
  });

  it('never splits an emoji with a skin tone modifier, a flag or a ZWJ family', () => {
    // 👍🏽 is two code points (thumbs up + medium skin tone): a cut after the first would leave a bare thumb.
    expect(truncate('ab👍🏽cd', { keep: 'head', keepChars: 3 }).text).toBe('ab');
    expect(truncate('ab👍🏽cd', { keep: 'head', keepChars: 4 }).text).toBe('ab👍🏽');
    expect(truncate('ab👍🏽cd', { keep: 'tail', keepChars: 3 }).text).toBe('cd');
    expect(truncate('x🇯🇵y', { keep: 'head', keepChars: 2 }).text).toBe('x');
    const family = '👨‍👩‍👧'; // 5 code points joined by ZWJ
    expect(truncate(`${family}!`, { keep: 'head', keepChars: 3 }).text).toBe('');
    expect(truncate(`!${family}`, { keep: 'tail', keepChars: 4 }).text).toBe('');
    expect(truncate(`!${family}`, { keep: 'tail', keepChars: 5 }).text).toBe(family);
  });

  it('reports kept as the chars actually kept when a grapheme pulls the cut back', () => {
    expect(truncate('ab👍🏽cd', { keep: 'head', keepChars: 3 })).toMatchObject({ kept: 2, total: 6 });
  });

  it('keeps half head and half tail with a … line between, the head taking the odd char', () => {
    expect(truncate('line one\nline two\nline three', { keep: 'both', keepChars: 9 }).text).toBe(
      'line \n…\nhree',
    );
    // A head that ends a line and a tail that starts one add no empty lines around the separator.
    expect(truncate('abc\ndefghij\nklm', { keep: 'both', keepChars: 8 }).text).toBe('abc\n…\nklm');
  });

  it('never splits a surrogate pair and never keeps more than asked (property)', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 60 }),
        fc.integer({ min: 0, max: 70 }),
        fc.constantFrom<KeepMode>('head', 'tail', 'both'),
        (text, keepChars, keep) => {
          const result = truncate(text, { keep, keepChars });
          expect(result.total).toBe([...text].length);
          if (!hasLoneSurrogate(text)) expect(hasLoneSurrogate(result.text)).toBe(false);
          if (keepChars === 0 || result.total <= keepChars) {
            expect(result).toEqual({ text, kept: result.total, total: result.total, truncated: false });
            return;
          }
          expect(result.kept).toBeLessThanOrEqual(keepChars);
          if (keep === 'head') expect(text.startsWith(result.text)).toBe(true);
          if (keep === 'tail') expect(text.endsWith(result.text)).toBe(true);
        },
      ),
    );
  });

  it('takeHead and takeTail on graphemes (property): prefix/suffix made of whole graphemes', () => {
    const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
    const graphemes = (text: string) => Array.from(segmenter.segment(text), (s) => s.segment);
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 30 }),
        fc.integer({ min: 1, max: 40 }),
        (text, chars) => {
          const all = graphemes(text);
          const head = takeHead(text, chars);
          const tail = takeTail(text, chars);
          expect(countChars(head)).toBeLessThanOrEqual(chars);
          expect(countChars(tail)).toBeLessThanOrEqual(chars);
          const headParts = graphemes(head);
          expect(headParts).toEqual(all.slice(0, headParts.length));
          const tailParts = graphemes(tail);
          expect(tailParts).toEqual(all.slice(all.length - tailParts.length));
        },
      ),
    );
  });
});
