import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { realClock } from '../../src/clock/real-clock.js';
import type { Exchange, RunUsage } from '../../src/provider/provider-metrics.js';
import { ProviderMetrics } from '../../src/provider/provider-metrics.js';
import { createProviderProxy } from '../../src/provider/provider-proxy.js';
import { RequestGate } from '../../src/provider/request-gate.js';
import { sendChunked } from '../http/chunked-send.js';

/**
 * The pass-through against a real upstream over real sockets: bytes, headers and streaming unchanged,
 * usage and rate limits recorded, credentials never kept.
 */

interface Recorded {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void | Promise<void>;

let upstream: Server;
let upstreamUrl: string;
let handler: Handler;
let recorded: Recorded[];
let proxy: Server;
let proxyUrl: string;
let metrics: ProviderMetrics;
let exchanges: { exchange: Exchange; usage: RunUsage }[];
const TOKEN = 'crew_run_tok';
/** Names every plain object answers to: none may be taken for a configured provider. */
const PROTOTYPE_NAMES = [
  'constructor',
  '__proto__',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'isPrototypeOf',
  'propertyIsEnumerable',
  'toLocaleString',
  '__defineGetter__',
  '__lookupSetter__',
];

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeEach(async () => {
  recorded = [];
  exchanges = [];
  upstream = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of req) chunks.push(chunk as Buffer);
    } catch {
      return; // the pass-through dropped the call (a body past its bound)
    }
    const body = Buffer.concat(chunks).toString('utf8');
    recorded.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
    await handler(req, res, body);
  });
  upstreamUrl = await listen(upstream);
  metrics = new ProviderMetrics();
  const handlerOfProxy = createProviderProxy({
    upstreams: { anthropic: `${upstreamUrl}/prefix`, openai: upstreamUrl, down: 'http://127.0.0.1:1' },
    resolveRun: (token) => (token === TOKEN ? 'r1' : undefined),
    metrics,
    clock: realClock,
    onExchange: (exchange, usage) => exchanges.push({ exchange, usage }),
  });
  proxy = createServer(handlerOfProxy);
  proxyUrl = await listen(proxy);
});

afterEach(async () => {
  proxy.closeAllConnections();
  await new Promise<void>((resolve) => proxy.close(() => resolve()));
  upstream.closeAllConnections();
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
});

const sse = (event: unknown) => `data: ${JSON.stringify(event)}\n\n`;

describe('the provider gateway pass-through', () => {
  it('forwards method, path under the upstream prefix, query, body and the agent’s credentials untouched', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'abc' });
      res.end(JSON.stringify({ usage: { input_tokens: 10, output_tokens: 5 } }));
    };
    const response = await fetch(`${proxyUrl}/p/${TOKEN}/anthropic/v1/messages?beta=true`, {
      method: 'POST',
      headers: {
        'x-api-key': 'sk-ant-secret',
        'anthropic-version': '2023-06-01',
        'content-type': 'application/json',
      },
      body: '{"model":"m","messages":[]}',
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('abc');
    expect(await response.json()).toEqual({ usage: { input_tokens: 10, output_tokens: 5 } });
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({
      method: 'POST',
      url: '/prefix/v1/messages?beta=true',
      body: '{"model":"m","messages":[]}',
    });
    expect(recorded[0]?.headers).toMatchObject({
      'x-api-key': 'sk-ant-secret',
      'anthropic-version': '2023-06-01',
    });
    expect(exchanges[0]?.usage).toEqual({ input_tokens: 10, output_tokens: 5, requests: 1, rate_limited: 0 });
    // Nothing the gateway keeps holds the credential.
    expect(JSON.stringify(metrics.traffic(Date.now()))).not.toContain('sk-ant-secret');
    expect(JSON.stringify(exchanges)).not.toContain('sk-ant-secret');
  });

  it('streams SSE as it comes: the first event reaches the agent before the upstream has sent the rest', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    handler = async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sse({ type: 'message_start', message: { usage: { input_tokens: 7, output_tokens: 1 } } }));
      await released;
      res.write(sse({ type: 'message_delta', usage: { output_tokens: 3 } }));
      res.end(sse({ type: 'message_stop' }));
    };
    const response = await fetch(`${proxyUrl}/p/${TOKEN}/anthropic/v1/messages`, {
      method: 'POST',
      body: '{}',
    });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain('message_start');
    release();
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read())
      rest += new TextDecoder().decode(r.value);
    expect(rest).toContain('message_stop');
    await expect.poll(() => exchanges.length).toBe(1);
    expect(exchanges[0]?.usage).toMatchObject({ input_tokens: 7, output_tokens: 3 });
    expect(exchanges[0]?.exchange.firstByteAt).toBeLessThanOrEqual(exchanges[0]?.exchange.endedAt as number);
  });

  it('returns a 10 MB streamed response byte for byte identical to the upstream’s', async () => {
    const payload = Buffer.alloc(10 * 1024 * 1024);
    for (let i = 0; i < payload.length; i++) payload[i] = (i * 7919) % 251;
    handler = async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      for (let at = 0; at < payload.length; at += 65_536) {
        if (!res.write(payload.subarray(at, at + 65_536))) await new Promise((r) => res.once('drain', r));
      }
      res.end();
    };
    const direct = Buffer.from(await (await fetch(`${upstreamUrl}/x`)).arrayBuffer());
    const through = Buffer.from(await (await fetch(`${proxyUrl}/p/${TOKEN}/openai/x`)).arrayBuffer());
    expect(direct.equals(payload)).toBe(true);
    expect(through.length).toBe(payload.length);
    expect(through.equals(direct)).toBe(true);
  });

  it('passes a 429 through with its retry-after and counts it against the run and the provider', async () => {
    handler = (_req, res) => {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '2' });
      res.end('{"type":"error","error":{"type":"rate_limit_error"}}');
    };
    const response = await fetch(`${proxyUrl}/p/${TOKEN}/anthropic/v1/messages`, {
      method: 'POST',
      body: '{}',
    });
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('2');
    await response.text();
    await expect.poll(() => exchanges.length).toBe(1);
    expect(exchanges[0]?.exchange).toMatchObject({ status: 429, retryAfterMs: 2000 });
    expect(exchanges[0]?.usage).toMatchObject({ requests: 1, rate_limited: 1 });
    expect(metrics.traffic(Date.now()).anthropic).toMatchObject({
      rate_limited: 1,
      last_retry_after_secs: 2,
    });
  });

  it('refuses an unknown token (401) and an unknown provider (404) without calling any upstream', async () => {
    const bad = await fetch(`${proxyUrl}/p/nope/anthropic/v1/messages`, { method: 'POST', body: '{}' });
    expect(bad.status).toBe(401);
    expect(await bad.json()).toMatchObject({ error: { type: 'crew_provider_gateway' } });
    const unknown = await fetch(`${proxyUrl}/p/${TOKEN}/mistral/v1/chat`, { method: 'POST', body: '{}' });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { message: string } }).error.message).toContain(
      'providers.mistral.upstream',
    );
    expect(recorded).toHaveLength(0);
  });

  it('refuses a provider named like an Object.prototype member (404) and stays up, gates or not', async () => {
    const gate = new RequestGate({ maxInFlight: 1, clock: realClock, maxQueued: 1, maxWaitMs: 3000 });
    const gated = createServer(
      createProviderProxy({
        upstreams: { anthropic: upstreamUrl },
        resolveRun: (token) => (token === TOKEN ? 'r1' : undefined),
        metrics,
        clock: realClock,
        gates: { anthropic: gate },
      }),
    );
    const gatedUrl = await listen(gated);
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"usage":{"input_tokens":1,"output_tokens":1}}');
    };
    try {
      for (const url of [proxyUrl, gatedUrl]) {
        for (const provider of PROTOTYPE_NAMES) {
          const response = await fetch(`${url}/p/${TOKEN}/${provider}/v1/messages`, {
            method: 'POST',
            body: '{}',
          });
          expect({ provider, status: response.status }).toEqual({ provider, status: 404 });
          expect(await response.json()).toMatchObject({ error: { type: 'crew_provider_gateway' } });
        }
        // Still serving.
        const ok = await fetch(`${url}/p/${TOKEN}/anthropic/v1/messages`, { method: 'POST', body: '{}' });
        expect(ok.status).toBe(200);
        await ok.text();
      }
      expect(recorded.map((r) => r.url)).toEqual(['/prefix/v1/messages', '/v1/messages']);
    } finally {
      gate.close();
      gated.closeAllConnections();
      await new Promise<void>((resolve) => gated.close(() => resolve()));
    }
  });

  it('counts a chunked body as it is forwarded: past maxBodyBytes a typed 413, the upstream call dropped; at the bound it passes', async () => {
    const limit = 1024 * 1024;
    const bounded = createServer(
      createProviderProxy({
        upstreams: { anthropic: upstreamUrl },
        resolveRun: (token) => (token === TOKEN ? 'r1' : undefined),
        metrics,
        clock: realClock,
        maxBodyBytes: limit,
      }),
    );
    const boundedUrl = await listen(bounded);
    handler = (_req, res, body) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ bytes: Buffer.byteLength(body) }));
    };
    try {
      const url = `${boundedUrl}/p/${TOKEN}/anthropic/v1/messages`;
      const over = await sendChunked(url, { method: 'POST', totalBytes: 16 * limit });
      expect(over.status).toBe(413);
      expect(JSON.parse(over.text)).toMatchObject({ error: { type: 'crew_provider_gateway' } });
      expect(over.text).toContain(`limit of ${limit} bytes`);
      expect(over.sent).toBeLessThan(16 * limit);
      const atBound = await sendChunked(url, { method: 'POST', totalBytes: limit });
      expect(atBound.status).toBe(200);
      expect(JSON.parse(atBound.text)).toEqual({ bytes: limit });
      // Only the body within the bound reached the provider.
      expect(recorded).toHaveLength(1);
      await expect.poll(() => metrics.traffic(Date.now()).anthropic?.in_flight_requests).toBe(0);
    } finally {
      bounded.closeAllConnections();
      await new Promise<void>((resolve) => bounded.close(() => resolve()));
    }
  });

  it('answers 502 at once when the upstream is unreachable, and counts the failure', async () => {
    const started = Date.now();
    const response = await fetch(`${proxyUrl}/p/${TOKEN}/down/v1/messages`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(502);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(metrics.traffic(Date.now()).down).toMatchObject({
      requests: 1,
      recent_error_rate: 1,
      in_flight_requests: 0,
    });
  });
});

describe('providers.NAME.max_in_flight_requests at the pass-through', () => {
  it('excess requests wait for a place instead of reaching the provider; past the bounds they get a fast 429', async () => {
    const gate = new RequestGate({ maxInFlight: 1, clock: realClock, maxQueued: 1, maxWaitMs: 3000 });
    const gated = createServer(
      createProviderProxy({
        upstreams: { anthropic: upstreamUrl },
        resolveRun: (token) => (token === TOKEN ? 'r1' : undefined),
        metrics,
        clock: realClock,
        gates: { anthropic: gate },
      }),
    );
    const gatedUrl = await listen(gated);
    try {
      const answers: (() => void)[] = [];
      handler = (_req, res) =>
        new Promise<void>((resolve) => {
          answers.push(() => {
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end('{"usage":{"input_tokens":1,"output_tokens":1}}');
            resolve();
          });
        });
      const call = () =>
        fetch(`${gatedUrl}/p/${TOKEN}/anthropic/v1/messages`, { method: 'POST', body: '{}' });
      const first = call();
      await pollUntil(() => recorded.length === 1);
      const second = call();
      await pollUntil(() => gate.snapshot().queued === 1);
      // The queue holds one: a third is refused at once, a 429 with retry-after, never sent upstream.
      const startedAt = Date.now();
      const third = await call();
      expect(third.status).toBe(429);
      expect(third.headers.get('retry-after')).toBe('1');
      expect(await third.text()).toContain('max_in_flight_requests');
      expect(Date.now() - startedAt).toBeLessThan(1500);
      expect(recorded).toHaveLength(1);
      // The first ends: the second goes.
      answers.shift()?.();
      expect((await first).status).toBe(200);
      await pollUntil(() => recorded.length === 2);
      expect(gate.snapshot()).toMatchObject({ in_flight: 1, queued: 0 });
      // One more waits its longest (3 s) and is refused, not left hanging.
      const late = await call();
      expect(late.status).toBe(429);
      expect(recorded).toHaveLength(2);
      answers.shift()?.();
      expect((await second).status).toBe(200);
      expect(gate.snapshot()).toMatchObject({ in_flight: 0, queued: 0 });
    } finally {
      gate.close();
      gated.closeAllConnections();
      await new Promise<void>((resolve) => gated.close(() => resolve()));
    }
  });
});

async function pollUntil(ready: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !ready(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(ready()).toBe(true);
}
