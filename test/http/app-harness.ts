import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ChatHost } from '../../src/chat/chat-host.js';
import type { ClusterLink } from '../../src/cluster/cluster-link.js';
import type { CrewConfig } from '../../src/core/config-schema.js';
import type { GatewayDeps } from '../../src/gateway/gateway.js';
import { createApp } from '../../src/http/app.js';
import { mountChatRoutes } from '../../src/http/chat-routes.js';
import { Tokens } from '../../src/http/tokens.js';
import type { Store } from '../../src/store/store.js';
import { type FakeWorld, fakeWorld } from '../helpers/fake-gateway.js';

/**
 * The daemon's HTTP surface in-process (`app.request()`, no socket) on a fake-runner gateway: what a
 * request gets back and what the SEL records, for the auth, scope and audit tests.
 */

export const HOST = 'crew.test:7878';
export const OPERATOR = 'operator-token-for-tests-0123456789';
export const REMOTE = '10.9.8.7';

export type Reply = {
  status: number;
  headers: Headers;
  body: { ok?: boolean; refusal?: { code: string; message: string; path?: string }; [k: string]: unknown };
};

export interface AppHarness {
  world: FakeWorld;
  tokens: Tokens;
  req(
    method: string,
    path: string,
    options?: { token?: string | null; body?: unknown; headers?: Record<string, string> },
  ): Promise<Reply>;
  /** An MCP SDK client on `/mcp` through `app.request()`. */
  mcp(token: string, headers?: Record<string, string>): Promise<{ client: Client; sessionId: () => string }>;
  close(): Promise<void>;
}

export function appHarness(
  overrides: Partial<CrewConfig> & {
    cap?: number;
    memoryGate?: GatewayDeps['memoryGate'];
    store?: Store;
    cluster?: ClusterLink;
    workspaces?: GatewayDeps['workspaces'];
  } = {},
): AppHarness {
  const world = fakeWorld(overrides);
  const tokens = new Tokens(OPERATOR);
  const { app, closeSessions } = createApp({
    gateway: world.gateway,
    tokens,
    allowedHosts: () => [HOST],
    resources: () => ({ cap: world.gateway.cap }),
    setConfig: () => undefined,
  });
  // Only the operator-only checks run before a chat is touched; no test gets past them with a chat.
  mountChatRoutes(app, { get: () => undefined, list: () => [] } as unknown as ChatHost);
  const env = { incoming: { socket: { remoteAddress: REMOTE } } };
  const fetchApp = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const headers = new Headers(request.headers);
    if (!headers.has('host')) headers.set('host', HOST);
    return app.request(new Request(request, { headers }), undefined, env);
  };
  const clients: Client[] = [];
  return {
    world,
    tokens,
    async req(method, path, options = {}) {
      const token = options.token === undefined ? OPERATOR : options.token;
      const response = await fetchApp(`http://${HOST}${path}`, {
        method,
        headers: {
          host: HOST,
          ...(token !== null ? { authorization: `Bearer ${token}` } : {}),
          ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...options.headers,
        },
        ...(options.body !== undefined
          ? { body: typeof options.body === 'string' ? options.body : JSON.stringify(options.body) }
          : {}),
      });
      const text = await response.text();
      let body: Reply['body'];
      try {
        body = JSON.parse(text);
      } catch {
        body = { raw: text };
      }
      return { status: response.status, headers: response.headers, body };
    },
    async mcp(token, headers = {}) {
      const transport = new StreamableHTTPClientTransport(new URL(`http://${HOST}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}`, ...headers } },
        fetch: fetchApp,
      });
      const client = new Client({ name: 'harness', version: '1' });
      await client.connect(transport);
      clients.push(client);
      return { client, sessionId: () => transport.sessionId ?? '' };
    },
    async close() {
      for (const client of clients) await client.close().catch(() => undefined);
      await closeSessions();
      await world.gateway.close();
    },
  };
}

/** The SEL lines written since `from` (an index into the records). */
export function selSince(world: FakeWorld, from: number) {
  return world.sel.records.slice(from);
}
