import { afterEach, describe, expect, it } from 'vitest';
import { type FakeProvider, startFakeProvider } from '../../src/fake-provider/fake-provider.js';

/** The scripted provider over real HTTP with plain `fetch`: each wire format, errors, hangs, recording. */

let provider: FakeProvider | undefined;
afterEach(async () => {
  await provider?.close();
  provider = undefined;
});

async function sse(res: Response): Promise<{ event?: string; data: string }[]> {
  const text = await res.text();
  return text
    .split('\n\n')
    .filter((frame) => frame.trim() !== '')
    .map((frame) => {
      const event = /^event: (.*)$/m.exec(frame)?.[1];
      const data = /^data: (.*)$/m.exec(frame)?.[1] ?? '';
      return event === undefined ? { data } : { event, data };
    });
}

// biome-ignore lint/suspicious/noExplicitAny: the tests read arbitrary JSON bodies
const json = async (res: Response): Promise<any> => res.json();

const post = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('the fake provider over HTTP', () => {
  it('refuses a non-loopback host', async () => {
    await expect(startFakeProvider({ host: '0.0.0.0' })).rejects.toThrow(/loopback/);
  });

  it('streams an Anthropic message and counts tokens', async () => {
    provider = await startFakeProvider({ reply: 'Hi there' });
    const res = await post(`${provider.url}/v1/messages`, {
      model: 'claude-x',
      stream: true,
      messages: [{ role: 'user', content: 'hello' }],
    });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const frames = await sse(res);
    expect(frames.map((f) => f.event)).toEqual([
      'message_start',
      'content_block_start',
      ...frames.filter((f) => f.event === 'content_block_delta').map(() => 'content_block_delta'),
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const text = frames
      .filter((f) => f.event === 'content_block_delta')
      .map((f) => JSON.parse(f.data).delta.text)
      .join('');
    expect(text).toBe('Hi there');
    const delta = JSON.parse(frames.find((f) => f.event === 'message_delta')?.data ?? '{}');
    expect(delta.delta.stop_reason).toBe('end_turn');
    expect(delta.usage.output_tokens).toBeGreaterThan(0);

    const count = await post(`${provider.url}/v1/messages/count_tokens`, { messages: [] });
    expect(await json(count)).toEqual({ input_tokens: expect.any(Number) });
    expect(provider.requests.map((r) => r.api)).toEqual(['anthropic', 'anthropic-count-tokens']);
  });

  it('streams an Anthropic tool_use for a #fake shell line', async () => {
    provider = await startFakeProvider();
    const frames = await sse(
      await post(`${provider.url}/v1/messages`, {
        model: 'm',
        stream: true,
        tools: [{ name: 'Bash', input_schema: { properties: { command: { type: 'string' } } } }],
        messages: [{ role: 'user', content: [{ type: 'text', text: '#fake shell="echo hi"' }] }],
      }),
    );
    const start = JSON.parse(frames.find((f) => f.event === 'content_block_start')?.data ?? '{}');
    expect(start.content_block).toMatchObject({ type: 'tool_use', name: 'Bash' });
    const delta = JSON.parse(frames.find((f) => f.event === 'content_block_delta')?.data ?? '{}');
    expect(JSON.parse(delta.delta.partial_json)).toEqual({ command: 'echo hi' });
    expect(JSON.parse(frames.find((f) => f.event === 'message_delta')?.data ?? '{}').delta.stop_reason).toBe(
      'tool_use',
    );
    expect(provider.requests[0]).toMatchObject({ reply: 'tool', detail: 'Bash' });
  });

  it('streams an OpenAI Responses answer ending with response.completed and usage', async () => {
    provider = await startFakeProvider({ reply: 'From responses' });
    const frames = await sse(
      await post(`${provider.url}/v1/responses`, {
        model: 'gpt-x',
        stream: true,
        input: [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }] }],
      }),
    );
    const types = frames.map((f) => JSON.parse(f.data).type);
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    const deltas = frames
      .map((f) => JSON.parse(f.data))
      .filter((d) => d.type === 'response.output_text.delta');
    expect(deltas.map((d) => d.delta).join('')).toBe('From responses');
    expect(JSON.parse(frames.at(-1)?.data ?? '{}').response.usage.total_tokens).toBeGreaterThan(0);
  });

  it('calls a tool Codex offers inside a namespace by its own name and the namespace, then sees it called', async () => {
    provider = await startFakeProvider();
    const tools = [
      {
        type: 'namespace',
        name: 'mcp__crew',
        tools: [{ type: 'function', name: 'spawn_run', parameters: { type: 'object' } }],
      },
    ];
    const ask = '#fake tool=spawn_run args=\'{"task":"x"}\' then="spawned"';
    const input = [{ role: 'user', content: [{ type: 'input_text', text: ask }] }];
    const first = await json(await post(`${provider.url}/v1/responses`, { model: 'm', tools, input }));
    expect(first.output[0]).toMatchObject({
      type: 'function_call',
      name: 'spawn_run',
      namespace: 'mcp__crew',
      arguments: '{"task":"x"}',
    });
    expect(provider.requests[0]?.request?.tools.map((t) => t.name)).toEqual(['mcp__crew__spawn_run']);
    // The call comes back in the next request's input, with its output: the script answers `then`.
    const call = {
      type: 'function_call',
      name: 'spawn_run',
      namespace: 'mcp__crew',
      call_id: 'c1',
      arguments: '{}',
    };
    const output = { type: 'function_call_output', call_id: 'c1', output: 'ok' };
    const second = await json(
      await post(`${provider.url}/v1/responses`, { model: 'm', tools, input: [...input, call, output] }),
    );
    expect(second.output[0].content[0].text).toBe('spawned');
    expect(provider.requests[1]?.request?.calledTools).toEqual(['mcp__crew__spawn_run']);
  });

  it('streams Chat Completions with a final usage chunk and [DONE]', async () => {
    provider = await startFakeProvider({ reply: 'From chat' });
    const frames = await sse(
      await post(`${provider.url}/v1/chat/completions`, {
        model: 'gpt-x',
        stream: true,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    );
    expect(frames.at(-1)?.data).toBe('[DONE]');
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f.data));
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { total_tokens: expect.any(Number) } });
    expect(
      chunks
        .flatMap((c) => c.choices.map((ch: { delta: { content?: string } }) => ch.delta.content ?? ''))
        .join(''),
    ).toBe('From chat');
    expect(chunks.some((c) => c.choices[0]?.finish_reason === 'stop')).toBe(true);
  });

  it('answers Gemini generateContent, streamGenerateContent?alt=sse and countTokens', async () => {
    provider = await startFakeProvider({ reply: 'From gemini' });
    const contents = [{ role: 'user', parts: [{ text: 'hi' }] }];
    const once = await json(
      await post(`${provider.url}/v1beta/models/gemini-x:generateContent`, { contents }),
    );
    expect(once.candidates[0].content.parts[0].text).toBe('From gemini');
    const frames = await sse(
      await post(`${provider.url}/v1beta/models/gemini-x:streamGenerateContent?alt=sse`, { contents }),
    );
    const chunks = frames.map((f) => JSON.parse(f.data));
    expect(chunks.map((c) => c.candidates[0].content.parts[0].text).join('')).toBe('From gemini');
    expect(chunks.at(-1)).toMatchObject({ candidates: [{ finishReason: 'STOP' }], usageMetadata: {} });
    const count = await json(await post(`${provider.url}/v1beta/models/gemini-x:countTokens`, { contents }));
    expect(count.totalTokens).toBeGreaterThan(0);
    const schema = {
      type: 'object',
      properties: { next_speaker: { enum: ['user', 'model'] } },
      required: ['next_speaker'],
    };
    const side = await json(
      await post(`${provider.url}/v1beta/models/gemini-x:generateContent`, {
        contents,
        generationConfig: { responseJsonSchema: schema },
      }),
    );
    expect(JSON.parse(side.candidates[0].content.parts[0].text)).toEqual({ next_speaker: 'user' });
  });

  it('answers 429 with retry-after and 529 overloaded in each format', async () => {
    provider = await startFakeProvider();
    const limited = await post(`${provider.url}/v1/messages`, {
      model: 'm',
      messages: [{ role: 'user', content: '#fake status=429 retry_after=3' }],
    });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('3');
    expect((await json(limited)).error.type).toBe('rate_limit_error');
    const overloaded = await post(`${provider.url}/v1/messages`, {
      model: 'm',
      messages: [{ role: 'user', content: '#fake status=529' }],
    });
    expect(overloaded.status).toBe(529);
    expect((await json(overloaded)).error.type).toBe('overloaded_error');
    const gemini = await post(`${provider.url}/v1beta/models/g:generateContent`, {
      contents: [{ role: 'user', parts: [{ text: '#fake status=503' }] }],
    });
    expect(gemini.status).toBe(503);
    expect((await json(gemini)).error.status).toBe('UNAVAILABLE');
    const openai = await post(`${provider.url}/v1/responses`, { model: 'm', input: '#fake status=429' });
    expect((await json(openai)).error.code).toBe('rate_limit_exceeded');
  });

  it('holds a #fake hang request open until close()', async () => {
    provider = await startFakeProvider();
    const pending = post(`${provider.url}/v1/messages`, {
      model: 'm',
      stream: true,
      messages: [{ role: 'user', content: '#fake hang' }],
    }).then(
      () => 'answered',
      () => 'closed',
    );
    // The request is recorded as hung before any answer.
    for (let i = 0; i < 100 && provider.requests.length === 0; i++) await new Promise((r) => setImmediate(r));
    expect(provider.requests[0]?.reply).toBe('hang');
    await provider.close();
    expect(await pending).toBe('closed');
    provider = undefined;
  });

  it('records a bounded number of requests and 404s unknown routes', async () => {
    provider = await startFakeProvider({ maxRecorded: 2 });
    for (let i = 0; i < 3; i++) await post(`${provider.url}/nope/${i}`, {});
    expect(provider.requests.map((r) => r.url)).toEqual(['/nope/1', '/nope/2']);
    expect((await post(`${provider.url}/nope`, {})).status).toBe(404);
  });
});
