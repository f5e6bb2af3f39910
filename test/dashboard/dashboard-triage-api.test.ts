import { afterEach, describe, expect, it } from 'vitest';
import { Dashboard } from '../../src/dashboard/dashboard.js';
import { toRunView } from '../../src/gateway/run-view.js';
import { createApp } from '../../src/http/app.js';
import {
  CSRF_HEADER,
  dashboardAuthenticator,
  mountDashboardRoutes,
  RERUN_PARENT,
} from '../../src/http/dashboard-routes.js';
import { Tokens } from '../../src/http/tokens.js';
import { type FakeWorld, fakeWorld } from '../helpers/fake-gateway.js';

/**
 * The dashboard's routes for real traffic (issue 32 §1), in process: ack-all, the sort parameter, the
 * capacity history and a re-run's arguments posted back to the spawn API.
 */

const HOST = '127.0.0.1:7878';
const OPERATOR = 'operator-token-0123456789abcdef';
const COOKIE = 'crew_session_7878';

// biome-ignore lint/suspicious/noExplicitAny: the tests read answers loosely and assert their fields
type Loose = any;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function rig(options: { readOnly?: boolean } = {}) {
  const world: FakeWorld = fakeWorld();
  let reading = { running: 1, queued: 4, cap: 3, provider_cap: 2, provider_running: 1 };
  const dashboard = new Dashboard({
    gateway: world.gateway,
    viewsOf: (ids) => world.store.runs({ ids: [...ids], limit: ids.length }).map(toRunView),
    resources: () => ({ cap: 3, cap_source: 'pinned', posture: 'ok', running: 0, queued: 0 }),
    selPath: '/nonexistent/security_events.jsonl',
    clock: world.clock,
    readOnly: options.readOnly ?? false,
    historyMax: 1000,
    queueBounds: { singles: 32, waveMembers: 5000 },
    capacityReading: () => reading,
    specOf: (id) => world.store.run(id)?.spec,
  });
  const { app } = createApp({
    gateway: world.gateway,
    tokens: new Tokens(OPERATOR),
    allowedHosts: () => [HOST],
    resources: () => ({}),
    setConfig: () => undefined,
    authenticate: dashboardAuthenticator(dashboard, () => COOKIE),
  });
  mountDashboardRoutes(app, {
    dashboard,
    gateway: world.gateway,
    cookieName: () => COOKIE,
    baseUrl: () => `http://${HOST}`,
  });
  cleanups.push(async () => {
    dashboard.close();
    await world.gateway.close();
  });
  const request = async (
    path: string,
    init: RequestInit & { cookie?: string; csrf?: string; bearer?: string } = {},
  ): Promise<{ status: number; body: Loose }> => {
    const headers = new Headers(init.headers);
    headers.set('host', HOST);
    if (init.cookie) headers.set('cookie', init.cookie);
    if (init.csrf) headers.set(CSRF_HEADER, init.csrf);
    if (init.bearer) headers.set('authorization', `Bearer ${init.bearer}`);
    const answer = await app.request(`http://${HOST}${path}`, { ...init, headers });
    return { status: answer.status, body: await answer.json().catch(() => undefined) };
  };
  const login = async () => {
    const issued = (await request('/api/dashboard/login-codes', { method: 'POST', bearer: OPERATOR })).body;
    const answer = await app.request(`http://${HOST}/login?code=${issued.code}`, { headers: { host: HOST } });
    const cookie = (answer.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const page = await (await app.request(`http://${HOST}/`, { headers: { host: HOST, cookie } })).text();
    const csrf = /name="crew-csrf" content="([^"]+)"/.exec(page)?.[1] ?? '';
    return { cookie, csrf };
  };
  const admit = (parent: string, args: Record<string, unknown>) => {
    const answer = world.gateway.spawn(parent, args);
    if (!answer.ok) throw new Error(answer.refusal.message);
    return answer.runs[0]?.id as string;
  };
  return { world, dashboard, request, login, admit, setReading: (r: typeof reading) => (reading = r) };
}

describe('ack-all', () => {
  it('acks every completion owed to a person, and none an agent already received', async () => {
    const { request, login, admit, world } = rig();
    const owed = [admit('cli:a', { task: 'sleep=10 a' }), admit('slack:U1', { task: 'sleep=10 b' })];
    owed.push(admit('mcp:agent@proj', { task: 'sleep=10 fail' }));
    for (let i = 0; i < 5; i++) admit('mcp:agent@proj', { task: `sleep=10 fine ${i}` });
    await world.clock.advance(2000);
    const { cookie, csrf } = await login();
    const before = (await request('/api/dashboard/notifications', { cookie })).body;
    expect(before.total).toBe(3);
    expect(new Set(before.items.map((n: Loose) => n.run_id))).toEqual(new Set(owed));
    expect((await request('/api/dashboard/ack-all', { method: 'POST', cookie })).status).toBe(403);
    const acked = await request('/api/dashboard/ack-all', { method: 'POST', cookie, csrf });
    expect(acked).toEqual({ status: 200, body: { ok: true, acked: 3, remaining: 0 } });
    expect((await request('/api/dashboard/notifications', { cookie })).body).toMatchObject({
      total: 0,
      items: [],
    });
    for (const id of owed) expect(world.store.run(id)?.ackedAt).toBeDefined();
    // Again: nothing left, nothing done.
    expect((await request('/api/dashboard/ack-all', { method: 'POST', cookie, csrf })).body).toEqual({
      ok: true,
      acked: 0,
      remaining: 0,
    });
  });

  it('a read-only dashboard refuses it', async () => {
    const { request, login } = rig({ readOnly: true });
    const { cookie, csrf } = await login();
    const answer = await request('/api/dashboard/ack-all', { method: 'POST', cookie, csrf });
    expect(answer.status).toBe(403);
    expect(answer.body.refusal.code).toBe('unauthorized');
  });
});

describe('the sort parameter', () => {
  it('sorts the page; a hostile key is a typed refusal naming `sort`', async () => {
    const { request, admit, world } = rig();
    const slow = admit('cli:a', { task: 'sleep=900 slow' });
    const quick = admit('cli:a', { task: 'sleep=20 quick' });
    await world.clock.advance(2000);
    const page = (await request('/api/dashboard/runs?sort=-duration', { bearer: OPERATOR })).body.page;
    expect(page.rows.map((r: Loose) => r.node.run.id)).toEqual([slow, quick]);
    const up = (await request('/api/dashboard/runs?sort=duration', { bearer: OPERATOR })).body.page;
    expect(up.rows.map((r: Loose) => r.node.run.id)).toEqual([quick, slow]);
    for (const bad of ['__proto__', 'constructor', '-hasOwnProperty', 'x'.repeat(5000)]) {
      const answer = await request(`/api/dashboard/runs?sort=${encodeURIComponent(bad)}`, {
        bearer: OPERATOR,
      });
      expect(answer.status).toBe(400);
      expect(answer.body.refusal).toMatchObject({ code: 'invalid_argument', path: 'sort' });
    }
  });
});

describe('the capacity history route', () => {
  it('serves the sampled minutes, oldest first; closed, the dashboard leaves no timer', async () => {
    const { request, world, setReading, dashboard } = rig();
    await world.clock.advance(30_000);
    setReading({ running: 3, queued: 9, cap: 3, provider_cap: 2, provider_running: 2 });
    await world.clock.advance(60_000);
    setReading({ running: 0, queued: 0, cap: 3, provider_cap: 2, provider_running: 0 });
    await world.clock.advance(60_000);
    const answer = await request('/api/dashboard/capacity/history', { bearer: OPERATOR });
    expect(answer.status).toBe(200);
    expect(answer.body.bucket_secs).toBe(60);
    const samples = answer.body.samples as Loose[];
    expect(samples.length).toBeGreaterThanOrEqual(2);
    expect(Math.max(...samples.map((s) => s.running))).toBe(3);
    expect(Math.max(...samples.map((s) => s.queued))).toBe(9);
    expect(samples.at(-1)).toMatchObject({ running: 0, queued: 0, cap: 3, provider_cap: 2 });
    expect((await request('/api/dashboard/capacity/history')).status).toBe(401);
    dashboard.close();
    await world.gateway.close();
    expect(world.clock.pendingTimers()).toBe(0);
  });
});

describe('re-run', () => {
  it('hands back an ended run’s arguments; posted to the spawn API they start a new run with the same task', async () => {
    const { request, login, admit, world } = rig();
    const old = admit('mcp:agent@proj', { task: 'sleep=10 do it again', max_turns: 7 });
    const live = admit('cli:a', { task: 'hang' });
    await world.clock.advance(2000);
    const { cookie, csrf } = await login();
    const answer = await request(`/api/dashboard/runs/${old}/rerun`, { cookie });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      ok: true,
      parent: RERUN_PARENT,
      args: { task: 'sleep=10 do it again', max_turns: 7, agent: expect.any(String) },
    });
    const spawned = await request('/api/spawn', {
      method: 'POST',
      cookie,
      csrf,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ parent: answer.body.parent, args: answer.body.args, cwd: answer.body.cwd }),
    });
    expect(spawned.status).toBe(200);
    const fresh = spawned.body.runs[0].id as string;
    expect(fresh).not.toBe(old);
    expect(world.store.run(fresh)?.spec.task).toBe('sleep=10 do it again');
    expect(world.store.run(fresh)?.run.parent).toBe(RERUN_PARENT);
    const refused = await request(`/api/dashboard/runs/${live}/rerun`, { cookie });
    expect(refused.status).toBe(409);
    expect(refused.body.refusal.code).toBe('not_running');
    expect((await request('/api/dashboard/runs/__proto__/rerun', { cookie })).status).toBe(404);
  });
});
