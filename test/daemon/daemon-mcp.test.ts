import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, crewCommand, type DaemonProcess, startDaemonProcess } from '../helpers/daemon-process.js';
import { type Body, call, httpClient } from './mcp-http-client.js';

/** fetch() will not send a forged Host header; a raw request does. */
function statusWithHost(d: DaemonProcess, host: string): Promise<number> {
  const url = new URL(`${d.url}/api/runs`);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        headers: { host, authorization: `Bearer ${d.token}` },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('a real crew serve: MCP over Streamable HTTP and through crew mcp (stdio)', () => {
  let d: DaemonProcess;
  beforeAll(async () => {
    d = await startDaemonProcess({ config: { 'agent.max_subagents': 4 } });
  }, 30_000);
  afterAll(async () => {
    expect(await d.stop()).toBe(0);
    d.cleanup();
  });

  it('spawn_status pages a transcript; grep and a bad regex; refusals carry their codes', async () => {
    const client = await httpClient(d);
    const spawned = await call(client, 'spawn_run', { task: '#sim chunks=50 bytes=5000 write lines' });
    const id = (spawned.runs as { id: string }[])[0]!.id;
    await call(client, 'spawn_wait', { timeout_secs: 30 });
    const page = await call(client, 'spawn_status', { agent_id: id, offset: 0, limit: 5 });
    expect(page.ok).toBe(true);
    expect(String(page.text)).toMatch(/^\[lines 1-5 of \d+ \| more available — call again with offset=5\]/);
    const bad = await call(client, 'spawn_status', { agent_id: id, grep: '(unclosed' });
    expect(bad.refusal).toMatchObject({ code: 'invalid_argument', path: 'grep' });
    expect((await call(client, 'spawn_run', { task: '  ' })).refusal?.code).toBe('empty_task');
    expect((await call(client, 'spawn_run', { task: 'x', agent: 'nobody' })).refusal?.code).toBe(
      'unknown_agent',
    );
    expect((await call(client, 'spawn_run', { task: 'x', cwd: '/etc' })).refusal?.code).toBe(
      'cwd_not_allowed',
    );
    expect((await call(client, 'spawn_run', { tasks: Array(1001).fill('x') })).refusal?.code).toBe(
      'batch_too_large',
    );
    expect((await call(client, 'spawn_cancel', { agent_id: 'nope' })).refusal?.code).toBe('not_found');
    expect((await call(client, 'spawn_cancel', { agent_id: id })).refusal?.code).toBe('not_running');
    expect((await call(client, 'spawn_continue', { conversation: 'nope', task: 'x' })).refusal?.code).toBe(
      'not_found',
    );
    expect((await call(client, 'spawn_release', { conversation: 'nope' })).refusal?.code).toBe('not_found');
    expect((await call(client, 'spawn_steer', { agent_id: id, message: 'x' })).refusal?.code).toBe(
      'not_running',
    );
    const resources = await call(client, 'resource_status', {});
    expect(resources).toMatchObject({ ok: true, cap: 4, cap_source: 'pinned' });
    await client.close();
  }, 60_000);

  it('a finished spawn_sub_agents answer lists its runs with their final status', async () => {
    const client = await httpClient(d);
    const answer = await call(client, 'spawn_sub_agents', {
      agents: [{ prompt: '#sim sleep=20ms first' }, { prompt: '#sim sleep=20ms fail=error second' }],
    });
    expect(answer).toMatchObject({ ok: true, done: true });
    const runs = answer.runs as { id: string; status: string }[];
    expect(runs.map((r) => r.status)).toEqual(['completed', 'failed']);
    const listed = (await call(client, 'spawn_list', {})).runs as { id: string; status: string }[];
    for (const run of runs) expect(listed.find((r) => r.id === run.id)?.status).toBe(run.status);
    await client.close();
  }, 60_000);

  it('keep, continue and release through MCP', async () => {
    const client = await httpClient(d);
    const first = await call(client, 'spawn_run', { task: '#sim echo remember', keep: true });
    const conversation = (first.runs as { id: string }[])[0]!.id;
    await call(client, 'spawn_wait', { timeout_secs: 30 });
    const next = await call(client, 'spawn_continue', { conversation, task: '#sim sleep=3s echo and again' });
    expect(next.ok).toBe(true);
    expect((await call(client, 'spawn_release', { conversation })).refusal?.code).toBe('conversation_busy');
    await call(client, 'spawn_wait', { timeout_secs: 30 });
    expect((await call(client, 'spawn_release', { conversation })).ok).toBe(true);
    expect((await call(client, 'spawn_continue', { conversation, task: 'x' })).refusal?.code).toBe(
      'conversation_released',
    );
    await client.close();
  }, 60_000);

  it("a sub-agent's own spawn goes back through MCP with its run token and is refused depth_exceeded", async () => {
    const client = await httpClient(d);
    const spawned = await call(client, 'spawn_run', { task: '#sim spawn="#sim sleep=10ms nested" wait' });
    const id = (spawned.runs as { id: string }[])[0]!.id;
    const waited = await call(client, 'spawn_wait', { timeout_secs: 30 });
    expect((waited.events as { run_ids: string[] }[]).flatMap((e) => e.run_ids)).toContain(id);
    const status = await call(client, 'spawn_status', { agent_id: id });
    expect(String(status.text)).toMatch(/refused depth_exceeded/);
    expect(String(status.text)).toMatch(/summary: none/);
    const all = await api(d, 'GET', '/api/runs?limit=1000');
    expect((all.body.runs as { parent: string }[]).some((r) => r.parent === `run:${id}`)).toBe(false);
    await client.close();
  }, 60_000);

  it('one parent cannot list or cancel another parent’s runs; with the operator token it may read one by id (issue 29)', async () => {
    const a = await httpClient(d, { 'x-crew-parent': 'mcp:alice' });
    const b = await httpClient(d, { 'x-crew-parent': 'mcp:bob' });
    const spawned = await call(a, 'spawn_run', { task: '#sim hang' });
    const id = (spawned.runs as { id: string }[])[0]!.id;
    expect((await call(b, 'spawn_cancel', { agent_id: id })).refusal?.code).toBe('not_found');
    expect((await call(b, 'spawn_status', { agent_id: id })).ok).toBe(true);
    expect(
      ((await call(b, 'spawn_list', {})).runs as unknown[]).some((r) => (r as { id: string }).id === id),
    ).toBe(false);
    expect((await call(a, 'spawn_cancel', { agent_id: id })).ok).toBe(true);
    await a.close();
    await b.close();
  }, 60_000);

  it('401 without a token, 403 for a wrong Host, clear errors for malformed JSON-RPC and a body over 4 MiB', async () => {
    const noToken = await fetch(`${d.url}/api/runs`);
    expect(noToken.status).toBe(401);
    expect(((await noToken.json()) as Body).refusal?.code).toBe('unauthorized');
    expect(await statusWithHost(d, 'evil.example:80')).toBe(403);
    expect(await statusWithHost(d, new URL(d.url).host)).toBe(200);
    expect((await api(d, 'GET', '/api/runs', undefined, { origin: 'http://evil.example' })).status).toBe(403);
    const malformed = await fetch(`${d.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${d.token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: '{"jsonrpc": "2.0", "method": ',
    });
    expect(malformed.status).toBeGreaterThanOrEqual(400);
    const huge = await fetch(`${d.url}/api/spawn`, {
      method: 'POST',
      headers: { authorization: `Bearer ${d.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ args: { task: 'x'.repeat(5 * 1024 * 1024) } }),
    });
    expect(huge.status).toBe(413);
    expect(((await huge.json()) as Body).refusal).toMatchObject({
      code: 'invalid_argument',
      limit: 4 * 1024 * 1024,
      current: expect.any(Number),
    });
    expect((await api(d, 'POST', '/api/spawn', '{not json')).body.refusal).toMatchObject({
      code: 'invalid_argument',
    });
    expect((await api(d, 'PUT', '/api/config', { key: 'agent.max_subagents', value: 2 })).status).toBe(400);
    expect((await api(d, 'GET', '/api/health')).status).toBe(200);
  });

  it('through `crew mcp` over stdio: the bridge forwards, with its own parent key', async () => {
    const [node, args] = crewCommand(['mcp']);
    const transport = new StdioClientTransport({
      command: node,
      args,
      env: { ...(process.env as Record<string, string>), CREW_HOME: d.home, CREW_URL: d.url },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'stdio-test', version: '1' });
    await client.connect(transport);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('spawn_run');
    const spawned = await call(client, 'spawn_run', { task: '#sim sleep=20ms via the bridge' });
    expect(spawned.ok).toBe(true);
    const waited = await call(client, 'spawn_wait', { timeout_secs: 30 });
    expect((waited.events as { run_ids: string[] }[])[0]?.run_ids).toEqual([
      (spawned.runs as { id: string }[])[0]!.id,
    ]);
    const list = await call(client, 'spawn_list', {});
    expect((list.runs as { parent: string }[]).every((r) => r.parent.startsWith('mcp:'))).toBe(true);
    // Arguments that are not an object pass the bridge as they came and are refused typed by the daemon.
    const odd = await client.request(
      {
        method: 'tools/call',
        params: { name: 'spawn_list', arguments: [1, 2] as unknown as Record<string, unknown> },
      },
      CallToolResultSchema,
    );
    expect(odd.structuredContent).toMatchObject({
      ok: false,
      refusal: { code: 'invalid_argument', path: '(arguments)' },
    });
    await client.close();
  }, 60_000);
});
