import { IncomingMessage } from 'node:http';
import type { Context, MiddlewareHandler } from 'hono';
import { type Refusal, refuse } from '../core/errors.js';

/**
 * Request bodies are bounded by the bytes that arrive, not by what `Content-Length` says: a chunked body
 * declares nothing, so every body is counted as it is read and reading stops at the limit (issue 28).
 * The daemon's routes ({@link limitBody}) buffer at most `limit` bytes before any parse; the provider
 * gateway's pass-through, which never buffers, counts what it forwards ({@link meterStream}). Either way
 * the refusal is a 413 with one typed body ({@link bodyTooLarge}). The rest of the body is then read
 * and dropped for a short while (a lingering close: closing at once would reset the connection under a
 * client still sending, and it could lose the 413), and the connection is closed past that bound; the
 * Node adapter does this for the daemon's routes, {@link discardRest} for the pass-through.
 */

/** The daemon's bound on a request body (`/api/*`, `/mcp`). */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** The refusal for a body over `limit`: `current` is what it declared, or what arrived before reading stopped. */
export function bodyTooLarge(limit: number, current: number): Refusal {
  return refuse(
    'invalid_argument',
    `body of ${current} bytes or more is over the limit of ${limit} bytes; send a smaller body`,
    { path: '(body)', limit, current },
  );
}

/** A `Content-Length` over `limit` (refused before a byte is read); undefined when absent or within it. */
export function declaredOverLimit(header: string | undefined, limit: number): Refusal | undefined {
  if (header === undefined) return undefined;
  const length = Number(header);
  return Number.isFinite(length) && length > limit ? bodyTooLarge(limit, length) : undefined;
}

export type BodyRead = { ok: true; bytes: Uint8Array } | { ok: false; received: number };

/**
 * Reads a body stream counting bytes as they arrive; past `limit` it stops reading (what is held is
 * dropped, the rest never read) and says how many bytes had come. The stream is not cancelled: under
 * the Node adapter that would destroy the socket before the 413 is written.
 */
export async function readBodyWithin(
  body: ReadableStream<Uint8Array> | null,
  limit: number,
): Promise<BodyRead> {
  if (body === null) return { ok: true, bytes: new Uint8Array(0) };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let received = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      received += value.byteLength;
      if (received > limit) return { ok: false, received };
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  const bytes = new Uint8Array(received);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return { ok: true, bytes };
}

/**
 * Hono middleware: a body over `limit` (declared or counted) is answered by `refused` (which audits and
 * words it; the status must be 413); a body within it is read whole and the
 * request handed on with those bytes, so the routes' own `json()` (and the MCP transport) read them
 * from memory. GET and HEAD carry no body here and pass untouched.
 */
export function limitBody(
  limit: number,
  refused: (c: Context, refusal: Refusal) => Response,
  // biome-ignore lint/suspicious/noExplicitAny: a middleware for apps of any Env (the daemon's, Slack's mount)
): MiddlewareHandler<any> {
  return async (c, next) => {
    const declared = declaredOverLimit(c.req.header('content-length'), limit);
    if (declared) return refused(c, declared);
    const raw = c.req.raw;
    if (raw.method === 'GET' || raw.method === 'HEAD') return next();
    const read = declaredUnderNode(c)
      ? { ok: true as const, bytes: new Uint8Array(await raw.arrayBuffer()) }
      : await readBodyWithin(raw.body, limit);
    if (!read.ok) return refused(c, bodyTooLarge(limit, read.received));
    c.req.raw = new Request(raw.url, {
      method: raw.method,
      headers: raw.headers,
      body: read.bytes,
      signal: raw.signal,
    });
    await next();
  };
}

/**
 * A body whose length is declared (and within the limit: checked before) on a request the Node adapter
 * serves: Node's HTTP parser hands on exactly the declared bytes as the body (what follows is the next
 * request, and a request declaring a length and a chunked body is refused before it gets here), so
 * reading it whole is bounded by the bytes that arrive, and the adapter reads it straight from the
 * socket, without the web stream a counted read needs (issue 32 §4). A chunked body is counted.
 */
function declaredUnderNode(c: Context): boolean {
  const incoming = (c.env as { incoming?: unknown } | undefined)?.incoming;
  return incoming instanceof IncomingMessage && incoming.headers['content-length'] !== undefined;
}

/**
 * How long, and how much, of a refused body is read and dropped before the connection is closed. Closing
 * a socket with bytes still arriving resets it, and a reset makes the client's kernel drop the answer it
 * has not read yet: a loaded client (the CI's fuzz run) took over 500 ms to read its 401, so the bound
 * is a few seconds; the bytes bound keeps a fast sender from holding the socket longer.
 */
const LINGER_MS = 5000;
const LINGER_BYTES = 64 * 1024 * 1024;

/**
 * Reads and drops what is left of a node request whose answer is already decided, so the client gets
 * that answer; past {@link LINGER_MS} or {@link LINGER_BYTES} the connection is closed instead.
 */
export function discardRest(req: IncomingMessage): void {
  if (req.readableEnded || req.destroyed) return;
  let dropped = 0;
  const stop = () => {
    clearTimeout(timer);
    req.off('data', drop);
    req.socket?.destroySoon?.();
  };
  const drop = (chunk: Buffer) => {
    dropped += chunk.byteLength;
    if (dropped > LINGER_BYTES) stop();
  };
  const timer = setTimeout(stop, LINGER_MS);
  timer.unref();
  req.once('end', () => clearTimeout(timer));
  req.on('data', drop);
  req.resume();
}

/**
 * Counts a node request's bytes as they flow to wherever it is piped; once past `limit`, `onOver` is
 * called once with the count (it answers 413 and stops the forwarding). Nothing is held here.
 */
export function meterStream(req: IncomingMessage, limit: number, onOver: (received: number) => void): void {
  let received = 0;
  const count = (chunk: Buffer) => {
    received += chunk.byteLength;
    if (received <= limit) return;
    req.off('data', count);
    onOver(received);
  };
  req.on('data', count);
}
