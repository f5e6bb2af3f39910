import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import { type Refusal, refuse } from '../core/errors.js';
import type { Dashboard } from '../dashboard/dashboard.js';
import type { LiveMessage } from '../dashboard/live-feed.js';
import type { Gateway } from '../gateway/gateway.js';
import { isAllowedHost, isAllowedOrigin } from './allowed-host.js';
import { sessionOf } from './dashboard-routes.js';
import { bearerOf, type Tokens } from './tokens.js';

/** A client this far behind in unsent bytes is dropped; it reconnects and resumes or reloads. */
export const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
/** At most this many sockets at once; more are refused (503). */
export const MAX_SOCKETS = 64;

export interface DashboardSocketOptions {
  dashboard: Dashboard;
  tokens: Tokens;
  allowedHosts: () => string[];
  cookieName: () => string;
  /** Writes a refused upgrade to the SEL, as the HTTP edge does its refusals (the gateway's `audit`). */
  audit: Gateway['audit'];
}

/** A refused upgrade: its status line, its typed refusal, and why (for the SEL, never a token). */
interface UpgradeRefusal {
  status: '401 Unauthorized' | '403 Forbidden' | '404 Not Found' | '503 Service Unavailable';
  refusal: Refusal;
  metadata: Record<string, unknown>;
}

/**
 * The dashboard's live feed at `/api/ws` on the daemon's own HTTP server. The upgrade is checked like
 * every request (Host, Origin, then the session cookie or the operator bearer). The first message is
 * `{type: 'hello', epoch, seq, resume}`: with `?epoch=E&since=N` from the same process and N still in the
 * replay buffer, `resume: 'replay'` and every message after N follows; otherwise `resume: 'snapshot'`
 * and the client reloads `GET /api/dashboard`. Then each message as it is published, in order.
 */
export function attachDashboardSocket(server: Server, options: DashboardSocketOptions): () => Promise<void> {
  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const refused =
      url.pathname === '/api/ws'
        ? refusalOf(req, options)
        : {
            status: '404 Not Found' as const,
            refusal: refuse('not_found', `no WebSocket at ${url.pathname}; the dashboard's is /api/ws`),
            metadata: { reason: 'no_route' },
          };
    if (refused) {
      audit(req, url.pathname, refused);
      const body = JSON.stringify({ ok: false, refusal: refused.refusal });
      socket.end(
        `HTTP/1.1 ${refused.status}\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => serveClient(ws, url, options.dashboard));
  };
  server.on('upgrade', onUpgrade);
  return async () => {
    server.off('upgrade', onUpgrade);
    for (const client of wss.clients) client.terminate();
    await new Promise<void>((resolve) => wss.close(() => resolve()));
  };

  /** Written like the HTTP edge's refusals: code, remote address, route, reason; never a token or cookie. */
  function audit(req: IncomingMessage, route: string, refused: UpgradeRefusal): void {
    options.audit(refused.refusal, {
      event_type: refused.refusal.code === 'unauthorized' ? 'auth' : 'request',
      source: 'http',
      tool_name: `GET ${route} (upgrade)`,
      metadata: {
        remote: req.socket.remoteAddress ?? 'unknown',
        route,
        method: req.method ?? 'GET',
        upgrade: 'websocket',
        ...refused.metadata,
      },
    });
  }

  function refusalOf(req: IncomingMessage, o: DashboardSocketOptions): UpgradeRefusal | undefined {
    const host = req.headers.host ?? '';
    if (!isAllowedHost(host, o.allowedHosts())) {
      return {
        status: '403 Forbidden',
        refusal: refuse('unauthorized', `host ${host || '(none)'} is not served here`),
        metadata: { reason: 'bad_host', host },
      };
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !isAllowedOrigin(origin, o.allowedHosts())) {
      return {
        status: '403 Forbidden',
        refusal: refuse('unauthorized', `origin ${origin} is not allowed`),
        metadata: { reason: 'bad_origin', origin },
      };
    }
    const token = bearerOf(req.headers.authorization);
    const bearer = o.tokens.resolve(token);
    const session = sessionOf(o.dashboard, req.headers.cookie, o.cookieName());
    if (bearer?.kind !== 'operator' && !session) {
      return {
        status: '401 Unauthorized',
        refusal: refuse(
          'unauthorized',
          'the live feed needs a dashboard session (run `crew dashboard`) or the operator token',
        ),
        metadata: {
          reason: token === undefined ? (req.headers.cookie ? 'bad_session' : 'no_token') : 'wrong_token',
        },
      };
    }
    if (wss.clients.size >= MAX_SOCKETS) {
      return {
        status: '503 Service Unavailable',
        refusal: refuse('queue_full', `${MAX_SOCKETS} live feeds are open; close a dashboard tab and retry`, {
          limit: MAX_SOCKETS,
          current: wss.clients.size,
        }),
        metadata: { reason: 'too_many_sockets' },
      };
    }
    return undefined;
  }
}

function serveClient(ws: WebSocket, url: URL, dashboard: Dashboard): void {
  dashboard.activate();
  const feed = dashboard.feed;
  const send = (message: object) => {
    if (ws.readyState !== WebSocket.OPEN) return;
    if (ws.bufferedAmount > MAX_BUFFERED_BYTES) {
      ws.terminate();
      return;
    }
    ws.send(JSON.stringify(message));
  };
  const since = Number(url.searchParams.get('since') ?? Number.NaN);
  const resume = feed.resume(url.searchParams.get('epoch') ?? '', since);
  send({ type: 'hello', epoch: feed.epoch, seq: feed.lastSeq, resume: resume.kind });
  if (resume.kind === 'replay') for (const message of resume.messages) send(message);
  const unsubscribe = feed.subscribe((message: LiveMessage) => send(message));
  ws.on('close', unsubscribe);
  ws.on('error', unsubscribe);
  // The client only listens; anything it says is ignored.
  ws.on('message', () => undefined);
}
