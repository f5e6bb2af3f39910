import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { anthropicCountTokens, anthropicError, anthropicReply, anthropicRequest } from './anthropic.js';
import { geminiCountTokens, geminiError, geminiReply, geminiRequest } from './gemini.js';
import { chatReply, chatRequest, openaiError, responsesReply, responsesRequest } from './openai.js';
import {
  DEFAULT_REPLY,
  directiveScript,
  type ModelRequest,
  type Script,
  type ScriptReply,
} from './script.js';
import { sendJson } from './sse.js';

/**
 * A scripted LLM provider on loopback HTTP (`crew-fake-provider`, and the helper the real-agent tests
 * use): it speaks enough of Anthropic Messages, OpenAI Responses and Chat Completions, and Gemini for the
 * agent CLIs Crew drives to complete real turns offline, and records every request.
 *
 * ```ts
 * const provider = await startFakeProvider();            // 127.0.0.1, a free port
 * // ANTHROPIC_BASE_URL=provider.url, OPENAI base_url=`${provider.url}/v1`, GOOGLE_GEMINI_BASE_URL=provider.url
 * provider.requests;                                      // what the agent sent, oldest first
 * provider.setScript((req) => ({ kind: 'text', text: 'hi' })); // or `#fake` lines in the prompt (script.ts)
 * await provider.close();                                 // also ends hung requests
 * ```
 *
 * Routes: `POST /v1/messages`, `POST /v1/messages/count_tokens`, `POST /v1/responses`,
 * `POST /v1/chat/completions` (each also without `/v1`), `POST /v1beta/models/M:generateContent`,
 * `:streamGenerateContent` (SSE with `?alt=sse`), `:countTokens`, and `GET /v1/models`. Anything else
 * answers 404 with the path, which the recorded request shows too.
 */

export interface FakeProviderOptions {
  /** The script; @default directiveScript(reply) */
  script?: Script;
  /** The text the default script answers when a prompt has no `#fake` line. @default "Hello from the fake provider." */
  reply?: string;
  /** Loopback only: `127.0.0.1`, `::1` or `localhost`. @default '127.0.0.1' */
  host?: string;
  /** @default 0 (a free port) */
  port?: number;
  /** Requests kept for assertions (oldest dropped first). @default 1000 */
  maxRecorded?: number;
}

/** One request as the provider saw it, and what it answered. */
export interface RecordedRequest {
  /** Which wire format it was (`count_tokens` and `models` calls included), or `unknown`. */
  api: ModelRequest['api'] | 'anthropic-count-tokens' | 'gemini-count-tokens' | 'models' | 'unknown';
  method: string;
  /** Path and query, as sent. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body (undefined when none or not JSON). */
  body: unknown;
  /** The common view of a model request (absent for side routes). */
  request?: ModelRequest;
  /** What was answered: `text`, `tool`, `error`, `hang`, or `route` for side routes. */
  reply: ScriptReply['kind'] | 'route';
  /** Tool name for `tool`, status for `error`. */
  detail?: string | number;
  /** `Date.now()` when it arrived. */
  at: number;
}

export interface FakeProvider {
  /** `http://127.0.0.1:PORT` (no trailing slash, no `/v1`). */
  readonly url: string;
  readonly port: number;
  /** Every request so far, oldest first (bounded by `maxRecorded`). */
  readonly requests: readonly RecordedRequest[];
  /** Replaces the script for the requests that follow. */
  setScript(script: Script): void;
  /** Forgets the recorded requests. */
  clearRequests(): void;
  /** Stops listening and ends every open (hung or streaming) connection. */
  close(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);
const MAX_BODY_BYTES = 32 * 1024 * 1024;

export async function startFakeProvider(options: FakeProviderOptions = {}): Promise<FakeProvider> {
  const host = options.host ?? '127.0.0.1';
  // The fake provider is a test tool; its host comes from code (tests, the demo), never from a request.
  if (!LOOPBACK.has(host)) {
    throw new Error(
      `Expected a loopback host (127.0.0.1, ::1, localhost) for the fake provider, got "${host}"`,
    );
  }
  const maxRecorded = options.maxRecorded ?? 1000;
  let script = options.script ?? directiveScript(options.reply ?? DEFAULT_REPLY);
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  let counter = 0;
  const nextId = () => (++counter).toString(36).padStart(6, '0');

  const record = (entry: RecordedRequest) => {
    requests.push(entry);
    if (requests.length > maxRecorded) requests.splice(0, requests.length - maxRecorded);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const raw = await readBody(req);
    let body: Record<string, unknown> = {};
    try {
      if (raw.length > 0) body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      // Not JSON: the route answers from the empty object.
    }
    const url = new URL(req.url ?? '/', 'http://fake');
    const path = url.pathname.replace(/^\/v1(?=\/(messages|responses|chat|models))/, '');
    const base = {
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      headers: req.headers,
      body,
      at: Date.now(),
    };
    const gemini =
      /^\/(?:v1beta|v1|v1alpha)\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/.exec(
        url.pathname,
      );

    if (req.method === 'GET' && path === '/models') {
      record({ ...base, api: 'models', reply: 'route' });
      sendJson(res, 200, { object: 'list', data: [{ id: 'fake-model', object: 'model', owned_by: 'crew' }] });
      return;
    }
    if (req.method !== 'POST') return notFound(res, base, record);
    if (path === '/messages/count_tokens') {
      record({ ...base, api: 'anthropic-count-tokens', reply: 'route' });
      return anthropicCountTokens(res, body);
    }
    if (gemini?.[2] === 'countTokens') {
      record({ ...base, api: 'gemini-count-tokens', reply: 'route' });
      return geminiCountTokens(res, body);
    }
    let request: ModelRequest;
    if (path === '/messages') request = anthropicRequest(body);
    else if (path === '/responses') request = responsesRequest(body);
    else if (path === '/chat/completions') request = chatRequest(body);
    else if (gemini) request = geminiRequest(body, gemini[1] ?? '', gemini[2] === 'streamGenerateContent');
    else return notFound(res, base, record);

    const reply = script(request);
    record({
      ...base,
      api: request.api,
      request,
      reply: reply.kind,
      ...(reply.kind === 'tool' && { detail: reply.name }),
      ...(reply.kind === 'error' && { detail: reply.status }),
    });
    if (reply.kind === 'hang') return; // The socket stays open until the client or close() ends it.
    const id = nextId();
    if (reply.kind === 'error') {
      if (request.api === 'anthropic') anthropicError(res, reply);
      else if (request.api === 'gemini') geminiError(res, reply);
      else openaiError(res, reply);
      return;
    }
    switch (request.api) {
      case 'anthropic':
        return anthropicReply(
          res,
          request,
          reply,
          { messageId: `msg_fake${id}`, toolId: `toolu_fake${id}` },
          raw.length,
        );
      case 'openai-responses':
        return responsesReply(
          res,
          request,
          reply,
          { responseId: `resp_fake${id}`, itemId: `item_fake${id}`, callId: `call_fake${id}` },
          raw.length,
        );
      case 'openai-chat':
        return chatReply(
          res,
          request,
          reply,
          { completionId: `chatcmpl-fake${id}`, callId: `call_fake${id}` },
          raw.length,
        );
      case 'gemini':
        return geminiReply(res, request, reply, raw.length);
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: String(error) } });
      else res.end();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${port}`,
    port,
    requests,
    setScript(next) {
      script = next;
    },
    clearRequests() {
      requests.length = 0;
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function notFound(
  res: ServerResponse,
  base: Omit<RecordedRequest, 'api' | 'reply'>,
  record: (entry: RecordedRequest) => void,
): void {
  record({ ...base, api: 'unknown', reply: 'route' });
  sendJson(res, 404, { error: { message: `the fake provider has no route ${base.method} ${base.url}` } });
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error(`request body over ${MAX_BODY_BYTES} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
