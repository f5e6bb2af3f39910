import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Clock } from '../core/clock.js';
import { bodyTooLarge, discardRest, meterStream } from '../http/body-limit.js';
import type { Exchange, ProviderMetrics, RunUsage } from './provider-metrics.js';
import type { GateRefusal, RequestGate } from './request-gate.js';
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
  /** Providers whose requests in flight are bounded (`providers.NAME.max_in_flight_requests`). */
  gates?: Readonly<Record<string, RequestGate>>;
  /**
   * A request body is counted as it is forwarded and cut off past this many bytes (a 413). Above every
   * provider's own request limit, so only a body no provider would take is refused here.
   * @default PROVIDER_MAX_BODY_BYTES (64 MiB)
   */
  maxBodyBytes?: number;
}

/** The pass-through's bound on a request body: providers take up to about 32 MB (images, long contexts). */
export const PROVIDER_MAX_BODY_BYTES = 64 * 1024 * 1024;

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

function providerError(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  // Shaped like the providers' own errors, so an agent's error path reads it.
  const text = JSON.stringify({ type: 'error', error: { type: 'crew_provider_gateway', message } });
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** A request the gate would not let wait: a 429 the agent's retry path knows, with a short retry-after. */
function gateRefused(res: ServerResponse, provider: string, why: GateRefusal): void {
  if (res.headersSent || res.destroyed) return;
  const reason =
    why === 'queue_full'
      ? 'too many requests are already waiting'
      : 'this request waited its longest for a free place';
  providerError(
    res,
    429,
    `Crew provider gateway: ${reason} (providers.${provider}.max_in_flight_requests bounds the requests in flight); retry shortly`,
    { 'retry-after': '1' },
  );
}

const PATH = /^\/p\/([^/?]+)\/([^/?]+)(\/[^?]*)?(\?.*)?$/;

/**
 * A `node:http` request handler (the gateway serves it on its own loopback port): plain node streams
 * both ways, so a byte costs one pipe, not a web-stream round trip.
 */
export function createProviderProxy(
  options: ProviderProxyOptions,
): (req: IncomingMessage, res: ServerResponse) => void {
  // The provider is request text: looked up in Maps, never on a plain object (where `constructor` or
  // `__proto__` would name something of Object.prototype's).
  const upstreams = ownEntries(options.upstreams);
  const gates = ownEntries(options.gates ?? {});
  const maxBodyBytes = options.maxBodyBytes ?? PROVIDER_MAX_BODY_BYTES;
  return (req, res) => {
    const match = PATH.exec(req.url ?? '');
    if (!match) {
      providerError(res, 404, 'Crew provider gateway: expected a path /p/<run token>/<provider>/…');
      discardRest(req);
      return;
    }
    const [, token = '', provider = '', rest = '', search = ''] = match;
    const runId = options.resolveRun(token);
    if (runId === undefined) {
      providerError(res, 401, 'Crew provider gateway: this run token is not valid (the run has ended)');
      discardRest(req);
      return;
    }
    const base = upstreams.get(provider);
    if (base === undefined) {
      providerError(
        res,
        404,
        `Crew provider gateway: no upstream for provider "${provider}"; set providers.${provider}.upstream`,
      );
      discardRest(req);
      return;
    }
    const target = new URL(`${base.replace(/\/+$/, '')}${rest}${search}`);
    const headers: Record<string, string | string[]> = {};
    for (const [key, value] of Object.entries(req.headers)) {
      if (value !== undefined && !HOP_BY_HOP.has(key)) headers[key] = value;
    }
    headers['accept-encoding'] = 'identity';
    if (req.headers['content-length'] !== undefined)
      headers['content-length'] = req.headers['content-length'];
    if (req.headers['transfer-encoding'] !== undefined)
      headers['transfer-encoding'] = req.headers['transfer-encoding'];

    const gate = gates.get(provider);
    const forward = (): void => {
      const { clock, metrics } = options;
      const startedAt = clock.now();
      metrics.started(provider);
      let settled = false;
      const finish = (
        status: number,
        extra: Partial<Exchange>,
        usage = { inputTokens: 0, outputTokens: 0 },
      ) => {
        if (settled) return;
        settled = true;
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
        gate?.release(status);
        options.onExchange?.(exchange, runUsage);
      };

      const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
      const upstream = send(target, { method: req.method ?? 'GET', headers }, (upstreamRes) => {
        const status = upstreamRes.statusCode ?? 502;
        const retryAfter = retryAfterMs(headerOf(upstreamRes.headers['retry-after']), clock.now());
        const extra: Partial<Exchange> = retryAfter === undefined ? {} : { retryAfterMs: retryAfter };
        const outHeaders: Record<string, string | string[]> = {};
        for (const [key, value] of Object.entries(upstreamRes.headers)) {
          if (value !== undefined && !RESPONSE_DROP.has(key)) outHeaders[key] = value;
        }
        res.writeHead(status, upstreamRes.statusMessage, outHeaders);
        const meter = new UsageMeter(headerOf(upstreamRes.headers['content-type']));
        const metered = status < 400;
        let firstByteAt: number | undefined;
        upstreamRes.on('data', (chunk: Buffer) => {
          firstByteAt ??= clock.now();
          if (metered) meter.push(chunk);
        });
        const done = () =>
          finish(status, { ...extra, ...(firstByteAt === undefined ? {} : { firstByteAt }) }, meter.end());
        upstreamRes.once('end', done);
        upstreamRes.once('error', done);
        upstreamRes.once('close', done);
        upstreamRes.pipe(res);
      });
      let bodyRefused = false;
      upstream.once('error', (error) => {
        if (bodyRefused) return;
        finish(502, {});
        if (res.headersSent) {
          res.destroy(error);
          return;
        }
        providerError(
          res,
          502,
          `Crew provider gateway: upstream ${target.origin} unreachable (${error.message})`,
        );
      });
      // The agent went away: stop the upstream call too.
      res.once('close', () => {
        if (!res.writableFinished) upstream.destroy();
      });
      meterStream(req, maxBodyBytes, (received) => {
        bodyRefused = true;
        req.unpipe(upstream);
        finish(413, {});
        if (res.headersSent) res.destroy();
        else {
          const refusal = bodyTooLarge(maxBodyBytes, received);
          providerError(res, 413, `Crew provider gateway: ${refusal.message}`);
          discardRest(req);
        }
        upstream.destroy();
      });
      req.pipe(upstream);
    };
    if (!gate) {
      forward();
      return;
    }
    const withdraw = gate.acquire(forward, (why) => {
      gateRefused(res, provider, why);
      discardRest(req);
    });
    // The agent went away while its request waited: it leaves the queue.
    res.once('close', withdraw);
  };
}

/** A record's own entries as a Map. */
function ownEntries<T>(record: Readonly<Record<string, T>>): ReadonlyMap<string, T> {
  return new Map(Object.entries(record));
}

function headerOf(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? (value[0] ?? null) : value;
}
