import * as acp from '@agentclientprotocol/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_ANSWER } from '../../src/sim/answer.js';
import { CRASH_EXIT_CODE, SIM_CONTEXT_TOKENS } from '../../src/sim/turn.js';
import { grandchildPids, infoOf, isAlive, rssBytes, waitUntil } from '../helpers/sim.js';
import { initialize, newSession, prompt, type SimClient, startSim } from './sim-client.js';

const started: SimClient[] = [];
const grandchildren: number[] = [];

async function sim(args: string[] = []): Promise<SimClient> {
  const client = await startSim(args);
  started.push(client);
  await initialize(client);
  return client;
}

afterEach(async () => {
  const clients = started.splice(0);
  await Promise.all(clients.map((s) => s.close()));
  for (const s of clients) expect(isAlive(s.pid)).toBe(false);
  for (const pid of grandchildren.splice(0))
    await waitUntil(() => !isAlive(pid), 5000, `grandchild ${pid} gone`);
});

/** Resolves when `sessionId` has received an update matching `test`. */
function updateArrives(
  s: SimClient,
  sessionId: string,
  test: (u: acp.SessionUpdate) => boolean,
  timeoutMs = 10_000,
): Promise<void> {
  return waitUntil(() => (s.updates.get(sessionId) ?? []).some(test), timeoutMs, 'a session update');
}

const isChunk = (u: acp.SessionUpdate) => u.sessionUpdate === 'agent_message_chunk';

describe('crew-sim-agent over ACP', () => {
  it('advertises protocol 1, session/close and no session/load', async () => {
    const client = await startSim();
    started.push(client);
    const init = await initialize(client);
    expect(init.protocolVersion).toBe(acp.PROTOCOL_VERSION);
    expect(init.agentCapabilities?.loadSession).toBe(false);
    expect(init.agentCapabilities?.sessionCapabilities?.close).toEqual({});
    expect(init.agentInfo?.name).toBe('crew-sim-agent');
  });

  it('answers a plain prompt with a short deterministic text and reports usage', async () => {
    const s = await sim();
    const id = await newSession(s);
    const response = await prompt(s, id, 'write a haiku');
    expect(response.stopReason).toBe('end_turn');
    expect(s.text(id)).toBe(DEFAULT_ANSWER);
    const usage = s.updates.get(id)?.find((u) => u.sessionUpdate === 'usage_update');
    expect(usage).toMatchObject({ size: SIM_CONTEXT_TOKENS });
  });

  it('streams `chunks` chunks spread over `sleep`', async () => {
    const s = await sim();
    const id = await newSession(s);
    const before = Date.now();
    await prompt(s, id, '#sim chunks=5 sleep=400ms');
    expect(Date.now() - before).toBeGreaterThanOrEqual(390);
    const chunks = (s.updates.get(id) ?? []).filter(isChunk);
    expect(chunks).toHaveLength(5);
    expect(s.text(id)).toBe([1, 2, 3, 4, 5].map((i) => `sim: chunk ${i}/5\n`).join(''));
  });

  it('echoes the prompt and gives exactly `bytes` bytes', async () => {
    const s = await sim();
    const a = await newSession(s);
    await prompt(s, a, 'repeat me\n#sim echo');
    expect(s.text(a)).toBe('repeat me\n#sim echo');
    const b = await newSession(s);
    await prompt(s, b, '#sim bytes=10000 chunks=7');
    expect(Buffer.byteLength(s.text(b))).toBe(10_000);
  });

  it('ends a hanging turn with `cancelled` on session/cancel, and the session takes the next prompt', async () => {
    const s = await sim();
    const id = await newSession(s);
    const turn = prompt(s, id, '#sim hang');
    await updateArrives(s, id, isChunk);
    await s.agent.notify(acp.methods.agent.session.cancel, { sessionId: id });
    expect((await turn).stopReason).toBe('cancelled');
    expect((await prompt(s, id, 'again')).stopReason).toBe('end_turn');
  });

  it('refuses a second prompt while a turn runs', async () => {
    const s = await sim();
    const id = await newSession(s);
    const turn = prompt(s, id, '#sim hang');
    await expect(prompt(s, id, 'too soon')).rejects.toThrow(/already running/);
    await s.agent.notify(acp.methods.agent.session.cancel, { sessionId: id });
    await turn;
  });

  it('reports `tools` tool calls between the chunks', async () => {
    const s = await sim();
    const id = await newSession(s);
    await prompt(s, id, '#sim tools=3 chunks=2 sleep=100ms');
    const kinds = (s.updates.get(id) ?? []).map((u) => u.sessionUpdate);
    expect(kinds.filter((k) => k === 'tool_call')).toHaveLength(3);
    expect(kinds).toEqual([
      'agent_message_chunk',
      'tool_call',
      'tool_call',
      'agent_message_chunk',
      'tool_call',
      'usage_update',
    ]);
  });

  it.each([
    ['allow', 'permission: allowed\n'],
    ['reject', 'permission: rejected\n'],
  ] as const)('asks permission first (client answers %s)', async (answer, line) => {
    const s = await sim();
    s.permission = answer;
    const id = await newSession(s);
    await prompt(s, id, '#sim ask');
    expect(s.text(id)).toBe(`${line}${DEFAULT_ANSWER}`);
  });

  it('allocates and touches `mem`, so RSS grows while the turn runs', async () => {
    const s = await sim();
    const id = await newSession(s);
    const baseline = rssBytes(s.pid);
    const turn = prompt(s, id, '#sim mem=200mb hang');
    // Touching 200 MB first took over 10 s once on a machine the integration tier loads (a soak failure).
    await updateArrives(s, id, isChunk, 30_000);
    expect(rssBytes(s.pid) - baseline).toBeGreaterThan(180 * 1024 * 1024);
    await s.agent.notify(acp.methods.agent.session.cancel, { sessionId: id });
    await turn;
  });

  it('starts a grandchild that lives for the turn only', async () => {
    const s = await sim();
    const id = await newSession(s);
    const turn = prompt(s, id, '#sim child=sleep hang');
    await updateArrives(s, id, isChunk);
    const [pid] = grandchildPids(s.text(id));
    expect(pid).toBeDefined();
    grandchildren.push(pid!);
    expect(isAlive(pid!)).toBe(true);
    await s.agent.notify(acp.methods.agent.session.cancel, { sessionId: id });
    await turn;
    await waitUntil(() => !isAlive(pid!), 5000, 'grandchild gone after the turn');
  });

  it('takes its grandchild down when it is terminated mid-turn', async () => {
    const s = await sim();
    const id = await newSession(s);
    void prompt(s, id, '#sim child=sleep hang').catch(() => {});
    await updateArrives(s, id, isChunk);
    const [pid] = grandchildPids(s.text(id));
    grandchildren.push(pid!);
    s.child.kill('SIGTERM');
    expect(await s.exited).toEqual({ code: 143, signal: null });
    await waitUntil(() => !isAlive(pid!), 5000, 'grandchild gone with the agent');
  });

  it('fails the prompt request with a JSON-RPC error on fail=error', async () => {
    const s = await sim();
    const id = await newSession(s);
    await expect(prompt(s, id, '#sim fail=error')).rejects.toMatchObject({
      code: -32603,
      message: expect.stringContaining('simulated error'),
    });
  });

  it('stops with `refusal` on fail=refusal', async () => {
    const s = await sim();
    const id = await newSession(s);
    expect((await prompt(s, id, '#sim fail=refusal')).stopReason).toBe('refusal');
  });

  it('exits abruptly mid-turn on fail=crash, after half the output', async () => {
    const s = await sim();
    const id = await newSession(s);
    await expect(prompt(s, id, '#sim fail=crash chunks=4 sleep=200ms')).rejects.toThrow();
    expect(await s.exited).toEqual({ code: CRASH_EXIT_CODE, signal: null });
    expect(s.text(id)).toBe('sim: chunk 1/4\nsim: chunk 2/4\n');
  });

  it('exits with code N on exit=N', async () => {
    const s = await sim();
    const id = await newSession(s);
    await expect(prompt(s, id, '#sim exit=7')).rejects.toThrow();
    expect(await s.exited).toEqual({ code: 7, signal: null });
  });

  it('hosts many sessions at once; cancelling one stops only that one', async () => {
    const s = await sim();
    const ids = await Promise.all(Array.from({ length: 10 }, () => newSession(s)));
    expect(new Set(ids).size).toBe(10);
    const turns = ids.map((id, i) => prompt(s, id, i === 3 ? '#sim hang' : '#sim sleep=300ms chunks=3'));
    await updateArrives(s, ids[3]!, isChunk);
    await s.agent.notify(acp.methods.agent.session.cancel, { sessionId: ids[3]! });
    const reasons = (await Promise.all(turns)).map((r) => r.stopReason);
    expect(reasons).toEqual(ids.map((_, i) => (i === 3 ? 'cancelled' : 'end_turn')));
  });

  it('closes a session with session/close', async () => {
    const s = await sim();
    const id = await newSession(s);
    await s.agent.request(acp.methods.agent.session.close, { sessionId: id });
    await expect(prompt(s, id, 'hello')).rejects.toMatchObject({ code: -32002 });
  });

  it('does not advertise session/close with --no-close', async () => {
    const client = await startSim(['--no-close']);
    started.push(client);
    const init = await initialize(client);
    expect(init.agentCapabilities?.sessionCapabilities?.close ?? undefined).toBeUndefined();
  });

  it('offers model and effort as config options with --config-options, and reports them with `info`', async () => {
    const s = await sim(['--config-options']);
    const created = await s.agent.request(acp.methods.agent.session.new, { cwd: '/tmp', mcpServers: [] });
    expect(created.configOptions?.map((o) => [o.id, o.category])).toEqual([
      ['model', 'model'],
      ['effort', 'thought_level'],
    ]);
    const id = created.sessionId;
    await s.agent.request(acp.methods.agent.session.setConfigOption, {
      sessionId: id,
      configId: 'model',
      value: 'sim-large',
    });
    await expect(
      s.agent.request(acp.methods.agent.session.setConfigOption, {
        sessionId: id,
        configId: 'model',
        value: 'gpt',
      }),
    ).rejects.toMatchObject({ code: -32602 });
    await prompt(s, id, '#sim info');
    expect(infoOf(s.text(id))).toMatchObject({
      pid: s.pid,
      sessionId: id,
      cwd: '/tmp',
      model: 'sim-large',
    });
  });

  it('reports the model and effort from its command line, and MCP servers by header name only', async () => {
    const s = await sim(['--model', 'm1', '--effort=high']);
    const { sessionId } = await s.agent.request(acp.methods.agent.session.new, {
      cwd: '/tmp',
      mcpServers: [
        {
          type: 'http',
          name: 'crew',
          url: 'http://127.0.0.1:1/mcp',
          headers: [{ name: 'Authorization', value: 'Bearer secret' }],
        },
      ],
    });
    await prompt(s, sessionId, '#sim info');
    const text = s.text(sessionId);
    expect(text).not.toContain('secret');
    expect(infoOf(text)).toMatchObject({
      model: 'm1',
      effort: 'high',
      mcpServers: [{ name: 'crew', type: 'http', url: 'http://127.0.0.1:1/mcp', headers: ['Authorization'] }],
    });
  });

  it('exits when the client closes its stdin', async () => {
    const client = await startSim();
    started.push(client);
    client.child.stdin?.end();
    expect(await client.exited).toEqual({ code: 0, signal: null });
  });
});
