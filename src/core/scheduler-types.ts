import type { Refusal } from './errors.js';
import type { ProviderCapPolicy } from './provider-cap.js';
import type { ParentKey, Run, RunId, RunStatus, SteerMode, StopNote } from './types.js';

/** The limits admission enforces (DESIGN §3, §4), fixed for one gateway start. */
export interface SchedulerLimits {
  /** Permits: top-level runs in flight at once. */
  cap: number;
  /** Minimum gap between successive top-level starts. */
  staggerMs: number;
  /**
   * Whether a top-level run of `parent` starts a process on this host (cluster mode: the copies this
   * gateway executes, whose parent is `cluster:<origin>`, not the proxies whose start is a job added to the
   * cluster queue). Only those are spaced by the stagger and weighed by the reservation gate; the others
   * start at once, hold no memory here and do not move the stagger (the gateway executing them gates their
   * copies). Nested runs always start here. @default every top-level run
   */
  startsHere?: (parent: ParentKey) => boolean;
  /** Bound on queued single (non-wave) spawns. */
  maxQueued: number;
  /** Bound on queued wave members; a wave fits whole or is refused whole. */
  maxQueuedWaveMembers: number;
  /** 1 = sub-agents cannot spawn. */
  maxDepth: number;
  /** Live nested children per run. */
  maxChildren: number;
  /**
   * Per-run timeout, counted from when the agent is ready (`started`: up, prompt sent). A launch that
   * does not become ready within the same span times out too, so a hung start cannot hold a permit.
   */
  timeoutMs: number;
  /**
   * The reservation gate's buffer, GiB (`agent.reservation_buffer_gb`): with memory samples coming in, a
   * top-level start also waits until the memory the live runs may still grow into fits (see
   * `reservation.ts`). Absent = no gate.
   */
  reservationBufferGb?: number;
  /** Expected peak of an agent with no learned cost (`agent.subagent_cost_gb`). @default 0.5 */
  fallbackCostGb?: number;
  /**
   * The adaptive provider cap (`provider-cap.ts`): top-level runs whose agent names a provider also wait
   * for that provider's cap and hold. Absent = no provider cap (the host cap alone).
   */
  provider?: ProviderCapPolicy;
}

/** What the host sampler saw at its last tick, for the reservation gate. All GiB. */
export interface MemorySample {
  /** Effective available memory now; undefined when the read failed (the gate then limits nothing). */
  availableGb: number | undefined;
  /** Each tracked run's tree RSS at the tick (a shared session: its share); absent = not yet seen (0). */
  currentGb: Readonly<Record<RunId, number>>;
  /** Learned mean peak per agent; an agent missing here expects `fallbackCostGb`. */
  expectedGb: Readonly<Record<string, number>>;
  /** The learned peaks' standard deviation per agent; an agent missing here has none (0). */
  spreadGb?: Readonly<Record<string, number>>;
  /** Each run that has stopped growing: its RSS high-water mark (the sampler's `settledGb`); absent = growing. */
  settledGb?: Readonly<Record<RunId, number>>;
  /** Runs the memory pause holds stopped now: no run starts while one is (`reserveStarts`). */
  paused?: readonly RunId[];
}

/** A kept conversation: continuable while `idle`; `busy` while one of its runs is live. */
export interface Conversation {
  id: string;
  agent: string;
  parent: ParentKey;
  latestRunId: RunId;
  state: 'busy' | 'idle' | 'released';
  lastUsedAt: number;
  releasedReason?: string;
  /** The agent session behind it, as its runner reported it when a turn started (ACP runners only). */
  session?: KeptSession;
}

/**
 * The agent session a kept conversation continues in (issue 29): what a new agent process needs to reopen
 * it with ACP `session/load` after the gateway restarted.
 */
export interface KeptSession {
  /** The agent's own session id. */
  id: string;
  /** The directory the session was opened in (`session/load` takes it again). */
  cwd: string;
  /** Whether the agent advertised `loadSession` in `initialize`: only then does the session outlive its process. */
  loadable: boolean;
}

/** The memory gate's reading, taken by the gateway just before admission. */
export interface MemoryReading {
  critical: boolean;
  availableGb?: number;
  minGb: number;
}

/** The runs a command id already named, as the store holds them (the scheduler forgets ended ones). */
export interface KnownCommand {
  runIds: RunId[];
  batchId?: string;
}

export interface SpawnMember {
  id: RunId;
  agent: string;
  keep: boolean;
  /** Tool-call budget, resolved at admission (spawn, agent, config); absent or 0 = none. */
  maxTurns?: number;
  /**
   * Token budget resolved at admission (spawn, agent, config); absent or 0 = none. The scheduler narrows
   * a nested run's to what its ancestors have left.
   */
  maxTokens?: number;
  /** The provider the agent calls through Crew's provider gateway, if any. */
  provider?: string;
}

/** Why the scheduler asked a run to stop; the first stop asked decides how the run ends. */
export type StopCause = 'cancel' | 'timeout' | 'turn_limit' | 'token_budget';

export type SchedulerEvent =
  /** One spawn call: a single run, or a wave when `batchId` is set. Ids are chosen by the caller. */
  | {
      type: 'spawn';
      parent: ParentKey;
      members: SpawnMember[];
      batchId?: string;
      commandId?: string;
      /** What the store holds for `commandId` when the scheduler no longer knows it. */
      known?: KnownCommand;
      memory?: MemoryReading;
    }
  /** Continue a kept conversation with a new run. */
  | {
      type: 'continue';
      parent: ParentKey;
      conversationId: string;
      id: RunId;
      commandId?: string;
      known?: KnownCommand;
      memory?: MemoryReading;
      /** Tool-call budget of the new run; absent or 0 = none. */
      maxTurns?: number;
      /** Token budget of the new run; absent or 0 = none. */
      maxTokens?: number;
      /** The store's record of a conversation the scheduler no longer holds (released ones). */
      stored?: Conversation;
    }
  /**
   * The runner confirmed the run is up (the agent is ready and has the prompt): its timeout starts.
   * `session`: a kept run's agent session, recorded on its conversation so a restart can reopen it.
   */
  | { type: 'started'; runId: RunId; session?: KeptSession }
  /**
   * One model call of the run was answered with `tokens` (input + output, counted by the provider
   * gateway): once its count passes its budget the scheduler stops it, and it ends `completed` with
   * `stop: token_budget` (first stop wins, as for the turn budget).
   */
  | { type: 'tokens'; runId: RunId; tokens: number }
  /** The run made a tool call; at its budget the scheduler stops it (`stop: turn_limit`). */
  | { type: 'tool_call'; runId: RunId }
  /** A launch that could not begin (its agent is gone, the runner refused): the run ends `failed`. */
  | { type: 'start_failed'; runId: RunId; error: string }
  /** The runner reported the run's end (exactly once per launch). */
  | {
      type: 'ended';
      runId: RunId;
      /** `lost` only for a cluster run whose executing gateway died. */
      status: 'completed' | 'failed' | 'cancelled' | 'lost';
      stop?: StopNote;
      error?: string;
    }
  /** `ended`: what the store knows of a run that is no longer live, so the refusal can say so. */
  | { type: 'cancel'; runId: RunId; ended?: RunStatus }
  | { type: 'steer'; runId: RunId; message: string; mode: SteerMode; ended?: RunStatus }
  | {
      type: 'release';
      conversationId: string;
      /** In cluster mode also: the gateway keeping its session left the cluster (kept conversations). */
      reason: 'requested' | 'expired' | 'evicted' | `its gateway ${string} left the cluster`;
      stored?: Conversation;
    }
  /** Time passed: launches held back by the stagger, and deadlines. */
  | { type: 'tick' }
  /**
   * The gateway is closing: nothing starts from now on. Queued runs stay queued and a permit the stagger
   * still held stays unlaunched (the next start queues both again); what executes goes on to its end.
   */
  | { type: 'stop_starts' }
  /** The sampler's view of memory: queued runs the reservation gate held back may start now. */
  | { type: 'memory'; sample: MemorySample }
  /**
   * A model request of `runId` (if still known) was answered 429 / 529 / 503 by `provider`: the
   * provider's cap drops and its starts are held (queued runs wait; nothing is refused).
   */
  | { type: 'provider_limited'; provider: string; runId?: RunId; retryAfterMs?: number }
  /** A new gateway start: queued runs in admission order, runs that were executing, open waves. */
  | {
      type: 'restore';
      queued: Run[];
      executing: Run[];
      waves: RestoredWave[];
      nextSeq: number;
      /** Kept conversations of the previous process: their sessions died with it. */
      conversations?: Conversation[];
    };

export interface RestoredWave {
  batchId: string;
  parent: ParentKey;
  memberIds: RunId[];
  /** Members not yet ended. */
  remaining: number;
}

/** A completion to announce: one event per single run, one digest per wave. */
export type Announcement =
  | { kind: 'completion'; runId: RunId; parent: ParentKey }
  | { kind: 'digest'; batchId: string; parent: ParentKey; runIds: RunId[] };

export type SelOutcome =
  | 'admitted'
  | 'ended'
  | 'refused_queue_full'
  | 'refused_memory_critical'
  | 'refused_depth'
  | 'refused_children_limit'
  | 'conversation_released';

export type SchedulerCommand =
  /** Record a new or changed run; all records of one step belong to one store transaction. */
  | { type: 'persist'; run: Run }
  | { type: 'persist_conversation'; conversation: Conversation }
  /** Ask the runner to start (or continue) the run. */
  | { type: 'launch'; runId: RunId }
  | { type: 'stop'; runId: RunId; reason: StopCause }
  | { type: 'steer'; runId: RunId; message: string; mode: SteerMode }
  | { type: 'release_session'; conversationId: string; agent: string }
  /** Write a completion (or a wave's digest) to the outbox, in the same transaction as the terminal record. */
  | { type: 'announce'; announcement: Announcement }
  | { type: 'sel'; outcome: SelOutcome; metadata: Record<string, unknown> };

export interface AdmittedRun {
  id: RunId;
  status: RunStatus;
  /** 1-based place in the FIFO queue at admission. */
  position?: number;
}

/** The caller's answer to one event, tagged by `kind` (`ok` mirrors it for the wire shapes). */
export type SchedulerReply =
  /** Runs admitted (or, with `existing`, the runs an already-seen command id named). */
  | { kind: 'admitted'; ok: true; runs: AdmittedRun[]; batchId?: string; existing: boolean }
  | { kind: 'done'; ok: true }
  | { kind: 'refused'; ok: false; refusal: Refusal };

export interface StepResult {
  commands: SchedulerCommand[];
  reply: SchedulerReply;
  /**
   * For an admission (a spawn or continue that admitted runs): puts the scheduler back as it was
   * before the step, for when the step's store transaction did not commit. Call it before any other
   * step. An admission step launches only its own members, provided no wake-up was due when it began
   * (the caller ticks first), so undoing it touches nothing else.
   */
  rollback?: () => void;
}
