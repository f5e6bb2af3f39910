import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeProvider, startFakeProvider } from '../../src/fake-provider/fake-provider.js';
import { httpClient } from '../daemon/mcp-http-client.js';
import { api, type DaemonProcess, pollFor, startDaemonProcess } from '../helpers/daemon-process.js';
import { OtlpReceiver } from './otlp-receiver.js';

/**
 * OpenTelemetry traces from a real daemon (issue 32 §2) to a real OTLP/HTTP receiver on loopback: one
 * `invoke_agent` span per run (GenAI semantic conventions), a child for its admission wait and one per
 * provider request through the provider gateway; the `traceparent` of the MCP request's `_meta` is the
 * run's parent, and the agent process gets its run span as `TRACEPARENT`.
 */

/** Says its TRACEPARENT, then makes one Anthropic call (through the provider gateway) with the task. */
const AGENT = `
console.log('TRACEPARENT=' + (process.env.TRACEPARENT ?? '(unset)'));
const res = await fetch(process.env.ANTHROPIC_BASE_URL + '/v1/messages', {
  method: 'POST',
  headers: { 'content-type': 'application/json', 'x-api-key': 'sk-test', 'anthropic-version': '2023-06-01' },
  body: JSON.stringify({ model: 'claude-test', max_tokens: 64, messages: [{ role: 'user', content: process.argv[2] }] }),
});
console.log('provider answered ' + res.status + ': ' + (await res.text()).slice(0, 100));
process.exit(res.status === 200 ? 0 : 1);
`;

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_SPAN = '00f067aa0ba902b7';

describe('OpenTelemetry traces to an OTLP/HTTP receiver', () => {
  let receiver: OtlpReceiver;
  let provider: FakeProvider;
  let d: DaemonProcess;
  let dir: string;
  let client: Client;

  beforeAll(async () => {
    receiver = new OtlpReceiver();
    await receiver.start();
    provider = await startFakeProvider({ reply: 'Hello, traces.' });
    dir = mkdtempSync(join(tmpdir(), 'crew-trace-agent-'));
    writeFileSync(join(dir, 'agent.mjs'), AGENT);
    d = await startDaemonProcess({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '200' },
      config: {
        'agent.max_subagents': 3,
        'providers.anthropic.upstream': provider.url,
        'agents.probe': {
          runner: 'command',
          command: [process.execPath, join(dir, 'agent.mjs'), '{task}'],
          provider: 'anthropic',
        },
      },
    });
    client = await httpClient(d);
  }, 60_000);
  afterAll(async () => {
    await client?.close();
    await d?.stop();
    d?.cleanup();
    await provider?.close();
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('one invoke_agent span per run under the MCP traceparent, with its admission wait and provider calls as children', async () => {
    const answer = await client.callTool({
      name: 'spawn_run',
      arguments: { task: 'say hello', agent: 'probe' },
      _meta: { traceparent: `00-${TRACE_ID}-${PARENT_SPAN}-01` },
    });
    const runId = (answer.structuredContent as { runs: { id: string }[] }).runs[0]?.id as string;
    const run = await pollFor('the run span', () =>
      receiver.spans.find(
        (s) => s.name === 'invoke_agent probe' && s.attributes['gen_ai.agent.id'] === runId,
      ),
    );
    expect(run).toMatchObject({
      traceId: TRACE_ID,
      parentSpanId: PARENT_SPAN,
      service: 'crew',
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': 'probe',
        'gen_ai.agent.id': runId,
        'gen_ai.provider.name': 'anthropic',
        'crew.run.status': 'completed',
      },
    });
    expect(run.endMs).toBeGreaterThanOrEqual(run.startMs);

    const children = await pollFor('both children', () => {
      const found = receiver.spans.filter((s) => s.parentSpanId === run.spanId);
      return found.length >= 2 ? found : undefined;
    });
    const wait = children.find((s) => s.name === 'crew.admission_wait');
    expect(wait?.traceId).toBe(TRACE_ID);
    expect(wait?.startMs).toBeGreaterThanOrEqual(run.startMs);
    const chat = children.find((s) => s.name === 'chat');
    expect(chat).toMatchObject({
      traceId: TRACE_ID,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'anthropic',
        'http.response.status_code': 200,
      },
    });
    expect(Number(chat?.attributes['gen_ai.usage.input_tokens'])).toBeGreaterThan(0);
    expect(receiver.contentTypes[0]).toMatch(/^application\/json/);

    // The agent process was started under its run span.
    const status = await api(d, 'GET', `/api/runs/${runId}`);
    expect(String(status.body.text)).toContain(`TRACEPARENT=00-${TRACE_ID}-${run.spanId}-01`);
  }, 60_000);

  it('a run without a traceparent starts its own trace; a failed one carries error.type and an error status', async () => {
    const answer = await client.callTool({ name: 'spawn_run', arguments: { task: '#sim fail=error' } });
    const runId = (answer.structuredContent as { runs: { id: string }[] }).runs[0]?.id as string;
    const run = await pollFor('the failed run span', () =>
      receiver.spans.find((s) => s.attributes['gen_ai.agent.id'] === runId),
    );
    expect(run.traceId).not.toBe(TRACE_ID);
    expect(run.parentSpanId).toBe('');
    expect(run.attributes['crew.run.status']).toBe('failed');
    expect(run.attributes['error.type']).toBeTypeOf('string');
    expect(run.status.code).toBe(2);
  }, 60_000);
});
