import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { REFUSAL_CODES } from '../../src/core/errors.js';
import { isTerminal } from '../../src/core/types.js';
import { TOOLS } from '../../src/mcp/tools.js';
import { type FakeWorld, fakeWorld } from '../helpers/fake-gateway.js';
import { numRuns } from '../helpers/fc-runs.js';
import { mcpPair } from '../helpers/mcp-pair.js';

type Structured = { ok: boolean; refusal?: { code: string; path?: string }; [k: string]: unknown };
let world: FakeWorld | undefined;
afterEach(async () => {
  await world?.gateway.close();
  world = undefined;
});

describe('MCP server over the SDK in-memory transport', () => {
  it('lists every tool with an object output schema and the read-only hints', async () => {
    world = fakeWorld();
    const { client, close } = await mcpPair(world.gateway, 'mcp:a');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(
      [
        'resource_status',
        'spawn_cancel',
        'spawn_continue',
        'spawn_list',
        'spawn_merge',
        'spawn_release',
        'spawn_run',
        'spawn_status',
        'spawn_steer',
        'spawn_sub_agents',
        'spawn_wait',
      ].sort(),
    );
    for (const tool of tools) {
      expect(tool.outputSchema?.type).toBe('object');
      expect(tool.inputSchema.type).toBe('object');
    }
    const readOnly = tools.filter((t) => t.annotations?.readOnlyHint).map((t) => t.name);
    expect(readOnly.sort()).toEqual(['resource_status', 'spawn_list', 'spawn_status']);
    await close();
  });

  it('a wrong argument is an invalid_argument refusal with its path, not the SDK text error', async () => {
    world = fakeWorld();
    const { client, close } = await mcpPair(world.gateway, 'mcp:a');
    const r = await client.callTool({ name: 'spawn_run', arguments: { task: 'x', max_turns: 'ten' } });
    expect(r.isError).toBe(true);
    expect((r.structuredContent as Structured).refusal).toMatchObject({
      code: 'invalid_argument',
      path: 'max_turns',
    });
    const unknown = await client.callTool({ name: 'no_such_tool', arguments: {} });
    expect((unknown.structuredContent as Structured).refusal?.code).toBe('invalid_argument');
    await close();
  });

  it('spawn_run a wave, then spawn_wait returns one digest; status pages; cancel and steer are scoped', async () => {
    world = fakeWorld({ cap: 3 });
    const { client, close } = await mcpPair(world.gateway, 'mcp:a');
    const other = await mcpPair(world.gateway, 'mcp:b');
    const spawned = (
      await client.callTool({
        name: 'spawn_run',
        arguments: { tasks: ['sleep=10 a', 'sleep=10 b', 'sleep=10 c', 'sleep=10 d'] },
      })
    ).structuredContent as Structured & { runs: { id: string }[]; batch_id: string };
    expect(spawned.ok).toBe(true);
    expect(spawned.runs).toHaveLength(4);
    const theirs = await other.client.callTool({
      name: 'spawn_cancel',
      arguments: { agent_id: spawned.runs[0]!.id },
    });
    expect((theirs.structuredContent as Structured).refusal?.code).toBe('not_found');
    const theirList = (await other.client.callTool({ name: 'spawn_list', arguments: {} }))
      .structuredContent as Structured & {
      runs: unknown[];
    };
    expect(theirList.runs).toHaveLength(0);
    const ours = await client.callTool({ name: 'spawn_list', arguments: {} });
    const lines = (ours.content as { text: string }[])[0]!.text.split('\n');
    expect(lines[0]).toMatch(/^running \d+ at cap 3 · queued \d+ · 4 runs$/);
    expect(lines.slice(1)).toHaveLength(4); // one line per run, not the JSON again
    await world.clock.advance(100);
    const waited = await client.callTool({ name: 'spawn_wait', arguments: { timeout_secs: 0 } });
    const body = waited.structuredContent as Structured & { events: { kind: string; batch_id?: string }[] };
    expect(body.events).toHaveLength(1);
    expect(body.events[0]).toMatchObject({ kind: 'digest', batch_id: spawned.batch_id });
    expect((waited.content as { text: string }[])[0]?.text).toContain('[Subagent completion');
    const status = await client.callTool({
      name: 'spawn_status',
      arguments: { agent_id: spawned.runs[0]!.id },
    });
    expect((status.structuredContent as Structured & { run: { status: string } }).run.status).toBe(
      'completed',
    );
    await other.close();
    await close();
  });

  it('spawn_wait and spawn_sub_agents send progress notifications when the client sent a progress token', async () => {
    world = fakeWorld({ cap: 3 });
    const { client, close } = await mcpPair(world.gateway, 'mcp:p');
    const progress: string[] = [];
    const waiting = client.callTool({ name: 'spawn_wait', arguments: { timeout_secs: 20 } }, undefined, {
      onprogress: (p) => progress.push(String(p.message)),
      timeout: 60_000,
    });
    await world.clock.advance(0);
    world.gateway.spawn('mcp:p', { task: 'sleep=12000 slow' });
    for (let i = 0; i < 12; i++) await world.clock.advance(1000);
    const body = (await waiting).structuredContent as Structured & { events: unknown[] };
    expect(body.events).toHaveLength(1);
    expect(progress.length).toBe(2);
    expect(progress[0]).toMatch(/waiting: 1 running, 0 queued/);

    const sub = client.callTool(
      {
        name: 'spawn_sub_agents',
        arguments: { agents: [{ prompt: 'sleep=7000 a' }, { prompt: 'sleep=7000 b' }] },
      },
      undefined,
      { onprogress: (p) => progress.push(String(p.message)), timeout: 60_000 },
    );
    for (let i = 0; i < 8; i++) await world.clock.advance(1000);
    const subBody = (await sub).structuredContent as Structured & { done: boolean };
    expect(subBody.done).toBe(true);
    expect(progress.length).toBe(3);
    await close();
  });

  it(`fuzz: ${numRuns(2000).toLocaleString('en')} random argument objects per tool — every answer is a result or a typed refusal; nothing admitted is lost`, async () => {
    world = fakeWorld({ cap: 3, 'agent.subagent_max_queued': 1000 });
    const { client, close } = await mcpPair(world.gateway, 'mcp:fuzz');
    const codes = new Set<string>(REFUSAL_CODES);
    const admitted = new Set<string>();
    const value = fc.oneof(
      fc.string(),
      fc.integer(),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.string(), { maxLength: 20 }),
      fc.array(fc.anything(), { maxLength: 3 }),
      fc.dictionary(fc.string(), fc.anything(), { maxKeys: 3 }),
    );
    for (const tool of TOOLS) {
      const keys = Object.keys(
        ((tool.schema as unknown as { shape?: Record<string, unknown> }).shape ?? {}) as Record<
          string,
          unknown
        >,
      );
      const args = fc.dictionary(fc.constantFrom(...keys, 'extra', 'task', 'tasks'), value, { maxKeys: 5 });
      const samples = fc.sample(args, { numRuns: numRuns(2000), seed: 42 });
      for (const [i, raw] of samples.entries()) {
        // Half the spawn_run samples start from a valid task, so admission paths get fuzzed too.
        const sample =
          tool.name === 'spawn_run' && i % 2 === 0
            ? { task: `sleep=10 fuzz ${i}`, ...raw, ...(i % 4 === 0 ? { task: `sleep=10 fuzz ${i}` } : {}) }
            : raw;
        const call = client.callTool(
          { name: tool.name, arguments: sample as Record<string, unknown> },
          undefined,
          {
            timeout: 5000,
          },
        );
        // Waiting tools wait on the gateway's (fake) clock: let it run past their bound.
        if (tool.name === 'spawn_wait' || tool.name === 'spawn_sub_agents') await world.clock.advance(60_000);
        const r = await call;
        const s = r.structuredContent as Structured;
        expect(typeof s.ok).toBe('boolean');
        if (s.ok && Array.isArray(s.runs)) for (const run of s.runs as { id: string }[]) admitted.add(run.id);
        if (!s.ok) expect(codes.has(s.refusal?.code ?? '')).toBe(true);
      }
    }
    for (let i = 0; i < 100 && world.gateway.counts().live > 0; i++) await world.clock.advance(60_000);
    const all = new Map(world.gateway.list({ kind: 'operator' }, 100_000).runs.map((r) => [r.id, r]));
    expect(admitted.size).toBeGreaterThan(Math.min(100, numRuns(100))); // fewer samples, fewer admitted
    for (const id of admitted) expect(isTerminal(all.get(id)?.status as never)).toBe(true);
    await close();
  }, 120_000);
});

describe('typed answers for malformed calls, real bounds in the schemas', () => {
  it('arguments that are not an object (array, string, number, null) get invalid_argument at (arguments), for every tool', async () => {
    world = fakeWorld();
    const { client, close } = await mcpPair(world.gateway, 'mcp:a');
    for (const tool of TOOLS) {
      for (const args of [['x'], 'x', 42, null, true]) {
        const r = await client.callTool({
          name: tool.name,
          arguments: args as unknown as Record<string, unknown>,
        });
        expect(r.isError, `${tool.name} ${JSON.stringify(args)}`).toBe(true);
        expect((r.structuredContent as Structured).refusal).toMatchObject({
          code: 'invalid_argument',
          path: '(arguments)',
        });
      }
    }
    const refused = world.sel.records.filter((l) => l.metadata.code === 'invalid_argument');
    expect(refused).toHaveLength(TOOLS.length * 5);
    await close();
  });

  it('tools/list advertises the real integer bounds, never ±2^53', async () => {
    world = fakeWorld();
    const { client, close } = await mcpPair(world.gateway, 'mcp:a');
    const { tools } = await client.listTools();
    expect(JSON.stringify(tools)).not.toMatch(/9007199254740991/);
    const props = (name: string) =>
      (tools.find((t) => t.name === name)?.inputSchema.properties ?? {}) as Record<
        string,
        { minimum?: number; maximum?: number }
      >;
    expect(props('spawn_run').max_turns).toMatchObject({ minimum: 0, maximum: 200 });
    expect(props('spawn_continue').max_turns).toMatchObject({ minimum: 0, maximum: 200 });
    expect(props('spawn_run').max_tokens).toMatchObject({ minimum: 0, maximum: 1_000_000_000 });
    expect(props('spawn_continue').max_tokens).toMatchObject({ minimum: 0, maximum: 1_000_000_000 });
    expect(props('spawn_status').offset).toMatchObject({ minimum: 0 });
    expect(props('spawn_status').limit).toMatchObject({ minimum: 1, maximum: 10_000 });
    expect(props('spawn_wait').timeout_secs).toMatchObject({ minimum: 0, maximum: 50 });
    await close();
  });

  it('a number out of bounds is refused with limit and current; a wrong type says what was given', async () => {
    world = fakeWorld();
    const { client, close } = await mcpPair(world.gateway, 'mcp:a');
    const high = await client.callTool({ name: 'spawn_run', arguments: { task: 'x', max_turns: 500 } });
    expect((high.structuredContent as Structured).refusal).toMatchObject({
      code: 'invalid_argument',
      path: 'max_turns',
      limit: 200,
      current: 500,
    });
    const huge = await client.callTool({ name: 'spawn_run', arguments: { task: 'x', max_tokens: 2e9 } });
    expect((huge.structuredContent as Structured).refusal).toMatchObject({
      code: 'invalid_argument',
      path: 'max_tokens',
      limit: 1_000_000_000,
      current: 2e9,
    });
    const wrong = await client.callTool({ name: 'spawn_run', arguments: { task: 'x', max_turns: null } });
    expect(
      (wrong.structuredContent as Structured & { refusal: { message: string } }).refusal.message,
    ).toMatch(/max_turns: .*\(got null\)/);
    await close();
  });

  it('a model or effort the agent cannot honour comes back as a warning, never a silent drop', async () => {
    const { createGateway } = await import('../../src/gateway/create-gateway.js');
    const { FakeRunner } = await import('../../src/runners/fake-runner.js');
    const { MemorySelSink } = await import('../../src/sel/memory-sel-sink.js');
    const { FakeClock } = await import('../../src/clock/fake-clock.js');
    const clock = new FakeClock();
    const gateway = createGateway(
      { ...fakeWorld().config },
      {
        clock,
        runner: new FakeRunner({ clock }),
        sel: new MemorySelSink(clock),
        agents: new Map([
          [
            'sim',
            {
              name: 'sim',
              runner: 'acp',
              command: ['crew-sim'],
              shared: false,
              skills: [],
              source: 'builtin',
            },
          ],
          [
            'plain',
            { name: 'plain', runner: 'command', command: ['tool', '{task}'], shared: false, skills: [] },
          ],
          [
            'takes',
            {
              name: 'takes',
              runner: 'command',
              command: ['tool', '--model={model}', '{task}'],
              shared: false,
              skills: [],
            },
          ],
        ]),
        defaultCwd: '/tmp',
      },
    );
    const sim = gateway.spawn('mcp:a', { task: 'x', agent: 'sim', model: 'big', reasoning_effort: 'high' });
    expect(sim.ok && sim.warnings).toEqual([
      expect.stringMatching(/sim.*cannot honour model "big"/),
      expect.stringMatching(/sim.*cannot honour reasoning_effort "high"/),
    ]);
    const plain = gateway.spawn('mcp:a', { task: 'x', agent: 'plain', model: 'big' });
    expect(plain.ok && plain.warnings).toEqual([
      expect.stringMatching(/plain cannot honour model "big": its command has no \{model\}/),
    ]);
    const takes = gateway.spawn('mcp:a', { task: 'x', agent: 'takes', model: 'big' });
    expect(takes.ok && 'warnings' in takes).toBe(false);
    await gateway.close();
  });
});
