import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CHUNK_MAX_CHARS, escapeSlackText, UPDATE_MAX_BYTES } from '../../src/slack/slack-chunks.js';
import { splitResult, splitResultParts } from '../../src/slack/slack-result-split.js';
import { numRuns } from '../helpers/fc-runs.js';

/** Fence lines in a message (``` at a line's start). */
const fenceLines = (message: string) =>
  message.split('\n').filter((l) => l.trimStart().startsWith('```')).length;

function withinLimits(message: string): void {
  expect(message.length).toBeLessThanOrEqual(CHUNK_MAX_CHARS);
  expect(Buffer.byteLength(escapeSlackText(message), 'utf8')).toBeLessThanOrEqual(UPDATE_MAX_BYTES);
}

describe('splitting a result into Slack messages (issue 28)', () => {
  it('a 20,000-char result of lines: messages of at most 3,900 chars, each ending at a line end, in order', () => {
    const text = Array.from({ length: 400 }, (_, i) => `line ${i} ${'x'.repeat(40)}`).join('\n');
    const messages = splitResult(text);
    expect(messages.length).toBe(Math.ceil(text.length / 3900));
    expect(messages.join('')).toBe(text);
    for (const message of messages.slice(0, -1)) {
      withinLimits(message);
      expect(message.endsWith('\n')).toBe(true);
    }
  });

  it('closes a code fence a message ends inside and reopens it, language kept, in the next', () => {
    const prose = Array.from({ length: 60 }, (_, i) => `prose line ${i} ${'p'.repeat(40)}`).join('\n');
    const code = Array.from({ length: 100 }, (_, i) => `const x${i} = ${'1 + '.repeat(10)}1;`).join('\n');
    const text = `${prose}\n\`\`\`ts\n${code}\n\`\`\`\nafter the code`;
    const messages = splitResult(text);
    expect(messages.length).toBeGreaterThan(1);
    const inside = messages.findIndex((m) => m.includes('```ts'));
    expect(messages[inside]!.endsWith('\n```')).toBe(true);
    expect(messages[inside + 1]!.startsWith('```ts\nconst x')).toBe(true);
    for (const message of messages) {
      withinLimits(message);
      expect(fenceLines(message) % 2, message.slice(0, 60)).toBe(0);
    }
    expect(
      splitResultParts(text)
        .map((p) => p.body)
        .join(''),
    ).toBe(text);
  });

  it('cuts a line longer than a message mid-line, and an empty result is one empty message', () => {
    const text = `${'y'.repeat(9000)}\nend`;
    const messages = splitResult(text);
    expect(messages.map((m) => m.length)).toEqual([3900, 3900, 1204]);
    expect(messages.join('')).toBe(text);
    expect(splitResult('')).toEqual(['']);
  });

  it('any text: within the limits, fences balanced in every message, the text given back (property)', () => {
    const line = fc.oneof(
      fc.constantFrom('```', '```python', '  ```', 'a & b < c > d', '😀 emoji line', ''),
      fc.string({ maxLength: 120 }),
      fc.string({ minLength: 3000, maxLength: 5000 }),
    );
    fc.assert(
      fc.property(fc.array(line, { maxLength: 60 }), (lines) => {
        const text = lines.join('\n');
        const parts = splitResultParts(text);
        const messages = parts.map((p) => `${p.reopen}${p.body}${p.close}`);
        expect(splitResult(text)).toEqual(messages);
        for (const message of messages) withinLimits(message);
        for (const message of messages.slice(0, -1)) expect(fenceLines(message) % 2).toBe(0);
        expect(parts.map((p) => p.body).join('')).toBe(text);
        for (const part of parts) expect(['', '\n```']).toContain(part.close);
      }),
      { numRuns: numRuns(300) },
    );
  });
});
