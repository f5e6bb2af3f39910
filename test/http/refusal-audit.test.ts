import { afterAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import type { ClusterLink } from '../../src/cluster/cluster-link.js';
import { CrewError, REFUSAL_CODES, type RefusalCode } from '../../src/core/errors.js';
import { clusterUnavailable, notHere } from '../../src/core/refusals.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import type { StoreTx } from '../../src/store/store.js';
import { Workspaces } from '../../src/workspace/workspaces.js';
import { type AppHarness, appHarness, type Reply, selSince } from './app-harness.js';

/**
 * Every refusal is audited (issue 13): each refusal code, reached through the HTTP API or MCP as a
 * client would, writes exactly one SEL line that names its code — whether the gateway, the MCP edge or
 * the HTTP edge made the refusal.
 */

class FullDiskStore extends MemoryStore {
  full = false;
  override apply(tx: StoreTx): void {
    if (this.full) throw new Error('database or disk is full');
    super.apply(tx);
  }
}

/** A cluster whose Redis does not answer: admission is refused before anything is admitted. */
const unreachableCluster: ClusterLink = {
  gatewayName: 'g0',
  proxyRoom: 0,
  admit: async () => ({ refusal: clusterUnavailable('connect ECONNREFUSED') }),
  dispatch: () => {
    throw new Error('nothing is dispatched while the cluster is unavailable');
  },
  page: async () => {
    throw new Error('no run of this cluster executes anywhere');
  },
  providerLimited: () => undefined,
  providerHoldUntil: () => undefined,
  hasGateway: () => undefined,
  release: () => undefined,
  released: () => undefined,
};

/** A cluster whose runs start on gateway g9, which then stops answering. */
const lostHostCluster: ClusterLink = {
  gatewayName: 'g0',
  proxyRoom: 10,
  admit: async (_kind, _members, admission) => admission(),
  dispatch: (_job, onEvent) => {
    queueMicrotask(() => onEvent({ type: 'started', shared: false, host: 'g9' }));
    return {
      stop: () => onEvent({ type: 'ended', status: 'cancelled', stop: 'cancelled' }),
      steer: async () => undefined,
    };
  },
  page: async (host, runId) => {
    throw new CrewError(notHere(runId, host, 'it does not answer'));
  },
  providerLimited: () => undefined,
  providerHoldUntil: () => undefined,
  hasGateway: () => undefined,
  release: () => undefined,
  released: () => undefined,
};

type Trigger = {
  name: string;
  setup?: Parameters<typeof appHarness>[0];
  run: (h: AppHarness) => Promise<Reply>;
};

const spawnVia = (h: AppHarness, args: unknown, token?: string) =>
  h.req('POST', '/api/spawn', { body: { args }, ...(token !== undefined ? { token } : {}) });

async function runToken(h: AppHarness): Promise<string> {
  const spawned = await spawnVia(h, { task: 'hang parent' });
  const runId = (spawned.body.runs as { id: string }[])[0]!.id;
  await h.world.clock.advance(0);
  return h.tokens.mint({ kind: 'run', runId });
}

/** An MCP tools/call through the SDK client, answered as a Reply. */
async function mcpCall(h: AppHarness, name: string, args: unknown): Promise<Reply> {
  const { client } = await h.mcp('operator-token-for-tests-0123456789');
  const result = await client.callTool({ name, arguments: args as Record<string, unknown> });
  return { status: 200, headers: new Headers(), body: result.structuredContent as Reply['body'] };
}

/**
 * `spawn_merge`'s refusals need real git repositories and branches (processes), so their one SEL line
 * each is checked by the integration test `test/workspace/merge-refusals.test.ts`.
 */
const MERGE_CODES = ['merge_conflict', 'merge_target_moved', 'merge_target_checked_out'] as const;
type UnitCode = Exclude<RefusalCode, (typeof MERGE_CODES)[number]>;

const TRIGGERS: Record<UnitCode, Trigger[]> = {
  empty_task: [{ name: 'blank task', run: (h) => spawnVia(h, { task: '  ' }) }],
  invalid_argument: [
    {
      name: 'max_turns of the wrong type (gateway)',
      run: (h) => spawnVia(h, { task: 'x', max_turns: 'ten' }),
    },
    {
      name: 'a body that is not JSON (HTTP edge)',
      run: (h) => h.req('POST', '/api/spawn', { body: '{nope' }),
    },
    { name: 'tool arguments that are an array (MCP edge)', run: (h) => mcpCall(h, 'spawn_run', ['x']) },
    {
      name: 'a negative offset (MCP edge)',
      run: (h) => mcpCall(h, 'spawn_status', { agent_id: 'r', offset: -1 }),
    },
    {
      name: 'max_subagents 2 over PUT /api/config',
      run: (h) => h.req('PUT', '/api/config', { body: { key: 'agent.max_subagents', value: 2 } }),
    },
  ],
  unknown_agent: [{ name: 'agent nobody', run: (h) => spawnVia(h, { task: 'x', agent: 'nobody' }) }],
  cwd_not_allowed: [
    { name: 'args.cwd outside the roots', run: (h) => spawnVia(h, { task: 'x', cwd: '/etc' }) },
    {
      name: 'a run token naming a parent directory',
      run: async (h) =>
        h.req('POST', '/api/spawn', { token: await runToken(h), body: { args: { task: 'x' }, cwd: '/etc' } }),
    },
  ],
  batch_too_large: [{ name: '1001 tasks', run: (h) => spawnVia(h, { tasks: Array(1001).fill('x') }) }],
  depth_exceeded: [
    { name: 'a run spawning at depth 1', run: async (h) => spawnVia(h, { task: 'x' }, await runToken(h)) },
  ],
  children_limit: [
    {
      name: 'a second live child',
      setup: { 'agent.subagent_max_depth': 2, 'agent.subagent_max_children': 1 },
      run: async (h) => {
        const token = await runToken(h);
        await spawnVia(h, { task: 'hang child' }, token);
        return spawnVia(h, { task: 'hang child 2' }, token);
      },
    },
  ],
  memory_critical: [
    {
      name: 'the gate reads critical',
      setup: { memoryGate: () => ({ critical: true, availableGb: 1.2, minGb: 4 }) },
      run: (h) => spawnVia(h, { task: 'x' }),
    },
  ],
  queue_full: [
    {
      name: 'a single spawn past max_queued',
      setup: { 'agent.subagent_max_queued': 1 },
      run: async (h) => {
        for (let i = 0; i < 4; i++) await spawnVia(h, { task: `hang ${i}` });
        return spawnVia(h, { task: 'hang one too many' });
      },
    },
  ],
  not_found: [
    { name: 'cancel an unknown run', run: (h) => h.req('POST', '/api/runs/nope/cancel') },
    { name: 'an unknown route', run: (h) => h.req('GET', '/api/nowhere') },
  ],
  not_running: [
    {
      name: 'cancel an ended run',
      run: async (h) => {
        const r = await spawnVia(h, { task: 'sleep=10 quick' });
        await h.world.clock.advance(100);
        return h.req('POST', `/api/runs/${(r.body.runs as { id: string }[])[0]!.id}/cancel`);
      },
    },
  ],
  conversation_busy: [
    {
      name: 'release a working conversation',
      run: async (h) => {
        const r = await spawnVia(h, { task: 'hang kept', keep: true });
        await h.world.clock.advance(0);
        return h.req('POST', `/api/conversations/${(r.body.runs as { id: string }[])[0]!.id}/release`);
      },
    },
  ],
  conversation_released: [
    {
      name: 'release twice',
      run: async (h) => {
        const r = await spawnVia(h, { task: 'sleep=10 kept', keep: true });
        await h.world.clock.advance(100);
        const id = (r.body.runs as { id: string }[])[0]!.id;
        expect((await h.req('POST', `/api/conversations/${id}/release`)).body.ok).toBe(true);
        return h.req('POST', `/api/conversations/${id}/release`);
      },
    },
  ],
  pruned: [
    {
      name: 'status after the transcript TTL',
      setup: { 'agent.subagent_result_ttl_secs': 60 },
      run: async (h) => {
        const r = await h.req('POST', '/api/spawn', {
          body: { parent: 'mcp:p', args: { task: 'sleep=10 x' } },
        });
        const id = (r.body.runs as { id: string }[])[0]!.id;
        await h.world.clock.advance(100);
        await h.world.gateway.waitForEvents('mcp:p', 0);
        await h.world.clock.advance(200_000);
        return h.req('GET', `/api/runs/${id}`);
      },
    },
  ],
  unauthorized: [{ name: 'no token', run: (h) => h.req('GET', '/api/runs', { token: null }) }],
  storage_unavailable: [
    {
      name: 'the store refuses writes',
      setup: { store: new FullDiskStore() },
      run: async (h) => {
        (h.world.store as FullDiskStore).full = true;
        const reply = await spawnVia(h, { task: 'x' });
        (h.world.store as FullDiskStore).full = false;
        return reply;
      },
    },
  ],
  cluster_unavailable: [
    {
      name: "the cluster's Redis does not answer",
      setup: { cluster: unreachableCluster },
      run: (h) => spawnVia(h, { task: 'x' }),
    },
  ],
  sandbox_unavailable: [
    {
      name: 'a sandbox where bubblewrap is missing',
      setup: {
        'workspace.bwrap_path': '/nonexistent/bwrap',
        workspaces: new Workspaces({
          root: '/nonexistent/worktrees',
          clock: new FakeClock(),
          gitTimeoutMs: 1000,
          unmergedKeepMs: 0,
          maxBranches: 1,
          conflictCheckMax: 0,
        }),
      },
      run: (h) => spawnVia(h, { task: 'x', sandbox: true }),
    },
  ],
  not_here: [
    {
      name: 'status of a run whose executing gateway does not answer',
      setup: { cluster: lostHostCluster },
      run: async (h) => {
        const r = await spawnVia(h, { task: 'x' });
        const id = (r.body.runs as { id: string }[])[0]!.id;
        await h.world.clock.advance(0);
        return h.req('GET', `/api/runs/${id}`);
      },
    },
  ],
};

const counts = new Map<string, number>();
afterAll(() => {
  console.log(`SEL lines per refusal code: ${JSON.stringify(Object.fromEntries(counts))}`);
});

describe('every refusal code writes exactly one typed SEL line', () => {
  it('the table covers every refusal code', () => {
    expect([...Object.keys(TRIGGERS), ...MERGE_CODES].sort()).toEqual([...REFUSAL_CODES].sort());
  });

  for (const code of Object.keys(TRIGGERS) as UnitCode[]) {
    for (const trigger of TRIGGERS[code]) {
      it(`${code}: ${trigger.name}`, async () => {
        const h = appHarness(trigger.setup ?? {});
        try {
          // Every refusal line of the whole trigger counts: a set-up step that was refused would show.
          const reply = await trigger.run(h);
          expect(reply.body.ok).toBe(false);
          expect(reply.body.refusal?.code, JSON.stringify(reply.body)).toBe(code);
          const lines = selSince(h.world, 0).filter((l) => l.metadata.code !== undefined);
          expect(lines.map((l) => l.metadata.code)).toEqual([code]);
          expect(lines[0]?.outcome).toMatch(/^(refused|rejected)_/);
          counts.set(code, (counts.get(code) ?? 0) + lines.length);
        } finally {
          await h.close();
        }
      });
    }
  }
});
