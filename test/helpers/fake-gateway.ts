import { FakeClock } from '../../src/clock/fake-clock.js';
import { ClusterExecutor } from '../../src/cluster/cluster-executor.js';
import type { ClusterLink } from '../../src/cluster/cluster-link.js';
import { ClusterPlacement } from '../../src/cluster/cluster-placement.js';
import type { AgentDef } from '../../src/core/agent-def.js';
import { type CrewConfig, defaultConfig } from '../../src/core/config-schema.js';
import { createGateway } from '../../src/gateway/create-gateway.js';
import type { Gateway, GatewayDeps } from '../../src/gateway/gateway.js';
import { type FakePlan, FakeRunner } from '../../src/runners/fake-runner.js';
import type { RunRequest } from '../../src/runners/runner.js';
import { MemorySelSink } from '../../src/sel/memory-sel-sink.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import type { Store } from '../../src/store/store.js';
import { MemoryTranscripts } from '../../src/transcripts/memory-transcripts.js';

export const fakeAgent = (name: string): AgentDef => ({
  name,
  runner: 'acp',
  command: ['fake'],
  shared: false,
  skills: [],
});

export interface FakeWorld {
  clock: FakeClock;
  runner: FakeRunner;
  gateway: Gateway;
  store: Store;
  sel: MemorySelSink;
  transcripts: MemoryTranscripts;
  config: CrewConfig;
  /** The executing side of cluster mode on this gateway (what a cluster link drives), for tests to drive. */
  executor: ClusterExecutor;
}

/**
 * A gateway on the fake runner and fake clock. Tasks script their runs: `sleep=<ms>`, `hang`,
 * `fail`, `tools=<n>` anywhere in the task text; or pass `plan`.
 */
export function fakeWorld(
  overrides: Partial<CrewConfig> & {
    cap?: number;
    plan?: (r: RunRequest) => FakePlan;
    store?: Store;
    memoryGate?: GatewayDeps['memoryGate'];
    /** Fields agent `sim` gets beside its defaults (a provider, a budget). */
    sim?: Partial<AgentDef>;
    /** Cluster mode on this link: the gateway's placement is the cluster's. */
    cluster?: ClusterLink;
    workspaces?: GatewayDeps['workspaces'];
    parentNameOf?: GatewayDeps['parentNameOf'];
  } = {},
): FakeWorld {
  const {
    cap,
    plan,
    store: givenStore,
    memoryGate,
    sim,
    cluster,
    workspaces,
    parentNameOf,
    ...keys
  } = overrides;
  const config = {
    ...defaultConfig(),
    'agent.subagent_spawn_stagger_secs': 0,
    'agent.spawn_min_memory_gb': 0,
    ...keys,
  };
  const clock = new FakeClock();
  const runner = new FakeRunner({ clock, plan: plan ?? planFromTask });
  const store = givenStore ?? new MemoryStore();
  const sel = new MemorySelSink(clock);
  const transcripts = new MemoryTranscripts();
  const gateway = createGateway(config, {
    clock,
    runner,
    store,
    sel,
    transcripts,
    agents: new Map([
      ['sim', { ...fakeAgent('sim'), ...sim }],
      ['other', fakeAgent('other')],
    ]),
    cap: cap ?? 3,
    defaultCwd: '/tmp',
    ...(memoryGate ? { memoryGate } : {}),
    ...(cluster ? { placement: new ClusterPlacement(cluster) } : {}),
    ...(workspaces ? { workspaces } : {}),
    ...(parentNameOf ? { parentNameOf } : {}),
  });
  return { clock, runner, gateway, store, sel, transcripts, config, executor: new ClusterExecutor(gateway) };
}

export function planFromTask(request: RunRequest): FakePlan {
  const text = request.prompt;
  const sleep = /sleep=(\d+)/.exec(text);
  const tools = /tools=(\d+)/.exec(text);
  return {
    durationMs: sleep ? Number(sleep[1]) : 1000,
    ...(text.includes('hang') ? { hang: true } : {}),
    ...(/\bfail\b/.test(text) ? { fail: 'scripted failure' } : {}),
    ...(tools ? { toolCalls: Number(tools[1]) } : {}),
    output: [`out:${text.slice(0, 30)}`],
  };
}
