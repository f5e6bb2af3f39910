import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { ChatHost } from '../chat/chat-host.js';
import { readConfigFile, writeConfigFile } from '../config/config-file.js';
import { parseKeyValue } from '../core/config-schema.js';
import { capacityReadingOf } from '../dashboard/capacity-reading.js';
import { Dashboard } from '../dashboard/dashboard.js';
import type { Gateway } from '../gateway/gateway.js';
import { createApp } from '../http/app.js';
import { mountChatRoutes } from '../http/chat-routes.js';
import { ClientNames } from '../http/client-names.js';
import { dashboardAuthenticator, mountDashboardRoutes, sessionCookieName } from '../http/dashboard-routes.js';
import type { Tokens } from '../http/tokens.js';
import { attachDashboardSocket } from '../http/ws.js';
import type { DaemonMetrics } from '../metrics/daemon-metrics.js';
import { selPath } from '../sel/sel-writer.js';
import type { SlackService } from '../slack/slack-service.js';
import type { SqliteStore } from '../store/sqlite-store.js';
import type { DaemonBase, LateParts } from './daemon-parts.js';
import type { DaemonResources } from './daemon-resources.js';
import { parentNameLookup } from './parent-name-lookup.js';

/** How long an idle keep-alive connection to the daemon stays open (see `serveHttp`). */
export const KEEP_ALIVE_MS = 65_000;

export interface HttpParts {
  gateway: Gateway;
  store: SqliteStore;
  tokens: Tokens;
  chats: ChatHost;
  slack: SlackService | undefined;
  metrics: DaemonMetrics;
  resources: () => DaemonResources;
}

/**
 * The operator dashboard and the HTTP app (`/mcp`, `/api`, the chat and dashboard routes, Slack's events,
 * `/metrics`), listening on `host:port` (0 picks a free port); then the chats of the last run continue,
 * now that their parents can reach Crew's MCP endpoint, and the dashboard's WebSocket is attached.
 * Sets `late.baseUrl`; returns the port it listens on.
 */
export async function serveHttp(
  base: DaemonBase,
  port: number,
  parts: HttpParts,
  late: LateParts,
): Promise<{ port: number; url: string }> {
  const { config, crewHome, host, clock, cleanups } = base;
  const { gateway, store, tokens, chats, slack, metrics, resources } = parts;
  let listening = port;
  const allowed = () => [`${host}:${listening}`, `localhost:${listening}`, `127.0.0.1:${listening}`];
  // The operator dashboard (`/`, `/api/dashboard`, `/api/ws`): idle until a page or socket uses it.
  const clientNames = new ClientNames(config['mcp.max_sessions']);
  late.clientNames = clientNames;
  const dashboard = new Dashboard({
    gateway,
    viewsOf: (ids) =>
      ids.length === 0 ? [] : store.runs({ ids: [...ids], limit: ids.length }).map((r) => gateway.viewOf(r)),
    resources: () => ({ ...resources() }),
    selPath: selPath(crewHome),
    clock,
    readOnly: config['dashboard.read_only'],
    historyMax: config['agent.run_history_max'],
    queueBounds: {
      singles: config['agent.subagent_max_queued'],
      waveMembers: config['agent.subagent_max_queued_wave_members'],
    },
    capacityReading: capacityReadingOf(gateway),
    specOf: (id) => store.run(id)?.spec,
    parentName: parentNameLookup((parent) => clientNames.get(parent), store),
    history: {
      runs: (query) => store.runs(query).map((r) => gateway.viewOf(r)),
      statusCounts: () => store.statusCounts(),
    },
  });
  cleanups.add(() => dashboard.close());
  const cookieName = () => sessionCookieName(listening);
  const { app, closeSessions } = createApp({
    clientNames,
    authenticate: dashboardAuthenticator(dashboard, cookieName),
    gateway,
    tokens,
    allowedHosts: allowed,
    resources,
    mcpSessions: {
      clock,
      idleMs: config['mcp.session_idle_secs'] * 1000,
      max: config['mcp.max_sessions'],
    },
    setConfig: (key, value) => {
      const raw = readConfigFile(crewHome);
      const checked = parseKeyValue(key, value);
      if (checked.ok) raw[key] = checked.value;
      writeConfigFile(crewHome, raw);
    },
    ...(slack ? { publicRoutes: (app) => slack.mount(app) } : {}),
    metrics: { scrape: () => metrics.scrape(), tokens, scrapeToken: config['metrics.token'] },
  });
  mountChatRoutes(app, chats);
  mountDashboardRoutes(app, { dashboard, gateway, cookieName, baseUrl: () => late.baseUrl });
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: host, port: listening }, () => resolve(s));
    s.once('error', reject);
  });
  listening = (server.address() as AddressInfo).port;
  // An idle keep-alive connection stays open 65 s, not Node's 5 s. A client reuses one until a second before
  // the server's advertised timeout, so a request sent near that edge met a server closing the socket under
  // it ("fetch failed": a parent whose MCP client paused ~4.5 s between tool calls on a loaded host, once in
  // the CI's fuzz run); at 65 s only a connection idle for over a minute is near the edge.
  (server as unknown as HttpServer).keepAliveTimeout = KEEP_ALIVE_MS;
  late.baseUrl = `http://${host}:${listening}`;
  // Chats of the last run continue now that their parents can reach Crew's MCP endpoint.
  chats.restore();
  const closeSocket = attachDashboardSocket(server as unknown as HttpServer, {
    dashboard,
    tokens,
    allowedHosts: allowed,
    cookieName,
    audit: (refusal, where) => gateway.audit(refusal, where),
  });
  cleanups.add(async () => {
    await closeSocket();
    await closeSessions();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
    });
  });
  return { port: listening, url: late.baseUrl };
}
