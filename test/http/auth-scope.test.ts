import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { type AppHarness, appHarness, OPERATOR, REMOTE, selSince } from './app-harness.js';

/**
 * Who may do what over HTTP and MCP (DESIGN §7, issue 13 "Scope and confinement"): every auth failure is
 * a typed 401/403 that says what is wrong and writes one SEL line (remote address and route, never the
 * token); a run- or chat-scoped token can name no parent directory; an MCP session belongs to the token
 * that initialized it.
 */

const root = realpathSync(mkdtempSync(join(tmpdir(), 'crew-scope-')));
const allowed = join(root, 'allowed');
const runDir = join(allowed, 'run-dir');
mkdirSync(runDir, { recursive: true });
writeFileSync(join(allowed, 'a-file'), 'not a directory');
/** Counted for the report: every auth decision below, checked for status, body and SEL line. */
let authCases = 0;
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  console.log(`auth cases checked: ${authCases}`);
});

let h: AppHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A running top-level run and a token scoped to it (its directory bound at mint, as the daemon does). */
async function runToken(harness: AppHarness): Promise<{ runId: string; token: string }> {
  const spawned = await harness.req('POST', '/api/spawn', { body: { args: { task: 'hang' } } });
  const runId = (spawned.body.runs as { id: string }[])[0]!.id;
  await harness.world.clock.advance(0);
  return { runId, token: harness.tokens.mint({ kind: 'run', runId, cwd: runDir }) };
}

const ROUTES: [string, string, unknown?][] = [
  ['GET', '/api/runs'],
  ['GET', '/api/runs/r1'],
  ['POST', '/api/spawn', { args: { task: 'x' } }],
  ['POST', '/api/runs/r1/cancel'],
  ['POST', '/api/runs/r1/steer', { message: 'x' }],
  ['POST', '/api/conversations/c1/continue', { args: { task: 'x' } }],
  ['POST', '/api/conversations/c1/release'],
  ['GET', '/api/events?timeout_secs=0'],
  ['GET', '/api/resources'],
  ['GET', '/api/health'],
  ['PUT', '/api/config', { key: 'agent.subagent_max_queued', value: 5 }],
  ['GET', '/api/chats'],
  ['POST', '/api/chats', {}],
  ['POST', '/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/list' }],
  ['GET', '/no/such/route'],
];

describe('every auth failure: typed, with WWW-Authenticate on 401, one SEL line without the token', () => {
  it.each(ROUTES)(
    '%s %s: no token, a wrong token, a revoked token, a bad Host, a bad Origin',
    async (method, path, body) => {
      h = appHarness();
      const { token: revoked, runId } = await runToken(h);
      h.tokens.revoke({ kind: 'run', runId });
      const cases: {
        reason: string;
        options: { token?: string | null; headers?: Record<string, string> };
        status: number;
        message: RegExp;
      }[] = [
        { reason: 'no_token', options: { token: null }, status: 401, message: /bearer token is required/ },
        {
          reason: 'wrong_token',
          options: { token: 'not-a-token-of-crew' },
          status: 401,
          message: /is invalid/,
        },
        { reason: 'wrong_token', options: { token: revoked }, status: 401, message: /is invalid/ },
        {
          reason: 'bad_host',
          options: { headers: { host: 'evil.example:80' } },
          status: 403,
          message: /host/,
        },
        {
          reason: 'bad_origin',
          options: { headers: { origin: 'http://evil.example' } },
          status: 403,
          message: /origin/,
        },
      ];
      for (const c of cases) {
        const from = h.world.sel.records.length;
        const reply = await h.req(method, path, { ...c.options, ...(body !== undefined ? { body } : {}) });
        expect(reply.status, `${c.reason}`).toBe(c.status);
        expect(reply.body.refusal?.code).toBe('unauthorized');
        expect(reply.body.refusal?.message).toMatch(c.message);
        if (c.status === 401) expect(reply.headers.get('www-authenticate')).toMatch(/^Bearer/);
        const lines = selSince(h.world, from);
        expect(lines).toHaveLength(1);
        expect(lines[0]).toMatchObject({
          event_type: 'auth',
          outcome: 'refused_unauthorized',
          metadata: { code: 'unauthorized', reason: c.reason, remote: REMOTE, route: path.split('?')[0] },
        });
        const line = JSON.stringify(lines[0]);
        expect(line).not.toContain(OPERATOR);
        expect(line).not.toContain(revoked);
        authCases++;
      }
    },
  );

  it('a run- or chat-scoped token is refused on operator-only routes (401 with WWW-Authenticate), audited', async () => {
    h = appHarness();
    const { token } = await runToken(h);
    const chat = h.tokens.mint({ kind: 'chat', chatId: 'c1', cwd: runDir });
    for (const t of [token, chat]) {
      for (const [method, path, body] of [
        ['PUT', '/api/config', { key: 'agent.subagent_max_queued', value: 5 }],
        ['GET', '/api/chats'],
        ['POST', '/api/chats', {}],
        ['GET', '/api/chats/c1'],
        ['POST', '/api/chats/c1/messages', { text: 'hi' }],
        ['POST', '/api/chats/c1/cancel'],
        ['DELETE', '/api/chats/c1'],
        ['GET', '/api/chats/c1/events'],
      ] as [string, string, unknown?][]) {
        const from = h.world.sel.records.length;
        const reply = await h.req(method, path, { token: t, ...(body !== undefined ? { body } : {}) });
        expect(reply.status, `${method} ${path}`).toBe(401);
        expect(reply.headers.get('www-authenticate')).toMatch(/^Bearer/);
        expect(reply.body.refusal?.code).toBe('unauthorized');
        const lines = selSince(h.world, from);
        expect(lines).toHaveLength(1);
        expect(lines[0]?.metadata).toMatchObject({ code: 'unauthorized', remote: REMOTE });
        authCases++;
      }
    }
  });

  it('OAuth discovery answers a typed 404 without a token, so a client starts no OAuth', async () => {
    h = appHarness();
    for (const path of [
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-authorization-server',
      '/.well-known/openid-configuration',
    ]) {
      const reply = await h.req('GET', path, { token: null });
      expect(reply.status).toBe(404);
      expect(reply.body.refusal).toMatchObject({ code: 'not_found' });
      expect(reply.body.refusal?.message).toMatch(/no OAuth.*bearer token/);
      authCases++;
    }
  });

  it('an unknown route answers a typed not_found body, not plain text', async () => {
    h = appHarness();
    const reply = await h.req('GET', '/api/nothing-here');
    expect(reply.status).toBe(404);
    expect(reply.body).toMatchObject({ ok: false, refusal: { code: 'not_found' } });
    expect(reply.body.refusal?.message).toMatch(/GET \/api\/nothing-here/);
  });
});

describe('a run- or chat-scoped token cannot name a parent directory', () => {
  it('POST /api/spawn with a body cwd: refused cwd_not_allowed for a run or chat token; args.cwd still confined', async () => {
    h = appHarness({ 'agent.subagent_max_depth': 2, 'agent.subagent_cwd_allowed_roots': [allowed] });
    const { token } = await runToken(h);
    const chat = h.tokens.mint({ kind: 'chat', chatId: 'c9', cwd: runDir });
    for (const t of [token, chat]) {
      for (const cwd of ['/etc', '/root', allowed, join(runDir, '..', '..')]) {
        const reply = await h.req('POST', '/api/spawn', {
          token: t,
          body: { args: { task: '#sim info' }, cwd },
        });
        expect(reply.body.refusal, `${cwd}`).toMatchObject({ code: 'cwd_not_allowed', path: 'cwd' });
      }
      const viaArgs = await h.req('POST', '/api/spawn', {
        token: t,
        body: { args: { task: 'x', cwd: '/etc' } },
      });
      expect(viaArgs.body.refusal).toMatchObject({ code: 'cwd_not_allowed' });
    }
    expect(h.world.runner.started.map((r) => r.cwd)).not.toContain('/etc');
  });

  it('a run token with no cwd spawns in its own run directory (bound at mint), never the daemon’s', async () => {
    h = appHarness({ 'agent.subagent_max_depth': 2 });
    const { token } = await runToken(h);
    const reply = await h.req('POST', '/api/spawn', { token, body: { args: { task: 'sleep=10 child' } } });
    expect(reply.body.ok).toBe(true);
    await h.world.clock.advance(0);
    expect(h.world.runner.started.at(-1)?.cwd).toBe(runDir);
  });

  it('X-Crew-Cwd on a run- or chat-token MCP session is refused at initialize; the operator may send one', async () => {
    h = appHarness({ 'agent.subagent_max_depth': 2 });
    const { token } = await runToken(h);
    const chat = h.tokens.mint({ kind: 'chat', chatId: 'c2', cwd: runDir });
    for (const t of [token, chat]) {
      const from = h.world.sel.records.length;
      await expect(h.mcp(t, { 'x-crew-cwd': '/root' })).rejects.toThrow(/cwd_not_allowed|400/);
      expect(selSince(h.world, from).map((l) => l.metadata.code)).toEqual(['cwd_not_allowed']);
    }
    const { client } = await h.mcp(OPERATOR, { 'x-crew-cwd': allowed });
    const spawned = await client.callTool({ name: 'spawn_run', arguments: { task: 'sleep=10 x' } });
    expect((spawned.structuredContent as { ok: boolean }).ok).toBe(true);
    await h.world.clock.advance(0);
    expect(h.world.runner.started.at(-1)?.cwd).toBe(allowed);
  });

  it('the operator’s parent directory must be an absolute path to a directory', async () => {
    h = appHarness();
    for (const cwd of ['relative/dir', join(allowed, 'a-file'), join(root, 'missing')]) {
      const reply = await h.req('POST', '/api/spawn', { body: { args: { task: 'x' }, cwd } });
      expect(reply.body.refusal, cwd).toMatchObject({ code: 'cwd_not_allowed', path: 'cwd' });
    }
    await expect(h.mcp(OPERATOR, { 'x-crew-cwd': join(allowed, 'a-file') })).rejects.toThrow();
  });

  it('a cwd argument that is a file under an allowed root is refused at admission, not at spawn (ENOTDIR)', async () => {
    h = appHarness({ 'agent.subagent_cwd_allowed_roots': [allowed] });
    const reply = await h.req('POST', '/api/spawn', {
      body: { args: { task: 'x', cwd: join(allowed, 'a-file') } },
    });
    expect(reply.body.refusal).toMatchObject({ code: 'cwd_not_allowed', path: 'cwd' });
    expect(reply.body.refusal?.message).toMatch(/not a directory/);
    expect(h.world.runner.started).toHaveLength(0);
  });
});

describe('an MCP session is bound to the token that initialized it', () => {
  it("a run token that sends the operator's session id gets 401 and never sees the victim's runs", async () => {
    h = appHarness({ 'agent.subagent_max_depth': 2 });
    const victim = await h.mcp(OPERATOR, { 'x-crew-parent': 'mcp:victim' });
    const own = await victim.client.callTool({ name: 'spawn_run', arguments: { task: 'hang victim' } });
    expect((own.structuredContent as { ok: boolean }).ok).toBe(true);
    const { token } = await runToken(h);
    const chat = h.tokens.mint({ kind: 'chat', chatId: 'c3', cwd: runDir });
    const list = {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'spawn_list', arguments: {} },
    };
    for (const t of [token, chat, 'a-wrong-token']) {
      const from = h.world.sel.records.length;
      const reply = await h.req('POST', '/mcp', {
        token: t,
        body: list,
        headers: {
          'mcp-session-id': victim.sessionId(),
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
        },
      });
      expect(reply.status).toBe(401);
      expect(reply.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(JSON.stringify(reply.body)).not.toContain('victim');
      expect(selSince(h.world, from)).toHaveLength(1);
      authCases++;
    }
    // The run's own session works, and sees only its own subtree.
    const mine = await h.mcp(token);
    const listed = await mine.client.callTool({ name: 'spawn_list', arguments: {} });
    expect(JSON.stringify(listed.structuredContent)).not.toContain('hang victim');
    // And the operator's session, used by the operator, goes on.
    const again = await victim.client.callTool({ name: 'spawn_list', arguments: {} });
    expect((again.structuredContent as { runs: unknown[] }).runs.length).toBeGreaterThan(0);
  });
});
