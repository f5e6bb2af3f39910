import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CHUNK_MAX_CHARS,
  chunkText,
  escapeSlackText,
  SECTION_MAX_CHARS,
  sectionsOf,
  UPDATE_MAX_BYTES,
  unescapeSlackText,
} from '../../src/slack/slack-chunks.js';
import { numRuns } from '../helpers/fc-runs.js';

function withinLimits(chunk: string): void {
  expect(chunk.length).toBeLessThanOrEqual(CHUNK_MAX_CHARS);
  expect(Buffer.byteLength(escapeSlackText(chunk), 'utf8')).toBeLessThanOrEqual(UPDATE_MAX_BYTES);
  for (const section of sectionsOf(chunk)) expect(section.length).toBeLessThanOrEqual(SECTION_MAX_CHARS);
  expect(sectionsOf(chunk).join('')).toBe(chunk);
}

describe('chunking a result for Slack', () => {
  it('a 20,000-character ASCII text: chunks of at most 3,900 that reassemble exactly', () => {
    const text = Array.from({ length: 400 }, (_, i) => `line ${i} ${'x'.repeat(40)}`).join('\n');
    const chunks = chunkText(text);
    expect(chunks.length).toBeGreaterThan(4);
    expect(chunks.join('')).toBe(text);
    for (const chunk of chunks) withinLimits(chunk);
    // A cut near the limit lands after a line end.
    expect(chunks[0]?.endsWith('\n')).toBe(true);
  });

  it('multi-byte and escaped characters shrink a chunk to the byte limit, never cutting a pair', () => {
    const text = '😀é&<'.repeat(3000);
    const chunks = chunkText(text);
    expect(chunks.join('')).toBe(text);
    for (const chunk of chunks) {
      withinLimits(chunk);
      expect(
        chunk.charCodeAt(chunk.length - 1) >= 0xd800 && chunk.charCodeAt(chunk.length - 1) <= 0xdbff,
      ).toBe(false);
    }
    // 4,000 bytes bind before 3,900 characters here.
    expect(chunks[0]?.length).toBeLessThan(CHUNK_MAX_CHARS);
  });

  it('escaping round-trips', () => {
    expect(unescapeSlackText(escapeSlackText('a & <b> &amp;'))).toBe('a & <b> &amp;');
  });

  it('property: any text reassembles and every chunk is within every limit', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 12_000 }), (text) => {
        const chunks = chunkText(text);
        expect(chunks.join('')).toBe(text);
        for (const chunk of chunks) withinLimits(chunk);
      }),
      { numRuns: numRuns(200) },
    );
  });
});
