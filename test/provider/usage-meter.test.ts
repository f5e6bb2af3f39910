import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_LINE_BYTES, UsageMeter } from '../../src/provider/usage-meter.js';
import { numRuns } from '../helpers/fc-runs.js';

const bytes = (text: string) => new TextEncoder().encode(text);
const sse = (...events: unknown[]) => events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('');

function meter(contentType: string, body: string, cuts: number[] = []): ReturnType<UsageMeter['end']> {
  const m = new UsageMeter(contentType);
  const data = bytes(body);
  let at = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    m.push(data.subarray(at, cut));
    at = cut;
  }
  m.push(data.subarray(at));
  return m.end();
}

const anthropicStream = [
  'event: message_start\n',
  sse({
    type: 'message_start',
    message: { id: 'm', usage: { input_tokens: 120, cache_read_input_tokens: 30, output_tokens: 1 } },
  }),
  'event: content_block_delta\n',
  sse({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hello' } }),
  sse({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 42 } }),
  sse({ type: 'message_stop' }),
].join('');

describe('UsageMeter', () => {
  it.each([
    {
      name: 'Anthropic, whole body (cache reads count as input)',
      type: 'application/json',
      body: JSON.stringify({ usage: { input_tokens: 10, cache_creation_input_tokens: 5, output_tokens: 7 } }),
      want: { inputTokens: 15, outputTokens: 7 },
    },
    {
      name: 'Anthropic, streamed: message_start then message_delta',
      type: 'text/event-stream; charset=utf-8',
      body: anthropicStream,
      want: { inputTokens: 150, outputTokens: 42 },
    },
    {
      name: 'OpenAI Chat Completions, whole body',
      type: 'application/json',
      body: JSON.stringify({
        choices: [],
        usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 },
      }),
      want: { inputTokens: 9, outputTokens: 3 },
    },
    {
      name: 'OpenAI Chat Completions, streamed: the final usage chunk and [DONE]',
      type: 'text/event-stream',
      body: `${sse({ choices: [{ delta: { content: 'hi' } }], usage: null }, { choices: [], usage: { prompt_tokens: 11, completion_tokens: 4 } })}data: [DONE]\n\n`,
      want: { inputTokens: 11, outputTokens: 4 },
    },
    {
      name: 'OpenAI Responses, streamed: response.completed',
      type: 'text/event-stream',
      body: sse(
        { type: 'response.output_text.delta', delta: 'x' },
        { type: 'response.completed', response: { usage: { input_tokens: 21, output_tokens: 8 } } },
      ),
      want: { inputTokens: 21, outputTokens: 8 },
    },
    {
      name: 'Gemini, streamed: cumulative usageMetadata, the last wins',
      type: 'text/event-stream',
      body: sse(
        { candidates: [], usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 1 } },
        {
          candidates: [],
          usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 6, thoughtsTokenCount: 2 },
        },
      ),
      want: { inputTokens: 5, outputTokens: 8 },
    },
    {
      name: 'Gemini, whole body',
      type: 'application/json; charset=UTF-8',
      body: JSON.stringify({ usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2 } }),
      want: { inputTokens: 3, outputTokens: 2 },
    },
    {
      name: 'an error body counts nothing',
      type: 'application/json',
      body: '{"error":{}}',
      want: { inputTokens: 0, outputTokens: 0 },
    },
    {
      name: 'garbage counts nothing',
      type: 'text/event-stream',
      body: 'data: {nope\n\n',
      want: { inputTokens: 0, outputTokens: 0 },
    },
  ])('$name', ({ type, body, want }) => {
    expect(meter(type, body)).toEqual(want);
  });

  it('reads the same totals however the stream is cut into chunks (even inside a UTF-8 character)', () => {
    const body = anthropicStream.replace('hello', 'héllo ✓ 😀');
    const length = bytes(body).length;
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: length - 1 }), { maxLength: 30 }), (cuts) => {
        expect(meter('text/event-stream', body, cuts)).toEqual({ inputTokens: 150, outputTokens: 42 });
      }),
      { numRuns: numRuns(500) },
    );
  });

  it('skips a line longer than its bound and still reads the usage after it', () => {
    const huge = `data: ${JSON.stringify({ delta: { text: 'x'.repeat(MAX_LINE_BYTES * 2) } })}\n\n`;
    const body = huge + sse({ type: 'message_delta', usage: { input_tokens: 1, output_tokens: 2 } });
    const cuts = Array.from({ length: 40 }, (_, i) => (i + 1) * 16_384);
    expect(meter('text/event-stream', body, cuts)).toEqual({ inputTokens: 1, outputTokens: 2 });
  });
});
