import type { App } from './app-env.js';

export interface HealthRouteDeps {
  /** The open MCP sessions' figures, beside the pid the CLI and the bridge probe for. */
  mcpSessions: () => object;
  resources: () => object;
}

/** `GET /api/health` (is this daemon up, and whose is it) and `GET /api/resources` (`resource_status`). */
export function mountHealthRoutes(app: App, deps: HealthRouteDeps): void {
  app.get('/api/health', (c) => c.json({ ok: true, pid: process.pid, mcp_sessions: deps.mcpSessions() }));
  app.get('/api/resources', (c) => c.json({ ok: true, ...deps.resources() }));
}
