import { Hono } from 'hono';
import type { Clock } from '../core/clock.js';
import { type Exchange, isRateLimited, type ProviderMetrics, type RunUsage } from './provider-metrics.js';
import { UsageMeter } from './usage-meter.js';

/**
 * The provider gateway's pass-through (issue 17): `…/p/<run token>/<provider>/<path>` is forwarded to
 * `upstreams[provider]` + `/<path>` (the upstream's own path kept as a prefix), with the query, method,
 * body and the agent's own headers, credentials included, untouched; the response streams back byte for
 * byte (SSE included; nothing holds a whole response) while a {@link UsageMeter} reads its tokens.
 *
 * What it changes, and why: hop-by-hop headers are dropped both ways (they describe one connection), and
 * the upstream is asked for `accept-encoding: identity` so the bytes the agent gets are the bytes the
 * meter reads. Credentials are never stored or logged: nothing here keeps a header.
 */

export interface ProviderProxyOptions {
  /** Provider name → upstream base URL (`providers.NAME.upstream`). */
  upstreams: Readonly<Record<string, string>>;
  /** A run-scoped token → the run it speaks for; undefined = not a live run's token. */
  resolveRun: (token: string) => string | undefined;
  metrics: ProviderMetrics;
  clock: Clock;
  /** After every exchange (the gateway feeds the provider cap and the token budget from it). */
  onExchange?: (exchange: Exchange, runUsage: RunUsage) => void;
  /** Largest request body forwarded; a bigger one is refused 413. @default 64 MiB */
  maxRequestBytes?: number;
  /** Replaces the global fetch (tests). */
  fetch?: typeof fetch;
}

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'host',
  'content-length',
  'accept-encoding',
]);

const RESPONSE_DROP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'content-encoding',
]);

/** `retry-after` as seconds or an HTTP date → ms from `now`; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now: number): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const secs = Number(header);
  if (Number.isFinite(secs) && secs >= 0) return secs * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function providerError(status: number, message: string): Response {
  // Shaped like the providers' own errors, so an agent's error path reads it.
  return new Response(JSON.stringify({ type: 'error', error: { type: 'crew_provider_gateway', message } }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

export function createProviderProxy(options: ProviderProxyOptions): Hono {
  const app = new Hono();
  const doFetch = options.fetch ?? fetch;
  const maxRequestBytes = options.maxRequestBytes ?? 64 * 1024 * 1024;

  app.all('/p/:token/:provider/*', async (c) => {
    const { token, provider } = c.req.param();
    const runId = options.resolveRun(token);
    if (runId === undefined)
      return providerError(401, 'Crew provider gateway: this run token is not valid (the run has ended)');
    const base = options.upstreams[provider];
    if (base === undefined) {
      return providerError(
        404,
        `Crew provider gateway: no upstream for provider "${provider}"; set providers.${provider}.upstream`,
      );
    }
    const url = new URL(c.req.url);
    const prefix = `/p/${token}/${provider}`;
    const rest = url.pathname.slice(prefix.length);
    const target = `${base.replace(/\/+$/, '')}${rest}${url.search}`;

    const headers = new Headers();
    c.req.raw.headers.forEach((value, key) => {
      if (!HOP_BY_HOP.has(key.toLowerCase())) headers.set(key, value);
    });
    headers.set('accept-encoding', 'identity');
    let body: ArrayBuffer | undefined;
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
      const declared = Number(c.req.header('content-length') ?? 0);
      if (declared > maxRequestBytes)
        return providerError(413, `Crew provider gateway: request over ${maxRequestBytes} bytes`);
      body = await c.req.arrayBuffer();
      if (body.byteLength > maxRequestBytes)
        return providerError(413, `Crew provider gateway: request over ${maxRequestBytes} bytes`);
    }

    const { clock, metrics } = options;
    const startedAt = clock.now();
    metrics.started(provider);
    const finish = (
      status: number,
      extra: Partial<Exchange>,
      usage = { inputTokens: 0, outputTokens: 0 },
    ) => {
      const exchange: Exchange = {
        provider,
        runId,
        status,
        startedAt,
        endedAt: clock.now(),
        usage,
        ...extra,
      };
      const runUsage = metrics.ended(exchange);
      options.onExchange?.(exchange, runUsage);
    };

    let upstream: Response;
    try {
      upstream = await doFetch(target, {
        method: c.req.method,
        headers,
        ...(body === undefined ? {} : { body }),
        redirect: 'manual',
        signal: c.req.raw.signal,
      });
    } catch (error) {
      finish(502, {});
      return providerError(
        502,
        `Crew provider gateway: upstream ${new URL(target).origin} unreachable (${(error as Error).message})`,
      );
    }

    const retryAfter = retryAfterMs(upstream.headers.get('retry-after'), clock.now());
    const extra: Partial<Exchange> = retryAfter === undefined ? {} : { retryAfterMs: retryAfter };
    const responseHeaders = new Headers();
    upstream.headers.forEach((value, key) => {
      if (!RESPONSE_DROP.has(key.toLowerCase())) responseHeaders.set(key, value);
    });
    if (upstream.body === null) {
      finish(upstream.status, extra);
      return new Response(null, { status: upstream.status, headers: responseHeaders });
    }

    const meter = new UsageMeter(upstream.headers.get('content-type'));
    const metered = !isRateLimited(upstream.status) && upstream.status < 400;
    let firstByteAt: number | undefined;
    let done = false;
    const settle = () => {
      if (done) return;
      done = true;
      finish(
        upstream.status,
        { ...extra, ...(firstByteAt === undefined ? {} : { firstByteAt }) },
        meter.end(),
      );
    };
    const reader = upstream.body.getReader();
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { value, done: ended } = await reader.read();
          if (ended) {
            settle();
            controller.close();
            return;
          }
          firstByteAt ??= clock.now();
          if (metered) meter.push(value);
          controller.enqueue(value);
        } catch (error) {
          settle();
          controller.error(error);
        }
      },
      cancel(reason) {
        settle();
        return reader.cancel(reason);
      },
    });
    return new Response(stream, {
      status: upstream.status,
      statusText: upstream.statusText,
      headers: responseHeaders,
    });
  });

  app.all('*', () =>
    providerError(404, 'Crew provider gateway: expected a path /p/<run token>/<provider>/…'),
  );
  return app;
}
