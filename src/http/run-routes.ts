import { CrewError, refuse } from '../core/errors.js';
import type { Gateway } from '../gateway/gateway.js';
import type { App } from './app-env.js';
import { readJson, reply } from './edge-replies.js';
import { parentCwdFor, parentFor, scopeOf } from './principal-scope.js';
import type { Principal } from './tokens.js';

/** The parent a CLI request speaks for when the operator names none. */
const parentOf = (principal: Principal, requested: unknown): string =>
  parentFor(principal, requested, 'cli:operator');

/**
 * The run API the CLI uses (`crew spawn`, `list`, `status`, `cancel`, `steer`, `continue`, `release`,
 * `merge`, `wait`), every body one of DESIGN §6's shapes. The operator sees all; a run or chat token
 * sees its own subtree.
 */
export function mountRunRoutes(app: App, gateway: Gateway): void {
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
}
