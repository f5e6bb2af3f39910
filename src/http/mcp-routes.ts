import { randomUUID } from 'node:crypto';
import { ServerResponse } from 'node:http';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { refuse } from '../core/errors.js';
import type { Gateway } from '../gateway/gateway.js';
import type { DeliveredEvent } from '../gateway/relay.js';
import { CWD_HEADER, PARENT_HEADER } from '../mcp/bridge-headers.js';
import { createMcpServer } from '../mcp/mcp-server.js';
import type { McpSessions } from '../mcp/mcp-sessions.js';
import { WaveTasks } from '../mcp/wave-tasks.js';
import type { App } from './app-env.js';
import { MAX_BODY_BYTES } from './body-limit.js';
import type { ClientNames } from './client-names.js';
import type { Refused } from './edge-replies.js';
import { answerIfModern } from './mcp-modern-entry.js';
import { NotificationStream, STREAM_RETRY_MS } from './mcp-notification-stream.js';
import { mcpParentFor } from './mcp-parent.js';
import { parentCwdFor } from './principal-scope.js';
import { bearerOf, safeEqual } from './tokens.js';

/** Who owns an MCP session: the bearer token that initialized it (its parent is fixed then too). */
interface SessionOwner {
  token: string;
}

export interface McpRouteDeps {
  gateway: Gateway;
  sessions: McpSessions<WebStandardStreamableHTTPServerTransport>;
  resources: () => object;
  refused: Refused;
  /** Client names of the sessions that are their own parent (the dashboard shows them). */
  clientNames?: ClientNames;
}

/**
 * MCP Streamable HTTP at `/mcp`: stateful, one MCP server per session, the session owned by the token
 * that initialized it; its notification stream is the parent's sink for pushed completion events.
 */
export function mountMcpRoutes(app: App, deps: McpRouteDeps): void {
  const { gateway, sessions, refused } = deps;
  /** Keyed by the transport, so a session's owner goes with it however the session ends. */
  const owners = new WeakMap<WebStandardStreamableHTTPServerTransport, SessionOwner>();
  const streams = new WeakMap<WebStandardStreamableHTTPServerTransport, NotificationStream>();
  const modernTasks = new WaveTasks(gateway);

  app.all('/mcp', async (c) => {
    const principal = c.get('principal');
    const token = bearerOf(c.req.header('authorization')) ?? '';
    const sessionId = c.req.header('mcp-session-id');
    // A POST (a call) keeps its session in use until answered; a GET (the notification stream every SDK
    // client holds open for the session's life, abandoned or not) only counts as a use when it starts.
    const isCall = c.req.method === 'POST';
    // MCP 2026-07-28: a stateless request is answered on its own (mcp-modern-route.ts).
    if (isCall && !sessionId) {
      const modern = await answerIfModern(c.req.raw, principal, modernTasks, deps);
      if (modern) return modern;
    }
    let transport = sessionId ? sessions.get(sessionId) : undefined;
    if (sessionId && !transport) {
      return c.json(
        {
          jsonrpc: '2.0',
          error: { code: -32001, message: 'unknown MCP session; initialize again' },
          id: null,
        },
        404,
      );
    }
    const owner = transport ? owners.get(transport) : undefined;
    if (transport && (!owner || !safeEqual(owner.token, token))) {
      return refused(
        c,
        refuse(
          'unauthorized',
          'this MCP session was initialized with another token; initialize a session of your own',
        ),
        401,
        { reason: 'session_token_mismatch' },
      );
    }
    // Only the owner's call marks the session in use (its end is marked when the answer is done).
    if (transport && sessionId && isCall) sessions.begin(sessionId);
    if (!transport) {
      const cwd = parentCwdFor(principal, c.req.header(CWD_HEADER) || undefined, 'X-Crew-Cwd');
      const ownParent = () => `mcp:${created.sessionId ?? 'anonymous'}`;
      const parentOf = mcpParentFor(principal, c.req.header(PARENT_HEADER), ownParent);
      // A session that is its own parent is named by its client's `clientInfo.name` (the only name it has).
      const named = parentOf === ownParent ? deps.clientNames : undefined;
      const stream = new NotificationStream();
      const created = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        maxRequestBodySize: MAX_BODY_BYTES,
        eventStore: stream.store,
        retryInterval: STREAM_RETRY_MS,
        onsessioninitialized: (id) => {
          sessions.add(id, created);
          if (isCall) sessions.begin(id);
        },
        onsessionclosed: (id) => {
          sessions.delete(id);
          named?.delete(`mcp:${id}`);
        },
      });
      let detach: (() => void) | undefined;
      let attachPush: (() => void) | undefined;
      const server = createMcpServer(
        () => ({
          gateway,
          parent: parentOf(),
          // A read is not a delivery: any operator session reads any run by id (issue 29).
          ...(principal.kind === 'operator' ? { reads: { kind: 'operator' as const } } : {}),
          ...(cwd ? { cwd } : {}),
          resources: deps.resources,
        }),
        {
          onLoggingEnabled: (push) => {
            // Delivered means seen: a push counts only on an open, resumable stream; without one the
            // event stays owed (spawn_wait returns it) and is pushed again when a stream opens.
            const sink = {
              deliver: async (event: DeliveredEvent) => {
                // Internal: the relay takes a failed push as "not delivered" and keeps the event owed;
                // this never reaches a user.
                if (!stream.isOpen()) throw new Error('no notification stream is open');
                await push(event);
              },
            };
            attachPush = () => {
              detach?.();
              detach = gateway.attachSink(parentOf(), sink);
            };
            attachPush();
          },
        },
      );
      stream.onOpened(() => attachPush?.());
      streams.set(created, stream);
      created.onclose = () => {
        detach?.();
        if (created.sessionId) {
          sessions.delete(created.sessionId);
          named?.delete(`mcp:${created.sessionId}`);
        }
      };
      if (named) {
        // `initialize` has been answered: the SDK holds the client's info.
        server.oninitialized = () => named.set(ownParent(), server.getClientVersion()?.name);
      }
      await server.connect(created);
      owners.set(created, { token });
      transport = created;
    }
    const stream = streams.get(transport);
    if (c.req.method === 'GET' && stream) return stream.handleGet(transport, c.req.raw);
    if (!isCall) return transport.handleRequest(c.req.raw);
    return inUseUntilDone(transport, c.req.raw, nodeResponseOf(c.env), () => {
      if (transport.sessionId) sessions.end(transport.sessionId);
    });
  });
}

/** The Node response under the request, when the app is served by the Node adapter (the daemon). */
function nodeResponseOf(env: unknown): ServerResponse | undefined {
  const outgoing = (env as { outgoing?: unknown } | undefined)?.outgoing;
  return outgoing instanceof ServerResponse ? outgoing : undefined;
}

/**
 * Hands the request to the session's transport and calls `done` once its response is over: at once for
 * a plain reply, when the stream ends (or the client goes) for a server-sent event stream, so a tool
 * call that answers late keeps its session in use meanwhile. Under the Node adapter the Node response's
 * `close` says so (it comes when the response is finished or its connection is gone); elsewhere the body
 * is piped through a stream that sees its end, which costs three web streams a call (issue 32 §4).
 */
async function inUseUntilDone(
  transport: WebStandardStreamableHTTPServerTransport,
  request: Request,
  outgoing: ServerResponse | undefined,
  done: () => void,
): Promise<Response> {
  let response: Response;
  try {
    response = await transport.handleRequest(request);
  } catch (error) {
    done();
    throw error;
  }
  if (!response.body) {
    done();
    return response;
  }
  if (outgoing) {
    if (outgoing.destroyed || outgoing.closed) done();
    else outgoing.once('close', done);
    return response;
  }
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  response.body.pipeTo(writable).then(done, done);
  return new Response(readable, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
