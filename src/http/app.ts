import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { Hono } from 'hono';
import { realClock } from '../clock/real-clock.js';
import type { Clock } from '../core/clock.js';
import type { Gateway } from '../gateway/gateway.js';
import { McpSessions } from '../mcp/mcp-sessions.js';
import type { App, AuthDecision, Vars } from './app-env.js';
import type { ClientNames } from './client-names.js';
import { mountConfigRoutes } from './config-routes.js';
import { refusedVia } from './edge-replies.js';
import { mountAuthGuard, mountErrorHandlers, mountHostGuard, mountNoOAuth } from './guards.js';
import { mountHealthRoutes } from './health-routes.js';
import { mountMcpRoutes } from './mcp-routes.js';
import { type MetricsRouteOptions, metricsHandler } from './metrics-route.js';
import { mountRunRoutes } from './run-routes.js';
import type { Tokens } from './tokens.js';

export { CWD_HEADER, PARENT_HEADER } from '../mcp/bridge-headers.js';
export type { AuthDecision } from './app-env.js';
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
  /** Client names of MCP sessions that are their own parent (see `ClientNames`). */
  clientNames?: ClientNames;
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

/**
 * The daemon's HTTP surface: MCP Streamable HTTP at `/mcp` (stateful, one server per session) and the
 * JSON API under `/api` that the CLI uses, every body one of DESIGN §6's shapes. Every request needs a
 * bearer token; Host and Origin are checked against DNS rebinding.
 *
 * The order of the mounts is the order a request meets them: what comes before the Host check (Slack,
 * which signs its requests) and before the bearer check (`/metrics`, which takes its own token) is
 * placed there on purpose. The daemon mounts the chat and dashboard routes after these.
 */
export function createApp(options: AppOptions): {
  app: App;
  closeSessions: () => Promise<void>;
  sessions: McpSessions<WebStandardStreamableHTTPServerTransport>;
} {
  const app: App = new Hono<{ Variables: Vars }>();
  const sessions = new McpSessions<WebStandardStreamableHTTPServerTransport>(
    options.mcpSessions ?? { clock: realClock, idleMs: 3_600_000, max: 512 },
  );
  const { gateway } = options;
  const refused = refusedVia(gateway);

  mountErrorHandlers(app, refused);
  options.publicRoutes?.(app);
  mountHostGuard(app, options.allowedHosts, refused);
  // Before the bearer check below: it also takes the scrape token, which that check does not know.
  if (options.metrics)
    app.get(
      '/metrics',
      metricsHandler(options.metrics, (c, r) => refused(c, r, 401)),
    );
  mountNoOAuth(app, refused);
  mountAuthGuard(app, { tokens: options.tokens, authenticate: options.authenticate }, refused);

  mountMcpRoutes(app, {
    gateway,
    sessions,
    resources: options.resources,
    refused,
    ...(options.clientNames ? { clientNames: options.clientNames } : {}),
  });
  mountHealthRoutes(app, { mcpSessions: () => sessions.stats(), resources: options.resources });
  mountRunRoutes(app, gateway);
  mountConfigRoutes(app, options.setConfig);

  return {
    app,
    closeSessions: () => sessions.close(),
    sessions,
  };
}
