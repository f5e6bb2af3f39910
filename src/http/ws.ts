import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import type { Dashboard } from '../dashboard/dashboard.js';
import type { LiveMessage } from '../dashboard/live-feed.js';
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
    if (url.pathname !== '/api/ws') {
      socket.destroy();
      return;
    }
    const refusal = refusalOf(req, options);
    if (refusal) {
      socket.end(`HTTP/1.1 ${refusal}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
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

  function refusalOf(req: IncomingMessage, o: DashboardSocketOptions): string | undefined {
    const host = req.headers.host ?? '';
    if (!isAllowedHost(host, o.allowedHosts())) return '403 Forbidden';
    const origin = req.headers.origin;
    if (origin !== undefined && !isAllowedOrigin(origin, o.allowedHosts())) return '403 Forbidden';
    const bearer = o.tokens.resolve(bearerOf(req.headers.authorization));
    const session = sessionOf(o.dashboard, req.headers.cookie, o.cookieName());
    if (bearer?.kind !== 'operator' && !session) return '401 Unauthorized';
    if (wss.clients.size >= MAX_SOCKETS) return '503 Service Unavailable';
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
