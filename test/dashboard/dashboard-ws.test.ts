import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { Dashboard } from '../../src/dashboard/dashboard.js';
import { toRunView } from '../../src/gateway/run-view.js';
import { createApp } from '../../src/http/app.js';
import { dashboardAuthenticator, mountDashboardRoutes } from '../../src/http/dashboard-routes.js';
import { Tokens } from '../../src/http/tokens.js';
import { attachDashboardSocket } from '../../src/http/ws.js';
import { fakeWorld } from '../helpers/fake-gateway.js';

const OPERATOR = 'operator-token-0123456789abcdef';
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function rig() {
  const world = fakeWorld();
  const tokens = new Tokens(OPERATOR);
  const dashboard = new Dashboard({
    gateway: world.gateway,
    viewsOf: (ids) => world.store.runs({ ids: [...ids], limit: ids.length }).map(toRunView),
    resources: () => ({ cap: 3 }),
    selPath: '/nonexistent',
    clock: world.clock,
    readOnly: false,
    historyMax: 1000,
    queueBounds: { singles: 32, waveMembers: 5000 },
    replayMax: 5,
  });
  let port = 0;
  const allowed = () => [`127.0.0.1:${port}`];
  const cookieName = () => `crew_session_${port}`;
  const { app } = createApp({
    gateway: world.gateway,
    tokens,
    allowedHosts: allowed,
    resources: () => ({}),
    setConfig: () => undefined,
    authenticate: dashboardAuthenticator(dashboard, cookieName),
  });
  mountDashboardRoutes(app, { dashboard, gateway: world.gateway, cookieName, baseUrl: () => '' });
  const server = await new Promise<Server>((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () =>
      resolve(s as unknown as Server),
    );
  });
  port = (server.address() as AddressInfo).port;
  const detach = attachDashboardSocket(server, {
    dashboard,
    tokens,
    allowedHosts: allowed,
    cookieName,
    audit: (refusal, where) => world.gateway.audit(refusal, where),
  });
  cleanups.push(async () => {
    await detach();
    dashboard.close();
    await new Promise<void>((r) => server.close(() => r()));
    await world.gateway.close();
  });
  return { world, dashboard, port, cookieName };
}

type Message = Record<string, unknown> & { type: string; seq?: number };

/** Opens a socket and collects its messages; resolves with the upgrade's HTTP status when refused. */
function open(
  url: string,
  headers: Record<string, string>,
): Promise<{ ws?: WebSocket; messages: Message[]; status?: number }> {
  return new Promise((resolve) => {
    const messages: Message[] = [];
    const ws = new WebSocket(url, { headers });
    ws.on('message', (data) => messages.push(JSON.parse(String(data))));
    ws.on('open', () => resolve({ ws, messages }));
    ws.on('unexpected-response', (_req, res) => resolve({ messages, status: res.statusCode ?? 0 }));
    ws.on('error', () => resolve({ messages, status: -1 }));
  });
}

const until = async (what: () => boolean) => {
  for (let i = 0; i < 200 && !what(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(what()).toBe(true);
};

describe('the dashboard WebSocket (/api/ws)', () => {
  it('refuses an upgrade without a session or the operator bearer (401), or from a foreign Origin or Host (403)', async () => {
    const { port } = await rig();
    const url = `ws://127.0.0.1:${port}/api/ws`;
    expect((await open(url, {})).status).toBe(401);
    expect((await open(url, { cookie: `crew_session_${port}=forged` })).status).toBe(401);
    expect(
      (await open(url, { authorization: `Bearer ${OPERATOR}`, origin: 'http://evil.example' })).status,
    ).toBe(403);
    expect(
      (await open(url, { authorization: `Bearer ${OPERATOR}`, host: `evil.example:${port}` })).status,
    ).toBe(403);
  });

  it('writes each refused upgrade to the SEL like an HTTP refusal: code, remote, route, reason; never the token', async () => {
    const { port, world } = await rig();
    const url = `ws://127.0.0.1:${port}/api/ws`;
    const wrong = 'crew_run_not-a-live-token-0123456789';
    const cases: {
      headers: Record<string, string>;
      status: number;
      code: string;
      reason: string;
      at?: string;
    }[] = [
      { headers: {}, status: 401, code: 'unauthorized', reason: 'no_token' },
      {
        headers: { authorization: `Bearer ${wrong}` },
        status: 401,
        code: 'unauthorized',
        reason: 'wrong_token',
      },
      {
        headers: { cookie: `crew_session_${port}=forged` },
        status: 401,
        code: 'unauthorized',
        reason: 'bad_session',
      },
      {
        headers: { authorization: `Bearer ${OPERATOR}`, origin: 'http://evil.example' },
        status: 403,
        code: 'unauthorized',
        reason: 'bad_origin',
      },
      {
        headers: { authorization: `Bearer ${OPERATOR}`, host: `evil.example:${port}` },
        status: 403,
        code: 'unauthorized',
        reason: 'bad_host',
      },
      {
        headers: { authorization: `Bearer ${OPERATOR}` },
        status: 404,
        code: 'not_found',
        reason: 'no_route',
        at: `ws://127.0.0.1:${port}/api/other`,
      },
    ];
    for (const c of cases) {
      const from = world.sel.records.length;
      expect((await open(c.at ?? url, c.headers)).status, c.reason).toBe(c.status);
      const lines = world.sel.records.slice(from);
      expect(lines, c.reason).toHaveLength(1);
      expect(lines[0]).toMatchObject({
        event_type: c.code === 'unauthorized' ? 'auth' : 'request',
        outcome: `refused_${c.code}`,
        metadata: {
          code: c.code,
          reason: c.reason,
          remote: '127.0.0.1',
          route: new URL(c.at ?? url).pathname,
          upgrade: 'websocket',
        },
      });
      const line = JSON.stringify(lines[0]);
      expect(line).not.toContain(OPERATOR);
      expect(line).not.toContain(wrong);
      expect(line).not.toContain('forged');
    }
  });

  it('with a session: hello, then a typed message per change with consecutive sequence numbers', async () => {
    const { port, dashboard, world, cookieName } = await rig();
    const session = dashboard.sessions.create();
    const { ws, messages } = await open(`ws://127.0.0.1:${port}/api/ws`, {
      cookie: `${cookieName()}=${session.id}`,
      origin: `http://127.0.0.1:${port}`,
    });
    cleanups.push(() => ws?.terminate());
    await until(() => messages.length === 1);
    expect(messages[0]).toMatchObject({ type: 'hello', seq: 0, resume: 'snapshot' });
    world.gateway.spawn('cli:a', { task: 'sleep=10 one' });
    await world.clock.advance(0);
    await until(() => messages.length === 2);
    await world.clock.advance(50);
    await until(() => messages.some((m) => m.type === 'runs' && JSON.stringify(m).includes('"completed"')));
    const seqs = messages.slice(1).map((m) => m.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  });

  it('a client that reconnects resumes after its last sequence number; one too far behind reloads', async () => {
    const { port, dashboard, world } = await rig();
    const headers = { authorization: `Bearer ${OPERATOR}` };
    const first = await open(`ws://127.0.0.1:${port}/api/ws`, headers);
    await until(() => first.messages.length === 1);
    world.gateway.spawn('cli:a', { task: 'hang a' });
    await world.clock.advance(0);
    await until(() => first.messages.length === 2);
    const lastSeen = first.messages[1]?.seq as number;
    first.ws?.terminate();
    // Two changes while away.
    world.gateway.spawn('cli:a', { task: 'hang b' });
    await world.clock.advance(0);
    world.gateway.spawn('cli:a', { task: 'hang c' });
    await world.clock.advance(0);
    const epoch = dashboard.feed.epoch;
    const back = await open(`ws://127.0.0.1:${port}/api/ws?epoch=${epoch}&since=${lastSeen}`, headers);
    cleanups.push(() => back.ws?.terminate());
    await until(() => back.messages.length === 3);
    expect(back.messages[0]).toMatchObject({ type: 'hello', resume: 'replay' });
    expect(back.messages.slice(1).map((m) => m.seq)).toEqual([lastSeen + 1, lastSeen + 2]);
    // The buffer holds 5: fall further behind than that and the answer is a snapshot.
    for (let i = 0; i < 6; i++) {
      world.gateway.spawn('cli:a', { task: `hang more ${i}` });
      await world.clock.advance(0);
    }
    const late = await open(`ws://127.0.0.1:${port}/api/ws?epoch=${epoch}&since=${lastSeen}`, headers);
    cleanups.push(() => late.ws?.terminate());
    await until(() => late.messages.length >= 1);
    expect(late.messages[0]).toMatchObject({ type: 'hello', resume: 'snapshot' });
  });
});
