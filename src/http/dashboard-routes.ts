import type { Context, Hono } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { html, raw } from 'hono/html';
import { CrewError, refuse } from '../core/errors.js';
import { ASSETS, type AssetName, readAsset } from '../dashboard/assets.js';
import type { Dashboard } from '../dashboard/dashboard.js';
import { rerunArgsOf } from '../dashboard/rerun-args.js';
import { TABS, type Tab } from '../dashboard/run-index.js';
import { parseSort } from '../dashboard/run-sort.js';
import { type DashboardSession, isCsrfValid } from '../dashboard/sessions.js';
import type { Gateway } from '../gateway/gateway.js';
import type { AuthDecision } from './app-env.js';
import type { Principal } from './tokens.js';

/**
 * The operator dashboard over HTTP (`crew serve`'s `/`): the page and its assets, the login-code exchange,
 * and the `/api/dashboard/…` reads and `/api/runs/:id/ack` the page uses beside the public run API.
 *
 * Auth: `crew dashboard` asks `POST /api/dashboard/login-codes` (operator bearer) for a single-use code
 * valid 60 s; `GET /login?code=…` trades it for an HttpOnly, SameSite=Strict session cookie and
 * redirects to `/`, so the code leaves the address bar. A session reads what the operator reads; its
 * writes must carry the page's CSRF token in `X-Crew-Csrf`, and none are allowed when
 * `dashboard.read_only` is set.
 */

type App = Hono<{ Variables: { principal: Principal } }>;

export const CSRF_HEADER = 'x-crew-csrf';

/** The parent of a run re-run from the dashboard: a person's, so its completion waits for their ack. */
export const RERUN_PARENT = 'cli:dashboard';
/** Acks one `ack-all` call makes at most (each is a store write); the page calls again while some remain. */
export const ACK_ALL_MAX = 500;
const LIVE_STATUSES = new Set(['queued', 'starting', 'running']);

/** The session cookie's name: per port, since browsers share cookies between ports of one host. */
export function sessionCookieName(port: number): string {
  return `crew_session_${port}`;
}

/** Content-Security-Policy of every dashboard response: nothing but this origin. */
export const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
  "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const PUBLIC_PATHS = new Set([
  '/',
  '/login',
  '/favicon.ico',
  '/favicon.svg',
  '/assets/app.js',
  '/assets/state.js',
  '/assets/feed.js',
  '/assets/render-capacity.js',
  '/assets/render-runs.js',
  '/assets/render-detail.js',
  '/assets/actions.js',
  '/assets/view.js',
  '/assets/app.css',
  '/assets/panels.css',
]);

/** Reads the session cookie of a raw request (the app's middleware and the WebSocket upgrade share this). */
export function sessionOf(
  dashboard: Dashboard,
  cookieHeader: string | undefined | null,
  cookieName: string,
): DashboardSession | undefined {
  if (!cookieHeader) return undefined;
  for (const part of cookieHeader.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === cookieName) return dashboard.sessions.resolve(part.slice(eq + 1).trim());
  }
  return undefined;
}

/**
 * The decision for `AppOptions.authenticate`: the page and its assets are public (the page itself asks
 * for a session); a bearer token decides for itself; a session cookie admits the operator, with CSRF and
 * read-only checks on anything but a read.
 */
export function dashboardAuthenticator(
  dashboard: Dashboard,
  cookieName: () => string,
): (req: Request) => AuthDecision | undefined {
  return (req) => {
    const url = new URL(req.url);
    const isRead = req.method === 'GET' || req.method === 'HEAD';
    if (isRead && PUBLIC_PATHS.has(url.pathname)) return { kind: 'public' };
    if (req.headers.get('authorization')) return undefined;
    const session = sessionOf(dashboard, req.headers.get('cookie'), cookieName());
    if (!session) return undefined;
    if (!isRead) {
      if (!isCsrfValid(session, req.headers.get(CSRF_HEADER) ?? undefined)) {
        return {
          kind: 'refused',
          status: 403,
          refusal: refuse('unauthorized', 'the CSRF token is missing or wrong; reload the dashboard page'),
        };
      }
      if (dashboard.readOnly && url.pathname !== '/api/dashboard/logout') {
        return {
          kind: 'refused',
          status: 403,
          refusal: refuse(
            'unauthorized',
            'the dashboard is read-only (dashboard.read_only); use the CLI or unset the key',
          ),
        };
      }
    }
    return { kind: 'principal', principal: { kind: 'operator' } };
  };
}

export interface DashboardRouteOptions {
  dashboard: Dashboard;
  gateway: Pick<Gateway, 'ack'>;
  cookieName: () => string;
  /** The daemon's own URL, for the login link it hands out. */
  baseUrl: () => string;
}

export function mountDashboardRoutes(app: App, options: DashboardRouteOptions): void {
  const { dashboard } = options;
  const operatorOnly = (c: Context<{ Variables: { principal: Principal } }>) => {
    if (c.get('principal')?.kind !== 'operator')
      throw new CrewError(refuse('unauthorized', 'the dashboard is for the operator only'));
  };
  const secured = (c: Context, body: string | Uint8Array, type: string, status: 200 | 401 = 200) => {
    c.header('content-security-policy', CSP);
    c.header('x-content-type-options', 'nosniff');
    c.header('referrer-policy', 'no-referrer');
    c.header('content-type', type);
    c.header('cache-control', 'no-store');
    return c.body(body as string, status);
  };

  for (const name of Object.keys(ASSETS) as AssetName[]) {
    const path = name === 'favicon.svg' ? '/favicon.svg' : `/assets/${name}`;
    app.get(path, (c) => secured(c, readAsset(name), ASSETS[name]));
  }
  app.get('/favicon.ico', (c) => secured(c, readAsset('favicon.svg'), ASSETS['favicon.svg']));

  app.get('/', (c) => {
    const session = sessionOf(dashboard, c.req.header('cookie'), options.cookieName());
    if (!session) return secured(c, loginNeededPage(), 'text/html; charset=utf-8', 401);
    const snapshot = dashboard.snapshot();
    return secured(c, page(session, snapshot), 'text/html; charset=utf-8');
  });

  app.get('/login', (c) => {
    const code = c.req.query('code') ?? '';
    if (!dashboard.codes.redeem(code)) {
      return secured(
        c,
        loginNeededPage('This login link was already used or has expired (codes last 60 s and work once).'),
        'text/html; charset=utf-8',
        401,
      );
    }
    const session = dashboard.sessions.create();
    setCookie(c, options.cookieName(), session.id, {
      httpOnly: true,
      sameSite: 'Strict',
      path: '/',
    });
    c.header('cache-control', 'no-store');
    c.header('referrer-policy', 'no-referrer');
    return c.redirect('/', 303);
  });

  app.post('/api/dashboard/login-codes', (c) => {
    operatorOnly(c);
    if (!c.req.header('authorization'))
      throw new CrewError(refuse('unauthorized', 'login codes are issued to the operator token only'));
    const { code, expiresAt } = dashboard.codes.issue();
    dashboard.warm();
    return c.json({
      ok: true,
      code,
      login_url: `${options.baseUrl()}/login?code=${code}`,
      expires_at: new Date(expiresAt).toISOString(),
    });
  });

  app.post('/api/dashboard/logout', (c) => {
    const id = getCookie(c, options.cookieName());
    if (id) dashboard.sessions.end(id);
    setCookie(c, options.cookieName(), '', { httpOnly: true, sameSite: 'Strict', path: '/', maxAge: 0 });
    return c.json({ ok: true });
  });

  const pageQuery = (c: Context) => {
    const tab = c.req.query('tab') ?? 'all';
    if (!(TABS as readonly string[]).includes(tab)) {
      throw new CrewError(
        refuse('invalid_argument', `tab must be one of ${TABS.join(', ')}`, { path: 'tab' }),
      );
    }
    const int = (name: string, fallback: number) => {
      const raw = c.req.query(name);
      if (raw === undefined) return fallback;
      const value = Number(raw);
      if (!Number.isInteger(value) || value < 0)
        throw new CrewError(refuse('invalid_argument', `${name} must be a whole number`, { path: name }));
      return value;
    };
    const sort = c.req.query('sort');
    return {
      tab: tab as Tab,
      query: c.req.query('q') ?? '',
      offset: int('offset', 0),
      limit: int('limit', 50),
      ...(sort !== undefined && sort !== '' ? { sort: parseSort(sort) } : {}),
    };
  };

  app.get('/api/dashboard', (c) => {
    operatorOnly(c);
    return c.json(dashboard.snapshot(pageQuery(c)));
  });

  app.get('/api/dashboard/runs', (c) => {
    operatorOnly(c);
    const query = pageQuery(c);
    const page = dashboard.page({ ...query, now: Date.now() });
    return c.json({
      ok: true,
      seq: dashboard.feed.lastSeq,
      counts: dashboard.counts(),
      page,
      parent_names: dashboard.parentNames(page.rows.map((r) => r.parent)),
    });
  });

  app.get('/api/dashboard/runs/:id', (c) => {
    operatorOnly(c);
    const id = c.req.param('id');
    const run = dashboard.run(id);
    if (!run)
      throw new CrewError(refuse('not_found', `no run ${id}; list runs with GET /api/dashboard/runs`));
    const named = dashboard.parentNames([run.parent])[0];
    return c.json({
      ok: true,
      run,
      ...(named ? { parent_name: named[1] } : {}),
      live_descendants: dashboard.index.liveDescendants(id),
    });
  });

  app.get('/api/dashboard/capacity', (c) => {
    operatorOnly(c);
    dashboard.activate();
    return c.json({ ok: true, capacity: dashboard.capacity() });
  });

  // The capacity chart: running, queued, cap and provider cap, one bucket a minute over the last hour.
  app.get('/api/dashboard/capacity/history', (c) => {
    operatorOnly(c);
    return c.json({
      ok: true,
      bucket_secs: dashboard.history.bucketSecs,
      samples: dashboard.history.samples(),
    });
  });

  // A new run with an ended run's arguments: the page posts them to /api/spawn (the spawn API).
  app.get('/api/dashboard/runs/:id/rerun', (c) => {
    operatorOnly(c);
    const id = c.req.param('id');
    const run = dashboard.run(id);
    const spec = run ? dashboard.specOf(id) : undefined;
    if (!run || !spec)
      throw new CrewError(
        refuse('not_found', `no run ${id} with its task kept; list runs with GET /api/dashboard/runs`),
      );
    if (LIVE_STATUSES.has(run.status))
      throw new CrewError(
        refuse(
          'not_running',
          `run ${id} is still ${run.status}; re-run it once it has ended, or cancel it first`,
        ),
      );
    return c.json({ ok: true, ...rerunArgsOf(spec), parent: RERUN_PARENT });
  });

  // Ack every completion owed to a person, newest first, at most ACK_ALL_MAX a call (`remaining` says more).
  app.post('/api/dashboard/ack-all', (c) => {
    operatorOnly(c);
    dashboard.completeHistory();
    let acked = 0;
    for (const id of dashboard.index.notifiableRuns(ACK_ALL_MAX)) {
      if (options.gateway.ack(id, { kind: 'operator' }).ok) acked++;
    }
    dashboard.flush();
    return c.json({ ok: true, acked, remaining: dashboard.index.notifications(0).total });
  });

  app.get('/api/dashboard/notifications', (c) => {
    operatorOnly(c);
    dashboard.activate();
    const notifications = dashboard.index.notifications();
    return c.json({
      ok: true,
      ...notifications,
      parent_names: dashboard.parentNames(notifications.items.map((n) => n.parent)),
    });
  });

  app.get('/api/dashboard/refusals', (c) => {
    operatorOnly(c);
    const limit = Math.min(Math.max(Number(c.req.query('limit') ?? 50) || 50, 1), 500);
    return c.json({ ok: true, refusals: dashboard.refusals(limit) });
  });

  app.post('/api/runs/:id/ack', (c) => {
    operatorOnly(c);
    const answer = options.gateway.ack(c.req.param('id'), { kind: 'operator' });
    if (answer.ok) return c.json(answer);
    throw new CrewError(answer.refusal);
  });
}

function shell(title: string, body: ReturnType<typeof html>, head: ReturnType<typeof html> = html``) {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${title}</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/assets/app.css">
<link rel="stylesheet" href="/assets/panels.css">
${head}
</head>
<body>
${body}
</body>
</html>`.toString();
}

function loginNeededPage(reason = 'You are not logged in.'): string {
  return shell(
    'Crew: log in',
    html`<main class="login"><h1>Crew</h1><p>${reason}</p>
<p>Run <code>crew dashboard</code> on this machine: it prints (and on a desktop opens) a one-time login link.</p></main>`,
  );
}

function page(session: DashboardSession, snapshot: object): string {
  // The snapshot is data, not script: `<` is escaped so no text in it can close the element.
  const json = JSON.stringify(snapshot).replace(/</g, '\\u003c');
  return shell(
    'Crew dashboard',
    html`<div id="app" data-state="loading"></div>
<script type="application/json" id="crew-snapshot">${raw(json)}</script>`,
    html`<meta name="crew-csrf" content="${session.csrf}">
<script type="module" src="/assets/app.js"></script>`,
  );
}
