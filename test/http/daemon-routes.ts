import type { ChatHost } from '../../src/chat/chat-host.js';
import type { Dashboard } from '../../src/dashboard/dashboard.js';
import type { Gateway } from '../../src/gateway/gateway.js';
import { createApp } from '../../src/http/app.js';
import { mountChatRoutes } from '../../src/http/chat-routes.js';
import { mountDashboardRoutes } from '../../src/http/dashboard-routes.js';
import { Tokens } from '../../src/http/tokens.js';
import { mountSlackEvents } from '../../src/slack/slack-http.js';

/** One route of the daemon's app: its method (`ALL` for `app.all`) and its path pattern (`:id`, `*`). */
export interface MountedRoute {
  method: string;
  path: string;
}

/**
 * Every route `crew serve` mounts, read from an app composed as the daemon composes it (createApp, the
 * chat and dashboard routes, Slack's events route), so a route added there is fuzzed without a list
 * here going stale. Middleware (`app.use`) is left out. Nothing is called: the parts are never used.
 */
export function daemonRoutes(): MountedRoute[] {
  const unused = {} as never;
  const { app } = createApp({
    gateway: unused as Gateway,
    tokens: new Tokens('unused-operator-token-0123456789'),
    allowedHosts: () => [],
    resources: () => ({}),
    setConfig: () => undefined,
    publicRoutes: (a) =>
      mountSlackEvents(a, {
        signingSecret: '',
        clock: unused,
        sel: unused,
        dispatch: () => undefined,
      }),
  });
  mountChatRoutes(app, unused as ChatHost);
  mountDashboardRoutes(app, {
    dashboard: unused as Dashboard,
    gateway: unused,
    cookieName: () => 'unused',
    baseUrl: () => '',
  });
  const seen = new Map<string, MountedRoute>();
  // app.use registers an ALL route too; its path is `*` or `/*`.
  for (const { method, path } of app.routes) {
    if (path === '*' || path === '/*') continue;
    seen.set(`${method} ${path}`, { method, path });
  }
  return [...seen.values()];
}

/** A concrete path for a route pattern: each `:param` (and a trailing `*`) replaced by `segment`. */
export function pathWith(route: MountedRoute, segment: string): string {
  return route.path.replace(/:[A-Za-z_]+/g, segment).replace(/\*$/, segment);
}

/** Methods to try on a route: its own, or (for `app.all`) the ones that carry a body and one that does not. */
export function methodsOf(route: MountedRoute): string[] {
  return route.method === 'ALL' ? ['GET', 'POST'] : [route.method];
}
