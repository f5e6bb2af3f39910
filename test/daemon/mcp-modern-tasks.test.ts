import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, pollFor, startDaemonProcess } from '../helpers/daemon-process.js';

/**
 * MCP 2026-07-28 against a real crew serve over raw HTTP (the SDK client Crew runs on speaks only the
 * session-based versions): stateless requests, server/discover, and spawn_sub_agents as a task that
 * tasks/get polls until the wave's digest, which is then marked delivered once.
 */

const V = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';

let d: DaemonProcess;
let nextId = 1;

interface Rpc {
  status: number;
  body: {
    id?: unknown;
    result?: Record<string, unknown>;
    error?: { code: number; message: string; data?: unknown };
  };
}

/** One stateless request; `meta` and `headers` override the well-formed defaults. */
async function rpc(
  method: string,
  params: Record<string, unknown> = {},
  options: { tasks?: boolean; meta?: unknown; headers?: Record<string, string>; parent?: string } = {},
): Promise<Rpc> {
  const id = nextId++;
  const meta =
    options.meta !== undefined
      ? options.meta
      : {
          'io.modelcontextprotocol/protocolVersion': V,
          'io.modelcontextprotocol/clientInfo': { name: 'modern-test', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': options.tasks ? { extensions: { [TASKS]: {} } } : {},
        };
  const headers: Record<string, string> = {
    authorization: `Bearer ${d.token}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': V,
    'mcp-method': method,
    'x-crew-parent': options.parent ?? 'modern-test',
    ...(typeof params.name === 'string' ? { 'mcp-name': params.name } : {}),
    ...options.headers,
  };
  const response = await fetch(`${d.url}/mcp`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method,
      params: { ...params, ...(meta === null ? {} : { _meta: meta }) },
    }),
  });
  const body = (await response.json()) as Rpc['body'];
  if (response.status === 200) expect(body.id).toBe(id);
  return { status: response.status, body };
}

async function tool(
  name: string,
  args: Record<string, unknown>,
  options: { tasks?: boolean; parent?: string } = {},
) {
  const answer = await rpc('tools/call', { name, arguments: args }, options);
  expect(answer.status).toBe(200);
  return answer.body.result as Record<string, unknown>;
}

beforeAll(async () => {
  d = await startDaemonProcess();
}, 60_000);

afterAll(async () => {
  expect(await d.stop()).toBe(0);
  d.cleanup();
});

describe('MCP 2026-07-28 on crew serve', () => {
  it('server/discover names the version, the tools and the tasks extension, with no session', async () => {
    const { status, body } = await rpc('server/discover');
    expect(status).toBe(200);
    expect(body.result?.supportedVersions).toEqual([V]);
    expect(body.result?.capabilities).toEqual({ tools: {}, extensions: { [TASKS]: {} } });
    expect(
      (body.result?._meta as Record<string, { name: string }> | undefined)?.[
        'io.modelcontextprotocol/serverInfo'
      ]?.name,
    ).toBe('crew');
    const list = await rpc('tools/list');
    expect(((list.body.result?.tools ?? []) as { name: string }[]).map((t) => t.name)).toContain(
      'spawn_sub_agents',
    );
    expect(list.body.result?.resultType).toBe('complete');
  });

  it('spawn_sub_agents answers with a task; tasks/get polls it to the digest, delivered exactly once', async () => {
    const parent = 'tasks-wave';
    const created = await tool(
      'spawn_sub_agents',
      {
        agents: [
          { prompt: '#sim sleep=300ms bytes=32 first' },
          { prompt: '#sim sleep=400ms bytes=32 second' },
        ],
      },
      { tasks: true, parent },
    );
    expect(created.resultType).toBe('task');
    expect(created.status).toBe('working');
    const taskId = created.taskId as string;
    expect(typeof created.ttlMs).toBe('number');
    expect(typeof created.pollIntervalMs).toBe('number');
    // Readable at once (durable create), and still working while the wave runs.
    const early = await rpc('tasks/get', { taskId }, { tasks: true, parent });
    expect(early.status).toBe(200);
    expect(early.body.result?.status).toBe('working');
    expect(early.body.result?.result).toBeUndefined();
    const done = await pollFor('the task to complete', async () => {
      const got = await rpc('tasks/get', { taskId }, { tasks: true, parent });
      return got.body.result?.status === 'completed' ? got.body.result : undefined;
    });
    const result = done.result as {
      structuredContent: {
        batch_id: string;
        events: { batch_id?: string; kind: string; run_ids: string[] }[];
        runs: { id: string; status: string }[];
      };
    };
    const digest = result.structuredContent.events.filter(
      (e) => e.batch_id === result.structuredContent.batch_id,
    );
    expect(digest).toHaveLength(1);
    expect(digest[0]?.kind).toBe('digest');
    expect(result.structuredContent.runs.map((r) => r.status)).toEqual(['completed', 'completed']);
    // Delivered once: nothing left for spawn_wait, and every run says delivered.
    const waited = await tool('spawn_wait', { timeout_secs: 0 }, { parent });
    expect((waited.structuredContent as { events: unknown[] }).events).toEqual([]);
    for (const run of result.structuredContent.runs) {
      const status = await tool('spawn_status', { agent_id: run.id }, { parent });
      expect((status.structuredContent as { run: { delivery: string } }).run.delivery).toBe('delivered');
    }
    // A second read of the ended task answers the same result; it delivers nothing new.
    const again = await rpc('tasks/get', { taskId }, { tasks: true, parent });
    expect(again.body.result?.result).toEqual(done.result);
  }, 60_000);

  it('without the tasks extension spawn_sub_agents answers in the call, as before', async () => {
    const result = await tool(
      'spawn_sub_agents',
      { agents: [{ prompt: '#sim sleep=50ms bytes=8 sync' }] },
      { parent: 'sync' },
    );
    expect(result.resultType).toBe('complete');
    expect((result.structuredContent as { done: boolean }).done).toBe(true);
  }, 60_000);

  it('tasks/cancel cancels the wave; its digest then comes from spawn_wait, once', async () => {
    const parent = 'tasks-cancel';
    const created = await tool(
      'spawn_sub_agents',
      { agents: [{ prompt: '#sim sleep=20s bytes=8 long' }] },
      { tasks: true, parent },
    );
    const taskId = created.taskId as string;
    const cancelled = await rpc('tasks/cancel', { taskId }, { tasks: true, parent });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.result).toEqual({ resultType: 'complete' });
    const got = await rpc('tasks/get', { taskId }, { tasks: true, parent });
    expect(got.body.result?.status).toBe('cancelled');
    // Cancelling an ended task is the same empty ack.
    expect((await rpc('tasks/cancel', { taskId }, { tasks: true, parent })).body.result).toEqual({
      resultType: 'complete',
    });
    const events = await pollFor('the cancelled digest', async () => {
      const waited = await tool('spawn_wait', { timeout_secs: 5 }, { parent });
      const list = (waited.structuredContent as { events: { kind: string; text: string }[] }).events;
      return list.length > 0 ? list : undefined;
    });
    expect(events.map((e) => e.kind)).toEqual(['digest']);
    expect(events[0]?.text).toMatch(/cancelled=1/);
  }, 60_000);

  it('refuses bad input with typed errors that say what to do', async () => {
    const unknown = await rpc('tasks/get', { taskId: 'no-such-task' }, { tasks: true });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error?.code).toBe(-32602);
    expect(unknown.body.error?.message).toMatch(/unknown task no-such-task.*spawn_wait/);
    // Another parent's task is as unknown as a made-up one.
    const mine = await tool(
      'spawn_sub_agents',
      { agents: [{ prompt: '#sim sleep=10ms bytes=8 x' }] },
      { tasks: true, parent: 'owner' },
    );
    const theirs = await rpc('tasks/get', { taskId: mine.taskId }, { tasks: true, parent: 'someone-else' });
    expect(theirs.body.error?.code).toBe(-32602);
    // tasks/get without the extension declared.
    const undeclared = await rpc('tasks/get', { taskId: mine.taskId }, { parent: 'owner' });
    expect(undeclared.status).toBe(400);
    expect(undeclared.body.error?.code).toBe(-32021);
    expect(undeclared.body.error?.data).toEqual({ requiredCapabilities: { extensions: { [TASKS]: {} } } });
    // Malformed _meta: missing, a string, no capabilities.
    for (const meta of [null, 'v', { 'io.modelcontextprotocol/protocolVersion': V }]) {
      const bad = await rpc('tools/list', {}, { meta });
      expect(bad.status).toBe(400);
      expect(bad.body.error?.code).toBe(-32602);
      expect(bad.body.error?.message).toMatch(/_meta/);
    }
    // An unsupported version names what Crew speaks.
    const old = await rpc(
      'tools/list',
      {},
      {
        meta: {
          'io.modelcontextprotocol/protocolVersion': '1999-01-01',
          'io.modelcontextprotocol/clientCapabilities': {},
        },
        headers: { 'mcp-protocol-version': '1999-01-01' },
      },
    );
    expect(old.status).toBe(400);
    expect(old.body.error?.code).toBe(-32022);
    expect(old.body.error?.data).toEqual({ supported: [V], requested: '1999-01-01' });
    expect(old.body.error?.message).toMatch(/initialize/);
    // Headers that disagree with the body.
    const mismatch = await rpc('tools/list', {}, { headers: { 'mcp-method': 'tools/call' } });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error?.code).toBe(-32020);
    // A removed method.
    const init = await rpc('initialize');
    expect(init.status).toBe(404);
    expect(init.body.error?.code).toBe(-32601);
    // A malformed X-Crew-Parent is refused, never ignored.
    const parent = await rpc('tools/list', {}, { parent: 'bad parent!' });
    expect(parent.status).toBe(400);
  }, 60_000);
});
