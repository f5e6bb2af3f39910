import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeProvider, startFakeProvider } from '../../src/fake-provider/fake-provider.js';
import { api, type DaemonProcess, pollFor, startDaemonProcess } from '../helpers/daemon-process.js';

/**
 * The provider gateway in a real daemon: an agent that names `provider: anthropic` gets the gateway's base
 * URL (with its run token) in its environment, its calls reach the scripted provider through it with its
 * own key untouched, and the daemon counts them: usage and traffic in `resource_status`, a 429 that lowers
 * the cap and holds starts, and a token budget that stops the run.
 */

const SECRET = 'sk-ant-api03-provider-gateway-test-secret-value';

/** A minimal agent CLI: one streamed Anthropic call with the task, then (for `linger`) a wait. */
const AGENT = `
const task = process.argv[2] ?? '';
const base = process.env.ANTHROPIC_BASE_URL;
if (!base) { console.error('no ANTHROPIC_BASE_URL'); process.exit(2); }
const res = await fetch(base + '/v1/messages', {
  method: 'POST',
  headers: { 'content-type': 'application/json', 'x-api-key': process.env.ANTHROPIC_API_KEY, 'anthropic-version': '2023-06-01' },
  body: JSON.stringify({ model: 'claude-test', max_tokens: 64, stream: true, messages: [{ role: 'user', content: task }] }),
});
if (res.status !== 200) { console.log('provider answered ' + res.status); await res.text(); process.exit(1); }
let text = '';
for await (const chunk of res.body) text += Buffer.from(chunk).toString('utf8');
for (const line of text.split('\\n')) {
  if (!line.startsWith('data:')) continue;
  const event = JSON.parse(line.slice(5));
  if (event.type === 'content_block_delta' && event.delta.text) process.stdout.write(event.delta.text);
}
process.stdout.write('\\n');
if (task.includes('linger')) await new Promise((r) => setTimeout(r, 60_000));
`;

type Run = { id: string; status: string; stop?: string; waiting_for?: string };

describe('the provider gateway in a real daemon', () => {
  let provider: FakeProvider;
  let d: DaemonProcess;
  let dir: string;

  beforeAll(async () => {
    provider = await startFakeProvider({ reply: 'Hello through the gateway.' });
    dir = mkdtempSync(join(tmpdir(), 'crew-provider-agent-'));
    const script = join(dir, 'agent.mjs');
    writeFileSync(script, AGENT);
    d = await startDaemonProcess({
      config: {
        'providers.anthropic.upstream': provider.url,
        'agent.max_subagents': 3,
        // A short task's call stays well under the budget; the long task's input alone passes it.
        'agent.subagent_max_tokens': 2_000,
        'agents.probe': {
          runner: 'command',
          command: [process.execPath, script, '{task}'],
          provider: 'anthropic',
          env: { ANTHROPIC_API_KEY: SECRET },
        },
      },
    });
  }, 60_000);
  afterAll(async () => {
    await d?.stop();
    d?.cleanup();
    await provider?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const spawnProbe = async (task: string) =>
    ((await api(d, 'POST', '/api/spawn', { args: { task, agent: 'probe' } })).body.runs as Run[])[0]!.id;
  const runOf = async (id: string) =>
    ((await api(d, 'GET', '/api/runs')).body.runs as Run[]).find((r) => r.id === id);
  const ended = (id: string) =>
    pollFor(`run ${id} to end`, async () => {
      const run = await runOf(id);
      return run && !['queued', 'starting', 'running'].includes(run.status) ? run : undefined;
    });

  it('routes the agent through the gateway with its own key, and counts the call and its tokens', async () => {
    const id = await spawnProbe('say hello');
    const run = await ended(id);
    const status = await api(d, 'GET', `/api/runs/${id}`);
    expect(run, String(status.body.text)).toMatchObject({ status: 'completed' });
    expect(status.body.text).toContain('Hello through the gateway.');
    // The provider saw the agent's own key, on a path under /v1, from the gateway.
    const seen = provider.requests.find((r) => r.api === 'anthropic');
    expect(seen?.headers['x-api-key']).toBe(SECRET);
    expect(seen?.url).toBe('/v1/messages');
    const resources = (await api(d, 'GET', '/api/resources')) as unknown as {
      body: { providers: Record<string, Record<string, number>> };
    };
    expect(resources.body.providers.anthropic).toMatchObject({ requests: 1, cap_source: 'adaptive' });
    expect(resources.body.providers.anthropic?.tokens_per_minute).toBeGreaterThan(0);
    // The key is in no file Crew writes.
    for (const file of ['crew.db', 'crew.db-wal', 'security_events.jsonl']) {
      const path = join(d.home, file);
      if (statSync(path, { throwIfNoEntry: false }))
        expect(readFileSync(path, 'latin1')).not.toContain(SECRET);
    }
    // Run directories only: the cost samples file lives beside them once a run has ended.
    for (const run of readdirSync(join(d.home, 'subagents'), { withFileTypes: true })) {
      if (!run.isDirectory()) continue;
      const transcript = join(d.home, 'subagents', run.name, 'result.txt');
      if (statSync(transcript, { throwIfNoEntry: false }))
        expect(readFileSync(transcript, 'utf8')).not.toContain(SECRET);
    }
  }, 60_000);

  it('a 429 with retry-after lowers the provider cap and holds starts until it passes', async () => {
    const providers = async () =>
      ((await api(d, 'GET', '/api/resources')).body as { providers: Record<string, Record<string, unknown>> })
        .providers.anthropic as Record<string, unknown>;
    const before = (await providers()).cap as number;
    const id = await spawnProbe('#fake status=429 retry_after=3');
    expect(await ended(id)).toMatchObject({ status: 'failed' });
    const after = await providers();
    expect(after.cap).toBeLessThan(before);
    expect(after.rate_limited).toBe(1);
    expect(after.last_retry_after_secs).toBe(3);
    expect(after.hold_until).not.toBeNull();
    // A run spawned during the hold waits for the provider, and starts once the hold ends.
    const held = await spawnProbe('say hello again');
    const queued = await runOf(held);
    expect(queued).toMatchObject({ status: 'queued', waiting_for: 'provider' });
    expect(await ended(held)).toMatchObject({ status: 'completed' });
  }, 60_000);

  it('a run whose counted tokens pass agent.subagent_max_tokens is stopped and ends completed, stop token_budget', async () => {
    const id = await spawnProbe(`linger after answering ${'a long task '.repeat(2_000)}`);
    expect(await ended(id)).toMatchObject({ status: 'completed', stop: 'token_budget' });
  }, 60_000);
});
