import { afterEach, describe, expect, it } from 'vitest';
import { type AppHarness, appHarness, OPERATOR } from './app-harness.js';

/**
 * A parent is a stable key, not an MCP session (issue 29): `X-Crew-Parent` names it over HTTP (a bad
 * shape is refused, typed), its undelivered events wait for its next session, and any operator session
 * reads any run by id without delivering anything.
 */

let h: AppHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

type Structured = { ok: boolean; refusal?: { code: string; path?: string }; [k: string]: unknown };
const call = async (
  client: Awaited<ReturnType<AppHarness['mcp']>>['client'],
  name: string,
  args: Record<string, unknown>,
) => (await client.callTool({ name, arguments: args })).structuredContent as Structured;

const initialize = (headers: Record<string, string>, token = OPERATOR) =>
  h!.req('POST', '/mcp', {
    token,
    headers: { accept: 'application/json, text/event-stream', ...headers },
    body: {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    },
  });

describe('X-Crew-Parent: a documented parent key for HTTP clients', () => {
  it('a malformed value is refused at initialize (400 invalid_argument, path X-Crew-Parent), never ignored', async () => {
    h = appHarness();
    for (const bad of [' ', 'two words', 'x'.repeat(201), 'tab\there', 'semi;colon', '"quoted"']) {
      const reply = await initialize({ 'x-crew-parent': bad });
      expect(reply.status, bad).toBe(400);
      expect(reply.body.refusal, bad).toMatchObject({ code: 'invalid_argument', path: 'X-Crew-Parent' });
      expect(reply.body.refusal?.message).toMatch(/X-Crew-Parent/);
    }
    expect((await initialize({ 'x-crew-parent': 'my-agent@project/1' })).status).toBe(200);
  });

  it('a run token cannot speak for another parent', async () => {
    h = appHarness({ 'agent.subagent_max_depth': 2 });
    const spawned = await h.req('POST', '/api/spawn', { body: { args: { task: 'hang' } } });
    const runId = (spawned.body.runs as { id: string }[])[0]!.id;
    await h.world.clock.advance(0);
    const token = h.tokens.mint({ kind: 'run', runId, cwd: '/' });
    const reply = await initialize({ 'x-crew-parent': 'someone-else' }, token);
    expect(reply.status).toBe(401);
    expect(reply.body.refusal).toMatchObject({ code: 'unauthorized' });
  });

  it('the same key in a new session gets the events the closed session left undelivered, once', async () => {
    h = appHarness();
    const first = await h.mcp(OPERATOR, { 'x-crew-parent': 'window-1' });
    const spawned = await call(first.client, 'spawn_run', { task: 'sleep=5000 slow' });
    const id = (spawned.runs as { id: string }[])[0]!.id;
    await first.client.close();
    await h.world.clock.advance(6000);
    const stranger = await h.mcp(OPERATOR, { 'x-crew-parent': 'someone-else' });
    expect((await call(stranger.client, 'spawn_wait', { timeout_secs: 0 })).events).toEqual([]);
    const second = await h.mcp(OPERATOR, { 'x-crew-parent': 'window-1' });
    const waited = await call(second.client, 'spawn_wait', { timeout_secs: 0 });
    expect((waited.events as { run_ids: string[] }[]).flatMap((e) => e.run_ids)).toEqual([id]);
    expect((await call(second.client, 'spawn_wait', { timeout_secs: 0 })).events).toEqual([]);
    // Its runs are its own in the new session: listed, and cancellable.
    expect(((await call(second.client, 'spawn_list', {})).runs as { id: string }[]).map((r) => r.id)).toEqual(
      [id],
    );
  });
});

describe('any operator session reads any run by id; a read is not a delivery', () => {
  it('a second session reads the first one’s run; the event stays owed to the first', async () => {
    h = appHarness();
    const first = await h.mcp(OPERATOR);
    const spawned = await call(first.client, 'spawn_run', { task: 'sleep=10 quick' });
    const id = (spawned.runs as { id: string }[])[0]!.id;
    await h.world.clock.advance(100);
    const second = await h.mcp(OPERATOR);
    const status = await call(second.client, 'spawn_status', { agent_id: id });
    expect(status.ok).toBe(true);
    expect((status.run as { status: string; delivery: string }).status).toBe('completed');
    expect((status.run as { delivery: string }).delivery).toBe('pending');
    // Reading is all: another parent's run is not its to cancel, nor its events to take.
    expect((await call(second.client, 'spawn_cancel', { agent_id: id })).refusal?.code).toBe('not_found');
    expect((await call(second.client, 'spawn_wait', { timeout_secs: 0 })).events).toEqual([]);
    const waited = await call(first.client, 'spawn_wait', { timeout_secs: 0 });
    expect((waited.events as { run_ids: string[] }[]).flatMap((e) => e.run_ids)).toEqual([id]);
  });

  it('a run token still reads only its own subtree', async () => {
    h = appHarness({ 'agent.subagent_max_depth': 2 });
    const other = await h.req('POST', '/api/spawn', { body: { args: { task: 'hang' } } });
    const otherId = (other.body.runs as { id: string }[])[0]!.id;
    const spawned = await h.req('POST', '/api/spawn', { body: { args: { task: 'hang' } } });
    const runId = (spawned.body.runs as { id: string }[])[0]!.id;
    await h.world.clock.advance(0);
    const token = h.tokens.mint({ kind: 'run', runId, cwd: '/' });
    const { client } = await h.mcp(token);
    expect((await call(client, 'spawn_status', { agent_id: otherId })).refusal?.code).toBe('not_found');
  });
});
