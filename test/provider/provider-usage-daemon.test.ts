import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeProvider, startFakeProvider } from '../../src/fake-provider/fake-provider.js';
import { api, type DaemonProcess, pollFor, startDaemonProcess } from '../helpers/daemon-process.js';

/**
 * Per-run usage through a real daemon (issue 17): an agent of each API shape (Anthropic Messages, OpenAI
 * Chat Completions and Responses, Gemini; streamed and not) calls the scripted provider through the
 * gateway, reads the usage the provider answered, and prints it; the run's `usage` in `spawn_status` and
 * `spawn_list` (read back from the store) says the same, with its requests and 429s.
 */

/** `node agent.mjs <shape> "<stream 0|1> <calls>" <task>`: `calls` model calls, then the usage it saw. */
const AGENT = `
const [shape, modes = '', task = ''] = process.argv.slice(2);
const [streamFlag, callsText] = modes.split(' ');
const stream = streamFlag === '1';
const env = { anthropic: 'ANTHROPIC_BASE_URL', chat: 'OPENAI_BASE_URL', responses: 'OPENAI_BASE_URL', gemini: 'GOOGLE_GEMINI_BASE_URL' }[shape];
const base = process.env[env];
if (!base) { console.error('no ' + env); process.exit(2); }
const call = {
  anthropic: () => ['/v1/messages', { model: 'm', max_tokens: 64, stream, messages: [{ role: 'user', content: task }] }],
  chat: () => ['/chat/completions', { model: 'm', stream, ...(stream ? { stream_options: { include_usage: true } } : {}), messages: [{ role: 'user', content: task }] }],
  responses: () => ['/responses', { model: 'm', stream, input: task }],
  gemini: () => [stream ? '/v1beta/models/m:streamGenerateContent?alt=sse' : '/v1beta/models/m:generateContent', { contents: [{ role: 'user', parts: [{ text: task }] }] }],
}[shape];
/** The usage one JSON object (a whole body or one SSE event) reports, by shape. */
const usageOf = (o) => {
  if (shape === 'anthropic') {
    const u = o.usage ?? o.message?.usage;
    return u ? { in: u.input_tokens, out: o.type === 'message_start' ? 0 : u.output_tokens } : undefined;
  }
  if (shape === 'chat') return o.usage ? { in: o.usage.prompt_tokens, out: o.usage.completion_tokens } : undefined;
  if (shape === 'responses') {
    const u = o.usage ?? (o.type === 'response.completed' ? o.response?.usage : undefined);
    return u ? { in: u.input_tokens, out: u.output_tokens } : undefined;
  }
  const m = o.usageMetadata;
  return m ? { in: m.promptTokenCount, out: m.candidatesTokenCount } : undefined;
};
let input = 0, output = 0;
for (let i = 0; i < Number(callsText); i++) {
  const [path, body] = call();
  const res = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer k' }, body: JSON.stringify(body) });
  const text = await res.text();
  if (res.status !== 200) { console.log('provider answered ' + res.status); continue; }
  const objects = stream
    ? text.split('\\n').filter((l) => l.startsWith('data:') && !l.includes('[DONE]')).map((l) => JSON.parse(l.slice(5)))
    : [JSON.parse(text)];
  // Streams repeat cumulative usage (Gemini, Anthropic's input): the last report of each counts.
  let callIn = 0, callOut = 0;
  for (const o of objects) {
    const u = usageOf(o);
    if (!u) continue;
    if (u.in) callIn = u.in;
    if (u.out) callOut = u.out;
  }
  input += callIn; output += callOut;
}
console.log('USAGE ' + JSON.stringify({ input_tokens: input, output_tokens: output }));
if (task.includes('linger')) await new Promise((r) => setTimeout(r, 60_000));
`;

type Usage = { input_tokens: number; output_tokens: number; requests: number; rate_limited: number };
type Run = { id: string; status: string; stop?: string; usage?: Usage };

describe('per-run usage through the provider gateway in a real daemon', () => {
  let provider: FakeProvider;
  let d: DaemonProcess;
  let dir: string;

  beforeAll(async () => {
    provider = await startFakeProvider({ reply: 'Counted through the gateway.' });
    dir = mkdtempSync(join(tmpdir(), 'crew-provider-usage-'));
    const script = join(dir, 'agent.mjs');
    writeFileSync(script, AGENT);
    const agent = (shape: string, provider: string) => ({
      runner: 'command',
      command: [process.execPath, script, shape, '{model}', '{task}'],
      provider,
    });
    d = await startDaemonProcess({
      config: {
        'providers.anthropic.upstream': provider.url,
        'providers.openai.upstream': `${provider.url}/v1`,
        'providers.gemini.upstream': provider.url,
        'agent.max_subagents': 4,
        'providers.gemini.cap': 2,
        'agents.anthropic': agent('anthropic', 'anthropic'),
        'agents.chat': agent('chat', 'openai'),
        'agents.responses': agent('responses', 'openai'),
        'agents.gemini': agent('gemini', 'gemini'),
      },
    });
  }, 60_000);
  afterAll(async () => {
    await d?.stop();
    d?.cleanup();
    await provider?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The model slot carries "<stream 0|1> <calls>" to the agent's command line. */
  const spawn = async (agent: string, stream: boolean, calls: number, task: string, extra = {}) => {
    const answer = await api(d, 'POST', '/api/spawn', {
      args: { task, agent, model: `${stream ? 1 : 0} ${calls}`, ...extra },
    });
    return (answer.body.runs as Run[])[0]!.id;
  };
  const ended = (id: string) =>
    pollFor(`run ${id} to end`, async () => {
      const run = ((await api(d, 'GET', '/api/runs')).body.runs as Run[]).find((r) => r.id === id);
      return run && !['queued', 'starting', 'running'].includes(run.status) ? run : undefined;
    });

  for (const agent of ['anthropic', 'chat', 'responses', 'gemini'])
    for (const stream of [false, true])
      it(`${agent}, ${stream ? 'streamed' : 'not streamed'}: the run's usage is what the provider reported`, async () => {
        const id = await spawn(agent, stream, 2, `count me ${'word '.repeat(200)}`);
        const listed = await ended(id);
        const status = await api(d, 'GET', `/api/runs/${id}`);
        const text = String(status.body.text);
        expect(listed.status, text).toBe('completed');
        const seen = JSON.parse(/USAGE (\{.*\})/.exec(text)?.[1] ?? 'null') as Usage | null;
        expect(seen?.input_tokens).toBeGreaterThan(100);
        expect(seen?.output_tokens).toBeGreaterThan(0);
        const expected = { ...seen, requests: 2, rate_limited: 0 };
        expect(listed.usage).toEqual(expected);
        expect((status.body.run as Run).usage).toEqual(expected);
      }, 60_000);

  it('resource_status names each provider cap source and which cap binds', async () => {
    const providers = (await api(d, 'GET', '/api/resources')).body.providers as Record<string, object>;
    // The operator fixed gemini's at 2, under the host cap of 4: it binds. Anthropic's adapts from 4.
    expect(providers.gemini).toMatchObject({ cap: 2, cap_source: 'configured', binds: 'provider' });
    expect(providers.anthropic).toMatchObject({ cap: 4, cap_source: 'adaptive', binds: 'host' });
  }, 60_000);

  it('counts 429s as rate limited requests with no tokens', async () => {
    const id = await spawn('chat', false, 1, '#fake status=429 retry_after=0');
    const run = await ended(id);
    expect(run.usage).toEqual({ input_tokens: 0, output_tokens: 0, requests: 1, rate_limited: 1 });
  }, 60_000);

  it('a live run shows its usage so far, before it ends', async () => {
    const id = await spawn('chat', true, 1, `linger after one call ${'word '.repeat(50)}`);
    const live = await pollFor(`run ${id} to show usage while running`, async () => {
      const status = await api(d, 'GET', `/api/runs/${id}`);
      const run = status.body.run as Run;
      return run.status === 'running' && run.usage?.requests === 1 ? run : undefined;
    });
    expect(live.usage?.input_tokens).toBeGreaterThan(0);
    await api(d, 'POST', `/api/runs/${id}/cancel`);
    // Ended, it keeps the same usage (now from its record).
    expect((await ended(id)).usage).toEqual(live.usage);
  }, 60_000);

  it("a spawn's max_tokens: the run whose counted tokens pass it is stopped, completed with stop token_budget", async () => {
    const id = await spawn('gemini', true, 1, `linger after ${'word '.repeat(400)}`, { max_tokens: 100 });
    const run = await ended(id);
    expect(run).toMatchObject({ status: 'completed', stop: 'token_budget' });
    expect(run.usage?.requests).toBe(1);
    expect((run.usage?.input_tokens ?? 0) + (run.usage?.output_tokens ?? 0)).toBeGreaterThan(100);
  }, 60_000);
});
