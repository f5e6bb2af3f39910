import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Dashboard } from '../../src/dashboard/dashboard.js';
import { toRunView } from '../../src/gateway/run-view.js';
import { createApp } from '../../src/http/app.js';
import {
  CSP,
  CSRF_HEADER,
  dashboardAuthenticator,
  mountDashboardRoutes,
} from '../../src/http/dashboard-routes.js';
import { Tokens } from '../../src/http/tokens.js';
import { type FakeWorld, fakeWorld } from '../helpers/fake-gateway.js';

const HOST = '127.0.0.1:7878';
const OPERATOR = 'operator-token-0123456789abcdef';
const COOKIE = 'crew_session_7878';

// biome-ignore lint/suspicious/noExplicitAny: the tests read answers loosely and assert their fields
type Loose = any;
type LooseResponse = Omit<Response, 'json'> & { json(): Promise<Loose> };

interface Rig {
  world: FakeWorld;
  dashboard: Dashboard;
  tokens: Tokens;
  request: (
    path: string,
    init?: RequestInit & { cookie?: string; csrf?: string; bearer?: string },
  ) => Promise<LooseResponse>;
  login: () => Promise<{ cookie: string; csrf: string }>;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function rig(options: { readOnly?: boolean; selPath?: string } = {}): Rig {
  const world = fakeWorld();
  const tokens = new Tokens(OPERATOR);
  const dashboard = new Dashboard({
    gateway: world.gateway,
    viewsOf: (ids) => world.store.runs({ ids: [...ids], limit: ids.length }).map(toRunView),
    resources: () => ({ cap: 3, cap_source: 'pinned', posture: 'ok', running: 0, queued: 0 }),
    selPath: options.selPath ?? '/nonexistent/security_events.jsonl',
    clock: world.clock,
    readOnly: options.readOnly ?? false,
    historyMax: 1000,
    queueBounds: { singles: 32, waveMembers: 5000 },
  });
  const { app } = createApp({
    gateway: world.gateway,
    tokens,
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
  const request: Rig['request'] = (path, init = {}) => {
    const headers = new Headers(init.headers);
    headers.set('host', headers.get('x-host') ?? HOST);
    if (init.cookie) headers.set('cookie', init.cookie);
    if (init.csrf) headers.set(CSRF_HEADER, init.csrf);
    if (init.bearer) headers.set('authorization', `Bearer ${init.bearer}`);
    return Promise.resolve(app.request(`http://${HOST}${path}`, { ...init, headers }));
  };
  const login = async () => {
    const issued = await (
      await request('/api/dashboard/login-codes', { method: 'POST', bearer: OPERATOR })
    ).json();
    const answer = await request(`/login?code=${issued.code}`);
    const cookie = (answer.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const page = await (await request('/', { cookie })).text();
    const csrf = /name="crew-csrf" content="([^"]+)"/.exec(page)?.[1] ?? '';
    return { cookie, csrf };
  };
  return { world, dashboard, tokens, request, login };
}

describe('dashboard login', () => {
  it('the page without a session answers 401 with a strict CSP and says how to log in', async () => {
    const { request } = rig();
    const answer = await request('/');
    expect(answer.status).toBe(401);
    expect(answer.headers.get('content-security-policy')).toBe(CSP);
    expect(await answer.text()).toContain('crew dashboard');
  });

  it('login codes are issued to the operator bearer only', async () => {
    const { request, tokens } = rig();
    expect((await request('/api/dashboard/login-codes', { method: 'POST' })).status).toBe(401);
    const runToken = tokens.mint({ kind: 'run', runId: 'r1' });
    expect((await request('/api/dashboard/login-codes', { method: 'POST', bearer: runToken })).status).toBe(
      401,
    );
    const answer = await request('/api/dashboard/login-codes', { method: 'POST', bearer: OPERATOR });
    const body = await answer.json();
    expect(body.ok).toBe(true);
    expect(body.login_url).toBe(`http://${HOST}/login?code=${body.code}`);
  });

  it('a code becomes an HttpOnly SameSite=Strict cookie and a redirect to /; a second use is refused', async () => {
    const { request } = rig();
    const { code } = await (
      await request('/api/dashboard/login-codes', { method: 'POST', bearer: OPERATOR })
    ).json();
    const first = await request(`/login?code=${code}`);
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe('/');
    const cookie = first.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(new RegExp(`^${COOKIE}=`));
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Strict');
    const second = await request(`/login?code=${code}`);
    expect(second.status).toBe(401);
    expect(second.headers.get('set-cookie')).toBeNull();
  });

  it('issuing a code warms the read model on the next turn, so the page that follows is fast; until then it costs nothing', async () => {
    const { request, dashboard, world } = rig();
    expect(dashboard.isActive).toBe(false);
    await request('/api/dashboard/login-codes', { method: 'POST', bearer: OPERATOR });
    expect(dashboard.isActive).toBe(false);
    await world.clock.advance(0);
    expect(dashboard.isActive).toBe(true);
  });

  it('an expired code (60 s) is refused', async () => {
    const { request, world } = rig();
    const { code } = await (
      await request('/api/dashboard/login-codes', { method: 'POST', bearer: OPERATOR })
    ).json();
    await world.clock.advance(60_000);
    expect((await request(`/login?code=${code}`)).status).toBe(401);
  });

  it('a made-up code and a made-up cookie are refused', async () => {
    const { request } = rig();
    expect((await request('/login?code=nope')).status).toBe(401);
    expect((await request('/api/dashboard', { cookie: `${COOKIE}=forged` })).status).toBe(401);
    expect((await request('/', { cookie: `${COOKIE}=forged` })).status).toBe(401);
  });

  it('the page with a session carries the CSRF token and the snapshot, under the CSP', async () => {
    const { request, login, world } = rig();
    world.gateway.spawn('cli:a', { task: 'sleep=10 hello' });
    const { cookie, csrf } = await login();
    expect(csrf.length).toBeGreaterThan(20);
    const answer = await request('/', { cookie });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-security-policy')).toBe(CSP);
    const text = await answer.text();
    expect(text).toContain('id="crew-snapshot"');
    expect(text).toContain('hello');
    expect(text).not.toMatch(/<script>(?!<)/);
  });

  it('logging out ends the session', async () => {
    const { request, login } = rig();
    const { cookie, csrf } = await login();
    expect((await request('/api/dashboard/logout', { method: 'POST', cookie, csrf })).status).toBe(200);
    expect((await request('/api/dashboard', { cookie })).status).toBe(401);
  });
});

describe('dashboard guards', () => {
  it('a wrong Host or a foreign Origin is refused before anything else', async () => {
    const { request, login } = rig();
    const { cookie } = await login();
    expect(
      (await request('/api/dashboard', { cookie, headers: { origin: 'http://evil.example' } })).status,
    ).toBe(403);
    const rebound = await request('/', { cookie, headers: { 'x-host': 'evil.example:7878' } });
    expect(rebound.status).toBe(403);
    expect((await request('/login?code=x', { headers: { 'x-host': 'evil.example:7878' } })).status).toBe(403);
  });

  it('a session write without the CSRF token, or with a wrong one, is refused 403', async () => {
    const { request, login, world } = rig();
    const spawned = world.gateway.spawn('cli:a', { task: 'hang' });
    if (!spawned.ok) throw new Error('refused');
    const id = spawned.runs[0]?.id as string;
    const { cookie, csrf } = await login();
    const none = await request(`/api/runs/${id}/cancel`, { method: 'POST', cookie });
    expect(none.status).toBe(403);
    expect((await none.json()).refusal.message).toContain('CSRF');
    expect(
      (await request(`/api/runs/${id}/cancel`, { method: 'POST', cookie, csrf: `${csrf}x` })).status,
    ).toBe(403);
    const ok = await request(`/api/runs/${id}/cancel`, { method: 'POST', cookie, csrf });
    expect(ok.status).toBe(200);
  });

  it('reads need a session or the bearer: 401 without, and a run token is not the operator', async () => {
    const { request, tokens } = rig();
    expect((await request('/api/dashboard')).status).toBe(401);
    expect((await request('/api/dashboard/runs')).status).toBe(401);
    const runToken = tokens.mint({ kind: 'run', runId: 'r1' });
    expect((await request('/api/dashboard', { bearer: runToken })).status).toBe(401);
    expect((await request('/api/dashboard', { bearer: OPERATOR })).status).toBe(200);
  });

  it('read-only: a session reads but every write is refused 403', async () => {
    const { request, login, world } = rig({ readOnly: true });
    const spawned = world.gateway.spawn('cli:a', { task: 'hang' });
    if (!spawned.ok) throw new Error('refused');
    const { cookie, csrf } = await login();
    const snapshot = await (await request('/api/dashboard', { cookie })).json();
    expect(snapshot.read_only).toBe(true);
    const answer = await request(`/api/runs/${spawned.runs[0]?.id}/cancel`, { method: 'POST', cookie, csrf });
    expect(answer.status).toBe(403);
    expect((await answer.json()).refusal.message).toContain('dashboard.read_only');
  });

  it('assets and the favicon are served locally with their types', async () => {
    const { request } = rig();
    const js = await request('/assets/app.js');
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toContain('text/javascript');
    expect((await request('/assets/app.css')).headers.get('content-type')).toContain('text/css');
    const icon = await request('/favicon.ico');
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toBe('image/svg+xml');
  });

  it('every script module of the page, and every module it imports, is served without a session', async () => {
    const { request } = rig();
    const dir = join(process.cwd(), 'src/dashboard/assets');
    const scripts = readdirSync(dir).filter((name) => name.endsWith('.js'));
    expect(scripts).toContain('app.js');
    for (const name of scripts) {
      const answer = await request(`/assets/${name}`);
      expect(answer.status, name).toBe(200);
      expect(answer.headers.get('content-type'), name).toContain('text/javascript');
      expect(await answer.text(), name).toBe(readFileSync(join(dir, name), 'utf8'));
      for (const [, imported] of readFileSync(join(dir, name), 'utf8').matchAll(/from '\.\/([\w.-]+)'/g)) {
        expect(scripts, `${name} imports ${imported}`).toContain(imported);
      }
    }
  });

  it('every stylesheet is served without a session and linked from the page, app.css first', async () => {
    const { request } = rig();
    const dir = join(process.cwd(), 'src/dashboard/assets');
    const sheets = readdirSync(dir).filter((name) => name.endsWith('.css'));
    expect(sheets).toEqual(expect.arrayContaining(['app.css', 'panels.css']));
    const page = await (await request('/')).text();
    const linked = [...page.matchAll(/<link rel="stylesheet" href="\/assets\/([\w.-]+)">/g)].map((m) => m[1]);
    // The split keeps one cascade: app.css, then the rest.
    expect(linked[0]).toBe('app.css');
    expect([...linked].sort()).toEqual([...sheets].sort());
    for (const name of sheets) {
      const answer = await request(`/assets/${name}`);
      expect(answer.status, name).toBe(200);
      expect(answer.headers.get('content-type'), name).toContain('text/css');
      expect(await answer.text(), name).toBe(readFileSync(join(dir, name), 'utf8'));
    }
  });
});

describe('dashboard API', () => {
  it('lists runs by tab with counts, filters by text, and pages', async () => {
    const { request, world } = rig();
    for (let i = 0; i < 7; i++) world.gateway.spawn('cli:a', { task: `sleep=10 task-${i}` });
    world.gateway.spawn('mcp:b', { task: 'hang special' });
    await world.clock.advance(50);
    const all = await (await request('/api/dashboard/runs?tab=all&limit=5', { bearer: OPERATOR })).json();
    expect(all.page.total).toBe(8);
    expect(all.page.rows).toHaveLength(5);
    expect(all.counts.all).toBe(8);
    const live = await (await request('/api/dashboard/runs?tab=live', { bearer: OPERATOR })).json();
    expect(
      live.page.rows.map((r: { node: { run: { task_preview: string } } }) => r.node.run.task_preview),
    ).toEqual(['hang special']);
    const filtered = await (await request('/api/dashboard/runs?q=task-3', { bearer: OPERATOR })).json();
    expect(filtered.page.total).toBe(1);
    const bad = await request('/api/dashboard/runs?tab=nope', { bearer: OPERATOR });
    expect(bad.status).toBe(400);
  });

  it('a completion appears as a notification until acked; the ack is on the run and never comes back', async () => {
    const { request, login, world } = rig();
    const spawned = world.gateway.spawn('cli:a', { task: 'sleep=10 done soon' });
    if (!spawned.ok) throw new Error('refused');
    const id = spawned.runs[0]?.id as string;
    const { cookie, csrf } = await login();
    await world.clock.advance(50);
    const before = await (await request('/api/dashboard/notifications', { cookie })).json();
    expect(before.items.map((n: { run_id: string }) => n.run_id)).toEqual([id]);
    const acked = await request(`/api/runs/${id}/ack`, { method: 'POST', cookie, csrf });
    expect(acked.status).toBe(200);
    expect((await acked.json()).acked_at).toMatch(/^\d{4}-/);
    const after = await (await request('/api/dashboard/notifications', { cookie })).json();
    expect(after.items).toEqual([]);
    const run = await (await request(`/api/dashboard/runs/${id}`, { cookie })).json();
    expect(run.run.acked_at).toBeDefined();
  });

  it('acking a run that is still live is refused with a typed refusal', async () => {
    const { request, world } = rig();
    const spawned = world.gateway.spawn('cli:a', { task: 'hang' });
    if (!spawned.ok) throw new Error('refused');
    const answer = await request(`/api/runs/${spawned.runs[0]?.id}/ack`, {
      method: 'POST',
      bearer: OPERATOR,
    });
    expect(answer.status).toBe(409);
    expect((await answer.json()).refusal.code).toBe('not_running');
  });

  it('a run detail says how many live descendants a cancel would take with it', async () => {
    const { request, world } = rig();
    const spawned = world.gateway.spawn('cli:a', { task: 'hang' });
    if (!spawned.ok) throw new Error('refused');
    const id = spawned.runs[0]?.id as string;
    await world.clock.advance(10);
    const detail = await (await request(`/api/dashboard/runs/${id}`, { bearer: OPERATOR })).json();
    expect(detail.live_descendants).toBe(0);
    expect((await request('/api/dashboard/runs/nope', { bearer: OPERATOR })).status).toBe(404);
  });

  it('the refusals feed reads the SEL tail, newest first, as typed refusals', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crew-dash-sel-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const sel = join(dir, 'security_events.jsonl');
    const line = (outcome: string, metadata: object) =>
      JSON.stringify({
        ts: '2026-01-01T00:00:00.000Z',
        event_type: 'admission',
        source: 'cli:a',
        tool_name: 'spawn_run',
        outcome,
        metadata,
      });
    writeFileSync(
      sel,
      `${[
        line('admitted', {}),
        line('refused_queue_full', { parent: 'cli:a', max_queued: 32, queue_depth: 32 }),
        line('rejected_empty_task', { parent: 'mcp:b' }),
      ].join('\n')}\n`,
    );
    const { request } = rig({ selPath: sel });
    const answer = await (await request('/api/dashboard/refusals', { bearer: OPERATOR })).json();
    expect(answer.refusals.map((r: { code: string }) => r.code)).toEqual(['empty_task', 'queue_full']);
    expect(answer.refusals[1]).toMatchObject({ parent: 'cli:a', limit: 32, current: 32 });
  });
});
