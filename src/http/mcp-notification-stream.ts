import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { BoundedEventStore, STANDALONE_STREAM_ID } from '../mcp/bounded-event-store.js';

/** What a client is told to wait before it reconnects a dropped stream (the SSE `retry` field). */
export const STREAM_RETRY_MS = 2000;

/** The first version whose clients read an event with empty data (the SDK primes streams from it on). */
const PRIMING_VERSION = '2025-11-25';

/**
 * One MCP session's notification stream (the GET stream), made resumable and watched (issue 29):
 *
 * - every event on it carries an id from the session's {@link BoundedEventStore}, and the stream opens
 *   with `retry` and, for clients that read one, a priming event whose id is a cursor from the first
 *   moment, so a client that loses the stream resumes it with `Last-Event-ID` and misses nothing;
 * - it knows whether a stream is open, because a completion event counts as delivered only when it went
 *   out on such a stream: pushed into no stream (a client that asked for log messages and never opened
 *   one), it stays owed and `spawn_wait` returns it.
 */
export class NotificationStream {
  readonly store = new BoundedEventStore();
  private open = 0;
  private readonly openedListeners: (() => void)[] = [];

  /** True while the client holds the session's notification stream. */
  isOpen(): boolean {
    return this.open > 0;
  }

  /** Called each time the client opens (or resumes) the notification stream. */
  onOpened(listener: () => void): void {
    this.openedListeners.push(listener);
  }

  /** Hands a GET to the transport; a notification stream it opens gets `retry` and a cursor, and is watched. */
  async handleGet(transport: WebStandardStreamableHTTPServerTransport, request: Request): Promise<Response> {
    const response = await transport.handleRequest(request);
    const type = response.headers.get('content-type') ?? '';
    if (response.status !== 200 || !response.body || !type.includes('text/event-stream')) return response;
    const lastEventId = request.headers.get('last-event-id');
    // A GET with Last-Event-ID may resume a call's stream instead; only the notification stream is watched.
    const isNotificationStream = !lastEventId || lastEventId.endsWith(`-${STANDALONE_STREAM_ID}`);
    const version = request.headers.get('mcp-protocol-version') ?? '';
    const prefix =
      !lastEventId && version >= PRIMING_VERSION
        ? `id: ${this.store.prime(STANDALONE_STREAM_ID)}\nretry: ${STREAM_RETRY_MS}\ndata: \n\n`
        : `retry: ${STREAM_RETRY_MS}\n\n`;
    const bytes = new TextEncoder().encode(prefix);
    const piped = new TransformStream<Uint8Array, Uint8Array>({
      start: (controller) => controller.enqueue(bytes),
    });
    if (isNotificationStream) this.open++;
    const closed = (): void => {
      if (isNotificationStream) this.open = Math.max(0, this.open - 1);
    };
    response.body.pipeTo(piped.writable).then(closed, closed);
    if (isNotificationStream) for (const listener of this.openedListeners) listener();
    return new Response(piped.readable, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  }
}
