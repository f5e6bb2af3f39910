import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonStringCap } from '../../src/runners/json-string-cap.js';
import { numRuns } from '../helpers/fc-runs.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Feeds `text` through a cap in pieces of `step` bytes and decodes what comes out. */
function capped(text: string, maxChars: number, step = 7): string {
  const cap = new JsonStringCap(maxChars);
  const bytes = encoder.encode(text);
  const parts: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += step) parts.push(cap.push(bytes.subarray(i, i + step)).slice());
  return decoder.decode(Buffer.concat(parts));
}

/** The value with every string cut to its first `maxChars` code units... as JSON.parse sees chars. */
function cutStrings(value: unknown, maxChars: number): unknown {
  if (typeof value === 'string') return cutChars(value, maxChars);
  if (Array.isArray(value)) return value.map((v) => cutStrings(v, maxChars));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [cutChars(k, maxChars), cutStrings(v, maxChars)]),
    );
  }
  return value;
}

// A char of the cap is a code point written raw, or one escape (a surrogate pair escaped is two).
function cutChars(text: string, maxChars: number): string {
  return [...text].slice(0, maxChars).join('');
}

describe('JsonStringCap', () => {
  it('keeps a huge string up to the cap and the line valid JSON', () => {
    const line = `{"jsonrpc":"2.0","method":"session/update","params":{"update":{"content":{"type":"text","text":"${'x'.repeat(100_000)}"}}}}\n`;
    const out = capped(line, 1000, 4096);
    const parsed = JSON.parse(out) as { params: { update: { content: { text: string } } } };
    expect(parsed.params.update.content.text).toBe('x'.repeat(1000));
    expect(out.endsWith('}\n')).toBe(true);
  });

  it('never cuts inside an escape or a UTF-8 sequence', () => {
    const text = 'é\\n\\"\\u00e9😀'.repeat(50);
    for (let max = 0; max < 40; max++) {
      const out = capped(`["${text}"]\n`, max, 3);
      expect(() => JSON.parse(out)).not.toThrow();
    }
  });

  it('passes lines whose strings fit unchanged, in any pieces (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 1, max: 50 }), (value, step) => {
        const line = `${JSON.stringify(value)}\n`;
        expect(capped(line, 1_000_000, step)).toBe(line);
      }),
      { numRuns: numRuns(300) },
    );
  });

  it('cuts every string of any JSON value to its first chars and keeps it parseable (property)', () => {
    fc.assert(
      fc.property(
        fc.jsonValue(),
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 1, max: 50 }),
        (value, max, step) => {
          // Raw non-ASCII and escaped ASCII control chars count one each, as the cap counts them.
          const line = JSON.stringify(value);
          const out = capped(`${line}\n`, max, step);
          expect(JSON.parse(out)).toEqual(cutStrings(JSON.parse(line), max));
        },
      ),
      { numRuns: numRuns(300) },
    );
  });
});
