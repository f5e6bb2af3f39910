import type { AgentDef } from '../core/agent-def.js';
import type { Clock } from '../core/clock.js';
import type { MemoryReading } from '../core/scheduler-types.js';
import type { ParentKey, RunId, RunSpec } from '../core/types.js';
import type { McpServerRef, Runner } from '../runners/runner.js';
import type { SelSink } from '../sel/sel-sink.js';
import type { ProviderUsage, Store } from '../store/store.js';
import type { TranscriptStore } from '../transcripts/transcript-store.js';
import type { Workspaces } from '../workspace/workspaces.js';
import type { Ids } from './ids.js';
import type { Placement } from './placement.js';
import type { RunObserver } from './run-supervisor.js';

/** What a gateway is built from; `createGateway` fills in-memory defaults for everything but a runner. */
export interface GatewayDeps {
  clock: Clock;
  store: Store;
  transcripts: TranscriptStore;
  sel: SelSink;
  agents: ReadonlyMap<string, AgentDef>;
  /**
   * The agents a run working in `cwd` can use, when they depend on it (the daemon's catalog: the
   * project's `.crew/agents`, re-read as files change); absent = `agents` for every run.
   */
  agentsAt?: (cwd: string) => ReadonlyMap<string, AgentDef>;
  /** The runner for an agent (by its `runner` field, or one fake for everything in tests). */
  runnerFor: (agent: AgentDef) => Runner;
  /** The concurrent-run cap, computed once at start (DESIGN §5). */
  cap: number;
  /** The per-spawn memory gate's live reading; absent = never critical. */
  memoryGate?: () => MemoryReading;
  /** The full prompt of a run: context groups and the agent's system prompt before the task. */
  buildPrompt?: (spec: RunSpec, agent: AgentDef) => string;
  /** Crew's MCP endpoint for a run (with a run-scoped token), so its own spawns nest under it. */
  mcpServersFor?: (runId: RunId, cwd: string) => McpServerRef[];
  /**
   * The environment that points a run's agent at Crew's provider gateway (its base URL with a
   * run-scoped token), for an agent that names a provider; absent = no provider gateway.
   */
  providerEnvFor?: (runId: RunId, provider: string, cwd: string) => Record<string, string>;
  /** What the provider gateway has counted so far for a live run (its view shows it before it ends). */
  liveUsage?: (runId: RunId) => ProviderUsage | undefined;
  /** Whether the memory pause holds this running run stopped now (its view says `paused: true`). */
  isPaused?: (runId: RunId) => boolean;
  /**
   * The name a parent's client gave itself (the daemon's `ClientNames`), kept with each run it admits as
   * `spec.parentName` (cleaned again there). Absent = no run is named.
   */
  parentNameOf?: (parent: ParentKey) => unknown;
  /** Where runs without a `cwd` execute when the parent gave none. */
  defaultCwd: string;
  ids?: Ids;
  /** Called with each run's process identity and end (the host sampler hooks in here). */
  observer?: RunObserver;
  /** How often the reaper looks. @default 60000 */
  reaperIntervalMs?: number;
  /**
   * The runtime an eligible run of this parent should share (a hosted chat runs its children in its own
   * parent process when they use the same agent command); undefined = none.
   */
  runtimeKeyFor?: (parent: ParentKey, agent: AgentDef) => string | undefined;
  /**
   * One push attempt's bound (`CREW_INJECTION_TIMEOUT`, read by the daemon), clamped to the delivery
   * timeout. @default 900000
   */
  injectionTimeoutMs?: number;
  /**
   * Where runs execute (issue 30). Absent = here (the local placement); the daemon composes cluster mode's
   * (src/cluster/cluster-placement.ts) when `cluster.redis_url` is set.
   */
  placement?: Placement;
  /**
   * Isolated workspaces (issue 31): git worktrees and sandboxes for runs that ask for them. Absent = a
   * spawn asking for `isolation` or `sandbox` is refused (never run without them).
   */
  workspaces?: Workspaces;
  /** Failures with no caller to answer (a run's end could not be recorded, …). @default discarded */
  log?: (line: string) => void;
}
