import { randomUUID } from 'node:crypto';
import { statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { type Context, Hono } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { realClock } from '../clock/real-clock.js';
import type { Clock } from '../core/clock.js';
import { isConfigKey, parseKeyValue, shownValue } from '../core/config-schema.js';
import { CrewError, type Refusal, type RefusalCode, refuse } from '../core/errors.js';
import { parentCwdInvalid, parentCwdNotAllowed } from '../core/refusals.js';
import type { Gateway, Scope } from '../gateway/gateway.js';
import type { DeliveredEvent } from '../gateway/relay.js';
import { CWD_HEADER, PARENT_HEADER } from '../mcp/bridge-headers.js';
import { createMcpServer } from '../mcp/mcp-server.js';
import { McpSessions } from '../mcp/mcp-sessions.js';
import { isModernRequest } from '../mcp/modern-protocol.js';
import { WaveTasks } from '../mcp/wave-tasks.js';
import { isAllowedHost, isAllowedOrigin } from './allowed-host.js';
import { declaredOverLimit, limitBody, MAX_BODY_BYTES } from './body-limit.js';
import { answerModern } from './mcp-modern-route.js';
import { NotificationStream, STREAM_RETRY_MS } from './mcp-notification-stream.js';
import { mcpParentFor } from './mcp-parent.js';
import { type MetricsRouteOptions, metricsHandler } from './metrics-route.js';
import { bearerOf, type Principal, safeEqual, type Tokens } from './tokens.js';

/** HTTP status per refusal code, used only at this edge. */
const STATUS: Record<RefusalCode, ContentfulStatusCode> = {
  empty_task: 400,
  invalid_argument: 400,
  unknown_agent: 400,
  cwd_not_allowed: 400,
  batch_too_large: 400,
  depth_exceeded: 403,
  children_limit: 429,
  memory_critical: 503,
  queue_full: 429,
  not_found: 404,
  not_running: 409,
  conversation_busy: 409,
  conversation_released: 410,
  pruned: 410,
  unauthorized: 401,
  storage_unavailable: 503,
  cluster_unavailable: 503,
  not_here: 503,
  sandbox_unavailable: 503,
  merge_conflict: 409,
  merge_target_moved: 409,
  merge_target_checked_out: 409,
};

export { CWD_HEADER, PARENT_HEADER } from '../mcp/bridge-headers.js';
export { MAX_BODY_BYTES } from './body-limit.js';

export interface AppOptions {
  gateway: Gateway;
  tokens: Tokens;
  /** Hosts the daemon answers to (DNS-rebinding guard), e.g. `127.0.0.1:7878`. */
  allowedHosts: () => string[];
  resources: () => object;
  /** Persists one config key (`PUT /api/config`); the daemon applies it at its next start. */
  setConfig: (key: string, value: unknown) => void;
  /** Bounds on open MCP sessions (`mcp.session_idle_secs`, `mcp.max_sessions`); see {@link McpSessions}. */
  /** @default the real clock, an hour idle, 512 sessions (the config defaults) */
  mcpSessions?: { clock: Clock; idleMs: number; max: number };
  /**
   * Consulted before the bearer token (the dashboard's session cookie): `public` lets a request through
   * without a principal, `principal` admits it, `refused` answers it; undefined falls back to the bearer.
   */
  authenticate?: (req: Request) => AuthDecision | undefined;
  /**
   * Routes that authenticate themselves (Slack's request signature), mounted before the bearer-token,
   * Host and Origin checks: their callers are not local clients.
   */
  publicRoutes?: (app: Hono<{ Variables: Vars }>) => void;
  /** `GET /metrics` (src/metrics): scraped with the operator token or `metrics.token`. */
  metrics?: MetricsRouteOptions;
}

/** What `AppOptions.authenticate` decides for one request. */
export type AuthDecision =
  | { kind: 'public' }
  | { kind: 'principal'; principal: Principal }
  | { kind: 'refused'; status: 401 | 403; refusal: Refusal };

type Vars = { principal: Principal };

/** Who owns an MCP session: the bearer token that initialized it (its parent is fixed then too). */
interface SessionOwner {
  token: string;
}

/** The peer's address as the Node adapter gives it (absent in-process, e.g. `app.request()`). */
function remoteOf(env: unknown): string {
  return (
    (env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming?.socket
      ?.remoteAddress ?? 'unknown'
  );
}

/**
 * The directory a request's spawns start in when they name no `cwd` argument. Only the operator token
 * may name one (`crew mcp` and `crew spawn` send their own), and it must be an absolute path to a
 * directory; a run- or chat-scoped token's directory is the one Crew bound to it when minting it.
 */
function parentCwdFor(
  principal: Principal,
  requested: string | undefined,
  field: string,
): string | undefined {
  if (principal.kind !== 'operator') {
    if (requested !== undefined && requested !== principal.cwd)
      throw new CrewError(parentCwdNotAllowed(field));
    return principal.cwd;
  }
  if (requested === undefined) return undefined;
  if (!isAbsolute(requested) || !isDirectory(requested))
    throw new CrewError(parentCwdInvalid(field, requested));
  return requested;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** A principal as the SEL names it (never its token). */
function principalName(principal: Principal): string {
  if (principal.kind === 'run') return `run:${principal.runId}`;
  if (principal.kind === 'chat') return `chat:${principal.chatId}`;
  return 'operator';
}

/**
 * The parent key a request speaks for: a run or chat token fixes it (`run:<id>`, `chat:<id>`); the
 * operator may name one (`crew mcp` sends its own), else `fallback`.
 */
function parentFor(principal: Principal, requested: unknown, fallback: string): string {
  if (principal.kind === 'run') return `run:${principal.runId}`;
  if (principal.kind === 'chat') return `chat:${principal.chatId}`;
  return typeof requested === 'string' && /^[a-z]+:[\w.:@-]{1,200}$/.test(requested) ? requested : fallback;
}

/**
 * The daemon's HTTP surface: MCP Streamable HTTP at `/mcp` (stateful, one server per session) and the
 * JSON API under `/api` that the CLI uses, every body one of DESIGN §6's shapes. Every request needs a
 * bearer token; Host and Origin are checked against DNS rebinding.
 */
export function createApp(options: AppOptions): {
  app: Hono<{ Variables: Vars }>;
  closeSessions: () => Promise<void>;
  sessions: McpSessions<WebStandardStreamableHTTPServerTransport>;
} {
  const app = new Hono<{ Variables: Vars }>();
  const sessions = new McpSessions<WebStandardStreamableHTTPServerTransport>(
    options.mcpSessions ?? { clock: realClock, idleMs: 3_600_000, max: 512 },
  );
  /** Keyed by the transport, so a session's owner goes with it however the session ends. */
  const owners = new WeakMap<WebStandardStreamableHTTPServerTransport, SessionOwner>();
  const streams = new WeakMap<WebStandardStreamableHTTPServerTransport, NotificationStream>();
  const { gateway } = options;
  const modernTasks = new WaveTasks(gateway);

  type Ctx = Context<{ Variables: Vars }>;
  /**
   * Every refusal this edge makes itself is written to the SEL once, with the peer's address and the
   * route (never a token); the gateway audits the refusals its own methods answer.
   */
  const audit = (c: Ctx, refusal: Refusal, metadata: Record<string, unknown> = {}): void => {
    // Unset before the token is checked (auth failures, a bad Host).
    const principal = c.get('principal') as Principal | undefined;
    gateway.audit(refusal, {
      event_type: refusal.code === 'unauthorized' ? 'auth' : 'request',
      source: principal ? principalName(principal) : 'http',
      tool_name: `${c.req.method} ${c.req.path}`,
      metadata: { remote: remoteOf(c.env), route: c.req.path, method: c.req.method, ...metadata },
    });
  };
  const refused = (
    c: Ctx,
    refusal: Refusal,
    status: ContentfulStatusCode,
    metadata: Record<string, unknown> = {},
  ): Response => {
    audit(c, refusal, metadata);
    return c.json({ ok: false, refusal }, status);
  };

  app.onError((error, c) => {
    const refusal: Refusal =
      error instanceof CrewError
        ? error.refusal
        : refuse('invalid_argument', `request failed: ${error.message}`);
    return refused(c, refusal, STATUS[refusal.code] ?? 500);
  });

  app.notFound((c) =>
    refused(
      c,
      refuse('not_found', `no route ${c.req.method} ${c.req.path}; the API is /mcp and /api/*`),
      404,
    ),
  );

  // Every 401 says how to authenticate (RFC 6750); no OAuth is offered, so a client sends its token.
  app.use('*', async (c, next) => {
    await next();
    if (c.res.status === 401) c.res.headers.set('WWW-Authenticate', 'Bearer realm="crew"');
  });

  options.publicRoutes?.(app);

  app.use('*', async (c, next) => {
    const host = c.req.header('host') ?? '';
    if (!isAllowedHost(host, options.allowedHosts())) {
      return refused(c, refuse('unauthorized', `host ${host || '(none)'} is not served here`), 403, {
        reason: 'bad_host',
        host,
      });
    }
    const origin = c.req.header('origin');
    if (origin !== undefined && !isAllowedOrigin(origin, options.allowedHosts())) {
      return refused(c, refuse('unauthorized', `origin ${origin} is not allowed`), 403, {
        reason: 'bad_origin',
        origin,
      });
    }
    await next();
  });

  // Before the bearer check below: it also takes the scrape token, which that check does not know.
  if (options.metrics)
    app.get(
      '/metrics',
      metricsHandler(options.metrics, (c, r) => refused(c, r, 401)),
    );

  // OAuth discovery answers 404, so an MCP client does not start an OAuth flow Crew does not offer.
  app.all('/.well-known/*', (c) =>
    refused(
      c,
      refuse(
        'not_found',
        'Crew offers no OAuth; send the bearer token from $CREW_HOME/token in the Authorization header',
      ),
      404,
    ),
  );

  app.use('*', async (c, next) => {
    // A declared length over the bound is refused before the token is even looked at; the bytes that
    // arrive are counted once it is (limitBody, below).
    const declared = declaredOverLimit(c.req.header('content-length'), MAX_BODY_BYTES);
    if (declared) return refused(c, declared, 413);
    const decided = options.authenticate?.(c.req.raw);
    if (decided?.kind === 'refused') return refused(c, decided.refusal, decided.status);
    if (decided?.kind === 'public') return next();
    if (decided?.kind === 'principal') {
      c.set('principal', decided.principal);
      return next();
    }
    const token = bearerOf(c.req.header('authorization'));
    const principal = options.tokens.resolve(token);
    if (!principal) {
      return refused(
        c,
        refuse(
          'unauthorized',
          token === undefined
            ? 'a bearer token is required: the operator token is in $CREW_HOME/token'
            : 'the bearer token is invalid (not the operator token, nor one Crew minted for a live run or chat); the operator token is in $CREW_HOME/token',
        ),
        401,
        { reason: token === undefined ? 'no_token' : 'wrong_token' },
      );
    }
    c.set('principal', principal);
    await next();
  });

  app.use(
    '*',
    limitBody(MAX_BODY_BYTES, (c, refusal) => refused(c, refusal, 413)),
  );

  // ── MCP ──────────────────────────────────────────────────────────────────────────────────────
  app.all('/mcp', async (c) => {
    const principal = c.get('principal');
    const token = bearerOf(c.req.header('authorization')) ?? '';
    const sessionId = c.req.header('mcp-session-id');
    // A POST (a call) keeps its session in use until answered; a GET (the notification stream every SDK
    // client holds open for the session's life, abandoned or not) only counts as a use when it starts.
    const isCall = c.req.method === 'POST';
    // MCP 2026-07-28: a stateless request is answered on its own (mcp-modern-route.ts).
    if (isCall && !sessionId) {
      const modern = await answerIfModern(c.req.raw, principal, modernTasks, options);
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
      const parentOf = mcpParentFor(
        principal,
        c.req.header(PARENT_HEADER),
        () => `mcp:${created.sessionId ?? 'anonymous'}`,
      );
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
          resources: options.resources,
        }),
        {
          onLoggingEnabled: (push) => {
            // Delivered means seen: a push counts only on an open, resumable stream; without one the
            // event stays owed (spawn_wait returns it) and is pushed again when a stream opens.
            const sink = {
              deliver: async (event: DeliveredEvent) => {
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
        if (created.sessionId) sessions.delete(created.sessionId);
      };
      await server.connect(created);
      owners.set(created, { token });
      transport = created;
    }
    const stream = streams.get(transport);
    if (c.req.method === 'GET' && stream) return stream.handleGet(transport, c.req.raw);
    if (!isCall) return transport.handleRequest(c.req.raw);
    return inUseUntilDone(transport, c.req.raw, () => {
      if (transport.sessionId) sessions.end(transport.sessionId);
    });
  });

  // ── JSON API for the CLI (operator sees all; a run token sees its own subtree) ────────────────
  const scopeOf = (principal: Principal): Scope =>
    principal.kind === 'operator'
      ? { kind: 'operator' }
      : { kind: 'parent', parent: parentFor(principal, undefined, '') };
  const parentOf = (principal: Principal, requested: unknown): string =>
    parentFor(principal, requested, 'cli:operator');
  const reply = (
    c: { json: (body: unknown, status?: ContentfulStatusCode) => Response },
    body: { ok: boolean; refusal?: Refusal },
  ) => c.json(body, body.ok ? 200 : (STATUS[body.refusal?.code ?? 'invalid_argument'] ?? 400));
  const readJson = async (req: { json: () => Promise<unknown> }): Promise<Record<string, unknown>> => {
    try {
      const body = await req.json();
      if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new Error('not an object');
      return body as Record<string, unknown>;
    } catch {
      throw new CrewError(refuse('invalid_argument', 'the body must be a JSON object', { path: '(body)' }));
    }
  };

  app.get('/api/health', (c) => c.json({ ok: true, pid: process.pid, mcp_sessions: sessions.stats() }));

  app.post('/api/spawn', async (c) => {
    const body = await readJson(c.req);
    const principal = c.get('principal');
    if (body.cwd !== undefined && typeof body.cwd !== 'string')
      throw new CrewError(refuse('invalid_argument', 'cwd must be a string (a directory)', { path: 'cwd' }));
    const cwd = parentCwdFor(principal, body.cwd as string | undefined, 'cwd');
    return reply(c, await gateway.admit(parentOf(principal, body.parent), body.args ?? {}, cwd));
  });

  app.get('/api/runs', (c) => {
    const limit = Number(c.req.query('limit') ?? 500);
    return c.json(
      gateway.list(
        scopeOf(c.get('principal')),
        Number.isFinite(limit) && limit > 0 ? Math.min(limit, 100_000) : 500,
      ),
    );
  });

  app.get('/api/runs/:id', async (c) => {
    const num = (name: string) => {
      const raw = c.req.query(name);
      if (raw === undefined) return undefined;
      const value = Number(raw);
      if (!Number.isInteger(value))
        throw new CrewError(refuse('invalid_argument', `${name} must be an integer`, { path: name }));
      return value;
    };
    const offset = num('offset');
    const limit = num('limit');
    const grep = c.req.query('grep');
    return reply(
      c,
      await gateway.status(c.req.param('id'), scopeOf(c.get('principal')), {
        ...(offset !== undefined ? { offset } : {}),
        ...(limit !== undefined ? { limit } : {}),
        ...(grep !== undefined ? { grep } : {}),
      }),
    );
  });

  app.post('/api/runs/:id/cancel', (c) =>
    reply(c, gateway.cancel(c.req.param('id'), scopeOf(c.get('principal')))),
  );

  // spawn_merge (issue 31): {agent_id | batch_id, target}.
  app.post('/api/merge', async (c) =>
    reply(c, await gateway.merge(await readJson(c.req), scopeOf(c.get('principal')))),
  );

  app.post('/api/runs/:id/steer', async (c) => {
    const body = await readJson(c.req);
    const mode = body.mode === 'follow_up' ? 'follow_up' : 'interrupt';
    return reply(
      c,
      gateway.steer(c.req.param('id'), String(body.message ?? ''), mode, scopeOf(c.get('principal'))),
    );
  });

  app.post('/api/conversations/:id/continue', async (c) => {
    const body = await readJson(c.req);
    const principal = c.get('principal');
    return reply(
      c,
      await gateway.admitContinue(
        parentOf(principal, body.parent),
        { ...((body.args as object) ?? {}), conversation: c.req.param('id') },
        scopeOf(principal),
      ),
    );
  });

  app.post('/api/conversations/:id/release', (c) =>
    reply(c, gateway.release(c.req.param('id'), scopeOf(c.get('principal')))),
  );

  app.get('/api/events', async (c) => {
    const principal = c.get('principal');
    const timeout = Math.min(Math.max(Number(c.req.query('timeout_secs') ?? 30), 0), 50);
    const events = await gateway.waitForEvents(parentOf(principal, c.req.query('parent')), timeout * 1000);
    return c.json({ ok: true, events });
  });

  app.get('/api/resources', (c) => c.json({ ok: true, ...options.resources() }));

  app.put('/api/config', async (c) => {
    if (c.get('principal').kind !== 'operator')
      throw new CrewError(refuse('unauthorized', 'only the operator may change configuration'));
    const body = await readJson(c.req);
    const key = String(body.key ?? '');
    if (key === 'agent.max_subagents' && (body.value === 1 || body.value === 2)) {
      throw new CrewError(
        refuse(
          'invalid_argument',
          'agent.max_subagents must be 0 (auto) or at least 3; 1 and 2 are refused here',
          {
            path: 'value',
            limit: 3,
            current: body.value as number,
          },
        ),
      );
    }
    if (!key.startsWith('agents.') && !isConfigKey(key)) {
      throw new CrewError(refuse('invalid_argument', `unknown configuration key ${key}`, { path: 'key' }));
    }
    const checked = parseKeyValue(key, body.value);
    if (!checked.ok) {
      throw new CrewError(
        refuse(
          'invalid_argument',
          checked.problems.map((p) => `${p.key}: expected ${p.expected}, got ${p.got}`).join('; '),
          {
            path: 'value',
          },
        ),
      );
    }
    options.setConfig(key, checked.value);
    return c.json({
      ok: true,
      key,
      value: shownValue(key, checked.value),
      applies: 'at the next start of the daemon',
    });
  });

  return {
    app,
    closeSessions: () => sessions.close(),
    sessions,
  };
}

/**
 * Hands the request to the session's transport and calls `done` once its response is over: at once for
 * a plain reply, when the stream ends (or the client goes) for a server-sent event stream, so a tool
 * call that answers late keeps its session in use meanwhile.
 */
/**
 * The answer to a POST without a session when it is a 2026-07-28 request, else `undefined` (the
 * session-based endpoint's). The body is read from a copy, so the other path still gets it whole. The
 * parent is the token's, else `X-Crew-Parent`'s, else `mcp:stateless` (docs/decisions.md, issue 29).
 */
async function answerIfModern(
  raw: Request,
  principal: Principal,
  tasks: WaveTasks,
  options: AppOptions,
): Promise<Response | undefined> {
  const header = (name: string) => raw.headers.get(name) ?? undefined;
  let body: unknown;
  try {
    body = await raw.clone().json();
  } catch {
    body = undefined;
  }
  if (!isModernRequest(body, header)) return undefined;
  const parent = mcpParentFor(principal, header(PARENT_HEADER), () => STATELESS_PARENT)();
  const cwd = parentCwdFor(principal, header(CWD_HEADER) || undefined, 'X-Crew-Cwd');
  return answerModern(
    body,
    header,
    {
      parent,
      ...(cwd ? { cwd } : {}),
      ...(principal.kind === 'operator' ? { reads: { kind: 'operator' as const } } : {}),
    },
    { gateway: options.gateway, tasks, resources: options.resources },
    raw.signal,
  );
}

/** The parent of an operator's stateless requests that name none with `X-Crew-Parent`. */
const STATELESS_PARENT = 'mcp:stateless';

async function inUseUntilDone(
  transport: WebStandardStreamableHTTPServerTransport,
  request: Request,
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
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  response.body.pipeTo(writable).then(done, done);
  return new Response(readable, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
