import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';
import { signSlackRequest } from '../../src/slack/slack-signature.js';

export interface FakeMessage {
  channel: string;
  ts: string;
  text: string;
  thread_ts?: string;
  blocks?: { type: string; text?: { type: string; text: string }; elements?: Record<string, unknown>[] }[];
  metadata?: { event_type: string; event_payload: { event_id: string; part: number } };
  at: number;
}

/** A scripted answer for the next call of a method. */
export type FakeFailure = { status: 429; retryAfter: number } | { error: string } | { hang: true };

/**
 * A loopback fake of Slack's Web API (and of Socket Mode's WebSocket): records `chat.postMessage`,
 * `chat.update` and `conversations.open`, answers `conversations.history` with metadata, and can answer
 * `ratelimited`, an error, or never (a post that landed but whose answer was lost).
 */
export class FakeSlack {
  readonly calls: { method: string; body: Record<string, unknown>; at: number }[] = [];
  readonly messages: FakeMessage[] = [];
  readonly updates: Record<string, unknown>[] = [];
  readonly failures: Record<string, FakeFailure[]> = {};
  readonly acks: string[] = [];
  private seq = 0;
  private server: Server | undefined;
  private wss: WebSocketServer | undefined;
  private sockets = new Set<WebSocket>();
  private hanging = new Set<ServerResponse>();
  url = '';

  async start(): Promise<void> {
    const server = createServer((req, res) => void this.handle(req, res));
    this.server = server;
    this.wss = new WebSocketServer({ server, path: '/socket' });
    this.wss.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('message', (data) => {
        const parsed = JSON.parse(String(data)) as { envelope_id?: string };
        if (parsed.envelope_id) this.acks.push(parsed.envelope_id);
      });
      socket.on('close', () => this.sockets.delete(socket));
      socket.send(
        JSON.stringify({
          type: 'hello',
          num_connections: 1,
          debug_info: { approximate_connection_time: 3600 },
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`;
  }

  /** Socket Mode: sends an Events API envelope to every connected client. */
  sendEnvelope(envelopeId: string, payload: Record<string, unknown>, type = 'events_api'): number {
    for (const socket of this.sockets)
      socket.send(
        JSON.stringify({ envelope_id: envelopeId, type, payload, accepts_response_payload: false }),
      );
    return this.sockets.size;
  }

  connected(): number {
    return this.sockets.size;
  }

  /** Messages of one result (by outbox event id), in part order. */
  resultParts(eventId: string): FakeMessage[] {
    return this.messages
      .filter((m) => m.metadata?.event_payload.event_id === eventId)
      .sort((a, b) => (a.metadata?.event_payload.part ?? 0) - (b.metadata?.event_payload.part ?? 0));
  }

  results(): FakeMessage[] {
    return this.messages.filter((m) => m.metadata?.event_type === 'crew_result');
  }

  replies(thread: string): FakeMessage[] {
    return this.messages.filter((m) => m.thread_ts === thread);
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    for (const socket of this.sockets) socket.terminate();
    await new Promise<void>((resolve) => this.wss?.close(() => resolve()));
    await new Promise<void>((resolve) => {
      this.server?.close(() => resolve());
      this.server?.closeAllConnections();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const method = (req.url ?? '').replace(/^\/api\//, '').split('?')[0] as string;
    const text = Buffer.concat(chunks).toString('utf8');
    let body: Record<string, unknown> = {};
    try {
      body = text.startsWith('{') ? JSON.parse(text) : Object.fromEntries(new URLSearchParams(text));
    } catch {
      body = {};
    }
    this.calls.push({ method, body, at: Date.now() });
    const failure = this.failures[method]?.shift();
    const send = (status: number, answer: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(answer));
    };
    if (failure && 'status' in failure)
      return send(429, { ok: false, error: 'ratelimited' }, { 'retry-after': String(failure.retryAfter) });
    if (failure && 'error' in failure) return send(200, { ok: false, error: failure.error });
    switch (method) {
      case 'conversations.open':
        return send(200, { ok: true, channel: { id: `D${String(body.users)}` } });
      case 'chat.postMessage': {
        const ts = `1700000000.${String(++this.seq).padStart(6, '0')}`;
        this.messages.push({ ...(body as unknown as FakeMessage), ts, at: Date.now() });
        if (failure && 'hang' in failure) {
          this.hanging.add(res); // it landed; the answer never comes
          return;
        }
        return send(200, { ok: true, channel: body.channel, ts });
      }
      case 'chat.update':
        this.updates.push(body);
        return send(200, { ok: true, channel: body.channel, ts: body.ts });
      case 'conversations.history':
        return send(200, {
          ok: true,
          messages: this.messages.filter((m) => m.channel === body.channel).reverse(),
          has_more: false,
        });
      case 'apps.connections.open':
        return send(200, {
          ok: true,
          url: `${this.url.replace('http', 'ws').replace(/\/api\/$/, '')}/socket`,
        });
      case 'auth.test':
        return send(200, { ok: true, user_id: 'UBOT', bot_id: 'BBOT', team_id: 'T1' });
      default:
        return send(200, { ok: false, error: 'unknown_method' });
    }
  }
}

export const TEST_SIGNING_SECRET = 'test-signing-secret-0123456789';

/** Posts a body to `/slack/events` signed with `secret` (a JSON event, or a form). */
export async function postToSlackRoute(
  daemonUrl: string,
  body: string,
  options: {
    contentType?: string;
    secret?: string;
    timestampSecs?: number;
    signature?: string;
    query?: string;
  } = {},
): Promise<{ status: number; text: string; ms: number }> {
  const ts = String(options.timestampSecs ?? Math.floor(Date.now() / 1000));
  const signature = options.signature ?? signSlackRequest(options.secret ?? TEST_SIGNING_SECRET, ts, body);
  const started = performance.now();
  const response = await fetch(`${daemonUrl}/slack/events${options.query ?? ''}`, {
    method: 'POST',
    headers: {
      'content-type': options.contentType ?? 'application/json',
      'x-slack-request-timestamp': ts,
      'x-slack-signature': signature,
    },
    body,
  });
  const text = await response.text();
  return { status: response.status, text, ms: performance.now() - started };
}

let eventSeq = 0;

/** An Events API callback for a DM (`message.im`) or a mention. */
export function dmEvent(
  user: string,
  text: string,
  options: { mention?: boolean; ts?: string } = {},
): {
  body: string;
  ts: string;
  eventId: string;
  payload: Record<string, unknown>;
} {
  const ts = options.ts ?? `1800000000.${String(++eventSeq).padStart(6, '0')}`;
  const eventId = `Ev${Date.now()}${eventSeq}`;
  const event = options.mention
    ? { type: 'app_mention', user, text: `<@UBOT> ${text}`, channel: 'C1', ts, event_ts: ts }
    : { type: 'message', channel_type: 'im', user, text, channel: `D${user}`, ts, event_ts: ts };
  const payload = {
    token: 'x',
    team_id: 'T1',
    api_app_id: 'A1',
    type: 'event_callback',
    event_id: eventId,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [{ team_id: 'T1', user_id: 'UBOT', is_bot: true }],
    event,
  };
  return { body: JSON.stringify(payload), ts, eventId, payload };
}

/** The interactive payload of an Ack press on a posted message, as a form body. */
export function ackPress(user: string, message: FakeMessage, runId: string): string {
  const payload = {
    type: 'block_actions',
    team: { id: 'T1' },
    user: { id: user },
    api_app_id: 'A1',
    token: 'x',
    trigger_id: 't',
    container: { type: 'message', channel_id: message.channel, message_ts: message.ts },
    channel: { id: message.channel },
    message: { ts: message.ts, text: message.text, blocks: message.blocks ?? [] },
    actions: [{ type: 'button', action_id: 'crew_ack', block_id: 'b', value: runId, action_ts: '1' }],
  };
  return new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
}
