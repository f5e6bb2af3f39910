import { type ClusterJob, copyIdOf, originIdOf } from '../cluster/cluster-link.js';
import type { AgentDef } from '../core/agent-def.js';
import type { TimerHandle } from '../core/clock.js';
import type { CrewConfig } from '../core/config-schema.js';
import { CrewError, isCrewError, type Refusal } from '../core/errors.js';
import * as refusals from '../core/refusals.js';
import { Scheduler } from '../core/scheduler.js';
import type {
  Conversation,
  KnownCommand,
  MemoryReading,
  MemorySample,
  SchedulerCommand,
  SchedulerEvent,
  SchedulerReply,
  SpawnMember,
} from '../core/scheduler-types.js';
import { resolveMaxTokens, resolveMaxTurns } from '../core/turn-budget.js';
import {
  assertNever,
  isTerminal,
  type ParentKey,
  parentRunId,
  type Run,
  type RunId,
  type RunSpec,
  type RunStatus,
  type SteerMode,
} from '../core/types.js';
import { isRateLimited } from '../provider/provider-metrics.js';
import { withPruneHook, withWorkspaceRunners } from '../runners/workspace-wiring.js';
import type { RunInfoUpdate, RunRecord, StoreTx } from '../store/store.js';
import type { PageOptions, TranscriptPage } from '../transcripts/transcript-store.js';
import { inheritWorkspace } from '../workspace/admission.js';
import type { MergeResult } from '../workspace/merge.js';
import { mergeArgsSchema } from '../workspace/merge-args.js';
import { noWorkspaces } from '../workspace/workspace-refusals.js';
import {
  type AckResult,
  type Answer,
  type GatewayCounts,
  type ListResult,
  refusalOf,
  type SpawnResult,
  type StatusOptions,
  type StatusResult,
} from './answers.js';
import { Auditor } from './audit.js';
import { contextScopeOf } from './context-scope.js';
import { cwdAtStart } from './cwd-at-start.js';
import { Delivery } from './delivery.js';
import type { GatewayDeps } from './gateway-deps.js';
import { createIds, type Ids } from './ids.js';
import {
  type Effect,
  isEmptyTx,
  type NewSpecs,
  OneSpec,
  type Plan,
  type PlanInput,
  planTransaction,
} from './plan-transaction.js';
import { type ProviderCall, type ProviderCapView, ProviderFeed, providerLimits } from './provider-feed.js';
import { buildRunRequest, type RunRequestDeps } from './run-request.js';
import { RunSupervisor } from './run-supervisor.js';
import { type RunView, toRunView } from './run-view.js';
import type { DeliveredEvent, Sink } from './sink.js';
import { continueArgsSchema, parseArgs, spawnArgsSchema } from './spawn-args.js';
import { StoreWriter } from './store-writer.js';
import { validateSpawn } from './validate.js';
import { type Scope, Visibility } from './visibility.js';

export type {
  AckResult,
  Answer,
  GatewayCounts,
  ListResult,
  SpawnResult,
  StatusOptions,
  StatusResult,
} from './answers.js';
export type { GatewayDeps } from './gateway-deps.js';
export type { RunObserver } from './run-supervisor.js';
export type { Scope } from './visibility.js';

/** The parent of a run this gateway executes for the cluster: `cluster:<origin gateway>`. */
export const CLUSTER_PARENT_PREFIX = 'cluster:';

/** Whether `parent` is the cluster's: its top-level runs are copies executed here for another gateway. */
function isClusterCopyParent(parent: ParentKey): boolean {
  return parent.startsWith(CLUSTER_PARENT_PREFIX);
}

/** What one step commits beside the scheduler's own records. */
interface StepExtra {
  newSpecs?: NewSpecs;
  claim?: RunId[];
  runInfo?: RunInfoUpdate[];
}

/**
 * The gateway's facade and lifecycle: admission (the pure scheduler) wired to the store, the run
 * supervisor, the SEL and delivery. Every public method answers with a value; refusals are values
 * (`{ok: false, refusal}`), never thrown. Each step is one store transaction, planned from the
 * scheduler's commands (`planTransaction`), then its effects are carried out.
 */
export class Gateway {
  private readonly scheduler: Scheduler;
  private readonly epoch: number;
  private readonly ids: Ids;
  /** A fresh outbox event id, for every step's plan (one function, not one per step). */
  private readonly nextEventId: () => string;
  private readonly delivery: Delivery;
  private readonly supervisor: RunSupervisor;
  private readonly visibility: Visibility;
  /** Specs of live runs, so a launch needs no store read. */
  private readonly specs = new Map<RunId, RunSpec>();
  /** What every launch's request is built with: the config and deps, fixed for the gateway's life. */
  private runRequestDeps: RunRequestDeps | undefined;
  private readonly log: (line: string) => void;
  private readonly writer: StoreWriter;
  private readonly watchers = new Set<(change: GatewayChange) => void>();
  private wakeTimer: TimerHandle | undefined;
  private wakeAt: number | undefined;
  private closing = false;
  private closed = false;
  private readonly auditor: Auditor;
  private readonly providers: ProviderFeed;
  private stopWorkspaceSweep: (() => void) | undefined;

  constructor(
    readonly config: CrewConfig,
    private readonly deps: GatewayDeps,
  ) {
    this.ids = deps.ids ?? createIds();
    this.nextEventId = () => this.ids.event();
    this.log = deps.log ?? (() => undefined);
    this.epoch = deps.store.nextEpoch();
    this.writer = new StoreWriter({ store: deps.store, clock: deps.clock, log: this.log });
    this.auditor = new Auditor({
      sel: deps.sel,
      log: this.log,
      onRefusal: (outcome, metadata) => this.notify({ kind: 'refusal', outcome, metadata }),
    });
    this.visibility = new Visibility(deps.store);
    this.scheduler = new Scheduler({
      // In cluster mode BullMQ's concurrencies are the caps; the scheduler holds proxies of runs queued or
      // executing elsewhere beside the runs this host executes (docs/decisions.md, cluster mode).
      cap: deps.cap + (deps.cluster?.proxyRoom ?? 0),
      staggerMs: config['agent.subagent_spawn_stagger_secs'] * 1000,
      // In cluster mode a proxy's "start" is a job added to the queue, not a process: the stagger spaces and
      // the reservation gate weighs only the copies this gateway executes (docs/decisions.md).
      ...(deps.cluster ? { startsHere: isClusterCopyParent } : {}),
      maxQueued: config['agent.subagent_max_queued'],
      maxQueuedWaveMembers: config['agent.subagent_max_queued_wave_members'],
      maxDepth: config['agent.subagent_max_depth'],
      maxChildren: config['agent.subagent_max_children'],
      timeoutMs: config['agent.subagent_timeout_secs'] * 1000,
      reservationBufferGb: config['agent.reservation_buffer_gb'],
      fallbackCostGb: config['agent.subagent_cost_gb'],
      // In cluster mode the provider cap is the cluster's, one shared value in Redis (docs/decisions.md,
      // the shared provider cap): a per-host cap beside it would cut twice, and an origin's would bound
      // jobs it only queues.
      ...(deps.cluster ? {} : providerLimits(config, deps.cap)),
    });
    this.providers = new ProviderFeed({
      scheduler: this.scheduler,
      clock: deps.clock,
      config,
      step: (event) => this.step(event),
      ...(deps.providerEnvFor ? { providerEnvFor: deps.providerEnvFor } : {}),
    });
    this.delivery = new Delivery({
      clock: deps.clock,
      store: deps.store,
      transcripts: deps.workspaces
        ? withPruneHook(deps.transcripts, deps.workspaces, this.log)
        : deps.transcripts,
      epoch: this.epoch,
      config,
      ...(deps.injectionTimeoutMs !== undefined ? { injectionTimeoutMs: deps.injectionTimeoutMs } : {}),
      ...(deps.reaperIntervalMs !== undefined ? { reaperIntervalMs: deps.reaperIntervalMs } : {}),
      idleConversations: () => this.scheduler.idleConversations(),
      liveConversations: () => this.scheduler.liveConversationIds(),
      log: this.log,
      releaseConversation: (id, reason) => this.expireConversation(id, reason),
      onUndeliverable: (event) =>
        this.auditor.write('undeliverable', {
          event_id: event.id,
          parent: event.parent,
          runs: event.runIds.length,
        }),
    });
    this.supervisor = new RunSupervisor({
      step: (event, facts) => {
        this.step(event, facts?.runInfo ? { runInfo: facts.runInfo } : {});
      },
      runnerFor: deps.workspaces ? withWorkspaceRunners(deps.runnerFor, deps.workspaces) : deps.runnerFor,
      transcripts: deps.transcripts,
      ...(deps.observer ? { observer: deps.observer } : {}),
      log: this.log,
    });
  }

  /** Recovers what a previous process left: queued runs re-queued in order, executing ones `lost`. */
  start(): void {
    const state = this.deps.store.restartState();
    for (const record of state.queued) {
      const stored = this.deps.store.run(record.id);
      if (stored) this.specs.set(record.id, stored.spec);
    }
    this.step(
      {
        type: 'restore',
        queued: state.queued,
        executing: state.executing.map((r) => r.run),
        waves: state.waves,
        nextSeq: state.nextSeq,
        conversations: state.conversations,
      },
      { claim: state.executing.map((r) => r.run.id) },
    );
    this.delivery.start();
    const workspaces = this.deps.workspaces;
    if (workspaces) {
      // Worktrees a killed daemon left behind go before anything new starts in them (issue 31).
      void workspaces
        .recover(new Set(this.scheduler.liveConversationIds()))
        .catch((error: unknown) => this.log(`crew: recovering worktrees failed: ${String(error)}`));
      this.stopWorkspaceSweep = this.every(this.deps.reaperIntervalMs ?? 60_000, () => {
        void workspaces
          .sweep()
          .catch((error: unknown) => this.log(`crew: sweeping worktrees failed: ${String(error)}`));
      });
    }
  }

  /** Calls `fn` every `intervalMs` on the gateway's clock until the returned function is called. */
  every(intervalMs: number, fn: () => void): () => void {
    let handle: TimerHandle | undefined;
    let stopped = false;
    const arm = () => {
      handle = this.deps.clock.setTimer(() => {
        if (stopped) return;
        fn();
        arm();
      }, intervalMs);
    };
    arm();
    return () => {
      stopped = true;
      if (handle !== undefined) this.deps.clock.clearTimer(handle);
    };
  }

  /** The gateway's clock reading (front ends time their waits by it). */
  now(): number {
    return this.deps.clock.now();
  }

  /** The host cap (DESIGN §5). */
  get cap(): number {
    return this.deps.cap;
  }

  /**
   * The scheduler's counts as the host sees them. In cluster mode `running`, `starting` and `topLevel`
   * count the runs executing here (copies and their nested runs), the ones the host cap bounds; the
   * proxies of runs admitted here (waiting in the cluster queue or executing on any gateway, this one
   * included as a copy) are `proxies`, so no run counts twice (docs/decisions.md, cluster polish).
   */
  counts(): GatewayCounts {
    const counts = this.scheduler.counts();
    const proxies = { starting: 0, running: 0 };
    if (this.deps.cluster) {
      for (const id of this.scheduler.permitHolders().keys()) {
        const run = this.scheduler.liveRun(id);
        if (!run || !this.isClusterProxy(run)) continue;
        if (run.status === 'starting' || run.status === 'running') proxies[run.status]++;
      }
    }
    return {
      ...counts,
      cap: this.cap,
      running: counts.running - proxies.running,
      starting: counts.starting - proxies.starting,
      topLevel: counts.topLevel - proxies.running - proxies.starting,
      proxies: proxies.running + proxies.starting,
    };
  }

  /**
   * Calls `watcher` after each change that a live view shows: run records committed (read them with
   * `list` / `status`), refusals, acknowledgements. Returns the function that stops it.
   */
  watch(watcher: (change: GatewayChange) => void): () => void {
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  /**
   * The host sampler's view of memory (each tick): the reservation gate holds top-level starts until
   * what the live runs may still grow into fits, and lets queued runs go as memory frees.
   */
  observeMemory(sample: MemorySample): void {
    if (this.closed) return;
    this.step({ type: 'memory', sample });
  }

  /** Why the store refuses writes, while it does (admission answers `storage_unavailable` meanwhile). */
  storageProblem(): string | undefined {
    return this.writer.unavailable;
  }

  /** Whether this top-level run holds a permit now. */
  holdsPermit(id: RunId): boolean {
    return this.scheduler.permitHolders().has(id);
  }

  /** Queued top-level runs in the order they will start. */
  queuedIds(): RunId[] {
    return this.scheduler.queuedIds();
  }

  // ── the API ──────────────────────────────────────────────────────────────────────────────────

  /** `spawn_run`: one task, or a wave with `tasks`. Returns at once; results come as events. */
  spawn(parent: ParentKey, rawArgs: unknown, parentCwd?: string): SpawnResult {
    return this.auditor.audited('spawn_run', parent, () => {
      if (this.closing) throw new CrewError(refusals.shuttingDown());
      const args = parseArgs(spawnArgsSchema, rawArgs);
      const validated = validateSpawn(
        args,
        this.config,
        (cwd) => this.agentsAt(cwd),
        parentCwd ?? this.deps.defaultCwd,
        this.deps.workspaces,
      );
      const batchId = validated.wave ? this.ids.batch() : undefined;
      // A single spawn's one spec needs no map (admission is the hot path); a wave's are in one.
      const single = validated.specs.length === 1;
      const waveSpecs = single ? undefined : new Map<RunId, RunSpec>();
      let singleSpec: OneSpec | undefined;
      // Every task of one spawn works in the same directory, so one look at its agents serves all.
      const agents = this.agentsAt(validated.specs[0]?.cwd);
      const members = validated.specs.map((spec): SpawnMember => {
        const id = this.ids.run();
        if (waveSpecs) waveSpecs.set(id, spec);
        else singleSpec = new OneSpec(id, spec);
        const member: SpawnMember = {
          id,
          agent: spec.agent,
          keep: spec.keep === true,
          maxTurns: this.maxTurnsOf(spec, agents),
          maxTokens: this.maxTokensOf(spec, agents),
        };
        const provider = this.providers.providerOf(agents.get(spec.agent));
        if (provider !== undefined) member.provider = provider;
        return member;
      });
      const commandId = validated.commandId;
      const known = commandId === undefined ? undefined : this.knownCommand(parent, commandId);
      // Assigned, not spread, for the same reason.
      const event: Extract<SchedulerEvent, { type: 'spawn' }> = { type: 'spawn', parent, members };
      if (batchId !== undefined) event.batchId = batchId;
      if (commandId !== undefined) event.commandId = commandId;
      if (known) event.known = known;
      const memory = this.memoryReading();
      if (memory) event.memory = memory;
      // One of the two is set: validation refuses a spawn with no task.
      const reply = this.step(event, { newSpecs: waveSpecs ?? singleSpec ?? new Map() });
      return withWarnings(this.spawnAnswer(reply), validated.warnings);
    });
  }

  /**
   * `spawn_run` as the front ends call it: on one host the same as {@link spawn}; in cluster mode a
   * top-level spawn is first checked against the cluster-wide queue bounds and answers once its jobs are
   * in the cluster queue (a nested spawn executes here under its ancestor's permit, as on one host).
   */
  async admit(parent: ParentKey, rawArgs: unknown, parentCwd?: string): Promise<SpawnResult> {
    const cluster = this.deps.cluster;
    if (!cluster || parentRunId(parent) !== undefined) return this.spawn(parent, rawArgs, parentCwd);
    const args = (typeof rawArgs === 'object' && rawArgs !== null ? rawArgs : {}) as Record<string, unknown>;
    const wave = Array.isArray(args.tasks);
    const answer = await cluster.admit(
      wave ? 'wave' : 'single',
      wave ? (args.tasks as unknown[]).length : 1,
      () => this.spawn(parent, rawArgs, parentCwd),
    );
    if ('ok' in answer) return answer;
    this.audit(answer.refusal, { source: parent, tool_name: 'spawn_run' });
    return { ok: false, refusal: answer.refusal };
  }

  /**
   * `spawn_continue` as the front ends call it: on one host the same as {@link continue}; in cluster mode
   * a top-level parent's continuation is a cluster job like any top-level run (queue bounds, provider cap)
   * that runs on the gateway holding the conversation's session (docs/decisions.md, kept conversations in
   * cluster mode).
   */
  async admitContinue(parent: ParentKey, rawArgs: unknown, scope?: Scope): Promise<SpawnResult> {
    const cluster = this.deps.cluster;
    if (!cluster || parentRunId(parent) !== undefined) return this.continue(parent, rawArgs, scope);
    const answer = await cluster.admit('single', 1, () => this.continue(parent, rawArgs, scope));
    if ('ok' in answer) return answer;
    this.audit(answer.refusal, { source: parent, tool_name: 'spawn_continue' });
    return { ok: false, refusal: answer.refusal };
  }

  /**
   * Cluster mode: executes a job another gateway (or this one) admitted, as a top-level run here with
   * the job's run id and parent `cluster:<origin>`; resolves once it has ended here. Its completion goes
   * to that parent's sink (the cluster's), which sends it to the origin. A kept run's session stays here;
   * a continuation (`job.continues`) is the next turn in it, admitted here as `spawn_continue` is.
   */
  executeForCluster(job: ClusterJob): Promise<SchedulerReply> {
    const id = copyIdOf(job.runId);
    if (this.closing)
      return Promise.resolve({ kind: 'refused', ok: false, refusal: refusals.shuttingDown() });
    const ended = new Promise<void>((resolve) => {
      const stop = this.watch((change) => {
        if (change.kind !== 'runs' || !change.runIds.includes(id)) return;
        const status = this.statusOf(id);
        if (status === undefined || isTerminal(status)) {
          stop();
          resolve();
        }
      });
    });
    const reply =
      job.continues === undefined ? this.spawnForCluster(job, id) : this.continueForCluster(job, id);
    return reply.kind === 'admitted' && !reply.existing ? ended.then(() => reply) : Promise.resolve(reply);
  }

  private spawnForCluster(job: ClusterJob, id: RunId): SchedulerReply {
    const agents = this.agentsAt(job.spec.cwd);
    const provider = this.providers.providerOf(agents.get(job.spec.agent));
    return this.step(
      {
        type: 'spawn',
        parent: `${CLUSTER_PARENT_PREFIX}${job.origin}`,
        members: [
          {
            id,
            agent: job.spec.agent,
            keep: job.spec.keep === true,
            ...(job.maxTurns !== undefined ? { maxTurns: job.maxTurns } : {}),
            ...(job.maxTokens !== undefined ? { maxTokens: job.maxTokens } : {}),
            ...(provider !== undefined ? { provider } : {}),
          },
        ],
        commandId: id,
        ...this.knownOf(`${CLUSTER_PARENT_PREFIX}${job.origin}`, id),
      },
      { newSpecs: new OneSpec(id, job.spec) },
    );
  }

  /** The next turn of a conversation whose session this gateway keeps for the cluster (`x<conversation>`). */
  private continueForCluster(job: ClusterJob, id: RunId): SchedulerReply {
    const conversationId = copyIdOf(job.continues as RunId);
    const live = this.scheduler.conversation(conversationId);
    const stored = live ? undefined : this.deps.store.conversation(conversationId);
    const parent = `${CLUSTER_PARENT_PREFIX}${job.origin}`;
    return this.step(
      {
        type: 'continue',
        parent,
        conversationId,
        id,
        ...(job.maxTurns !== undefined ? { maxTurns: job.maxTurns } : {}),
        ...(job.maxTokens !== undefined ? { maxTokens: job.maxTokens } : {}),
        commandId: id,
        ...this.knownOf(parent, id),
        ...(stored ? { stored } : {}),
      },
      { newSpecs: new OneSpec(id, { ...job.spec, keep: true }) },
    );
  }

  /** Cluster mode: the origin asks to release the session this gateway keeps for its conversation. */
  releaseForCluster(conversationId: RunId): void {
    const id = copyIdOf(conversationId);
    if (this.closed || !this.scheduler.conversation(id)) return;
    this.step({ type: 'release', conversationId: id, reason: 'requested' });
  }

  /**
   * Cluster mode: the gateway keeping this conversation's session released it (its reaper); this
   * gateway, its origin, releases the conversation too and tells its parent, as its own reaper would.
   */
  releasedElsewhere(conversationId: RunId, reason: 'expired' | 'evicted'): void {
    if (this.closed || this.scheduler.conversation(conversationId)?.state !== 'idle') return;
    this.expireConversation(conversationId, reason);
  }

  /** A run's status now (live or recorded); undefined for an unknown run. */
  /** A live run as the scheduler holds it (no store read; do not change it); undefined once it has ended. */
  liveRun(id: RunId): Readonly<Run> | undefined {
    return this.scheduler.liveRun(id);
  }

  statusOf(id: RunId): RunStatus | undefined {
    return this.scheduler.liveRun(id)?.status ?? this.deps.store.run(id)?.run.status;
  }

  /**
   * A run's end as this gateway recorded it, with its transcript (up to `agent.status_max_chars`): what
   * an executing gateway sends to the run's origin in cluster mode. Undefined for an unknown run.
   */
  async outcomeOf(
    id: RunId,
  ): Promise<{ status: string; stop?: string; error?: string; text: string } | undefined> {
    const record = this.deps.store.run(id);
    if (!record) return undefined;
    const run = record.run;
    let text = '';
    try {
      text = (await this.deps.transcripts.page(id, { maxChars: this.config['agent.status_max_chars'] })).text;
    } catch (error) {
      this.log(
        `crew: reading run ${id}'s transcript for its origin failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    return {
      status: run.status,
      ...(run.stop !== undefined ? { stop: run.stop } : {}),
      ...(run.error !== undefined ? { error: run.error } : {}),
      text,
    };
  }

  /**
   * A page of run `id`'s transcript as this gateway holds it (`pruned` once the reaper took it,
   * `not_found` for a run it does not know): what an executing gateway answers an origin that asks for
   * the transcript of a copy it runs (cluster mode).
   */
  pageOf(id: RunId, options: PageOptions): Promise<TranscriptPage> {
    const record = this.deps.store.run(id);
    if (!record) return Promise.reject(new CrewError(refusals.notVisible(id)));
    return this.localPage(record, options);
  }

  /**
   * Where `spawn_status` reads a run's transcript: here, or in cluster mode where the run executes (a copy
   * `x<id>` this gateway runs, or another gateway, asked through the cluster). An ended cluster run asked
   * for without paging or grep is answered here: its outcome brought that first page along, so its status
   * stays readable when the gateway that ran it is gone.
   */
  private transcriptOf(record: RunRecord, options: PageOptions): Promise<TranscriptPage> {
    const { cluster } = this.deps;
    const host = record.host;
    const firstPage =
      options.offset === undefined && options.limit === undefined && options.grep === undefined;
    if (!cluster || host === undefined || (firstPage && isTerminal(record.run.status)))
      return this.localPage(record, options);
    return host === cluster.gatewayName
      ? this.pageOf(copyIdOf(record.run.id), options)
      : cluster.page(host, record.run.id, withoutClient(options));
  }

  private localPage(record: RunRecord, options: PageOptions): Promise<TranscriptPage> {
    if (record.prunedAt !== undefined)
      return Promise.reject(new CrewError(refusals.transcriptPruned(record.run.id, record.run.status)));
    return this.deps.transcripts.page(record.run.id, options);
  }

  /** `spawn_continue`: a new turn in a kept conversation (admitted like any run). */
  continue(parent: ParentKey, rawArgs: unknown, scope: Scope = { kind: 'parent', parent }): SpawnResult {
    return this.auditor.audited('spawn_continue', parent, () => {
      if (this.closing) throw new CrewError(refusals.shuttingDown());
      const args = parseArgs(continueArgsSchema, rawArgs);
      const found = this.scheduler.conversation(args.conversation);
      const foundAnywhere = found ?? this.deps.store.conversation(args.conversation);
      if (foundAnywhere) this.visibility.assertVisible(scope, foundAnywhere.latestRunId);
      // In cluster mode an idle conversation whose session's gateway left the cluster is released first.
      const gone = found?.state === 'idle' ? this.releaseIfHostGone(found) : undefined;
      const live = gone ? undefined : found;
      const stored = live ? undefined : (gone ?? foundAnywhere);
      const conversation = live ?? stored;
      const base = conversation ? this.deps.store.run(conversation.latestRunId)?.spec : undefined;
      const agent = args.agent ?? conversation?.agent ?? this.config['agent.default_agent'];
      const validated = validateSpawn(
        {
          task: args.task,
          agent,
          ...(args.max_turns !== undefined ? { max_turns: args.max_turns } : {}),
          ...(args.max_tokens !== undefined ? { max_tokens: args.max_tokens } : {}),
          ...(args.model !== undefined ? { model: args.model } : {}),
        },
        this.config,
        (cwd) => this.agentsAt(cwd),
        base?.cwd ?? this.deps.defaultCwd,
        this.deps.workspaces,
      );
      const spec = {
        ...validated.specs[0],
        ...contextScopeOf(base),
        keep: true,
        ...inheritWorkspace(base),
      } as RunSpec;
      const id = this.ids.run();
      const known = args.command_id === undefined ? undefined : this.knownCommand(parent, args.command_id);
      const memory = this.memoryReading();
      const reply = this.step(
        {
          type: 'continue',
          parent,
          conversationId: args.conversation,
          id,
          maxTurns: this.maxTurnsOf(spec),
          maxTokens: this.maxTokensOf(spec),
          ...(args.command_id !== undefined ? { commandId: args.command_id } : {}),
          ...(known ? { known } : {}),
          ...(stored ? { stored } : {}),
          ...(memory ? { memory } : {}),
        },
        { newSpecs: new OneSpec(id, spec) },
      );
      return withWarnings(this.spawnAnswer(reply), validated.warnings);
    });
  }

  /**
   * Cluster mode: an idle conversation whose session was kept on a gateway that has left the cluster
   * (gone from its registry, so its runs were declared lost too) is released here, so continuing it
   * answers `conversation_released` naming that gateway (docs/decisions.md, kept conversations in
   * cluster mode).
   */
  private releaseIfHostGone(conversation: Conversation): Conversation | undefined {
    const host = this.sessionHostOf(conversation.id);
    if (host === undefined || this.deps.cluster?.hasGateway(host) !== false) return undefined;
    const reason = `its gateway ${host} left the cluster` as const;
    const reply = this.step({ type: 'release', conversationId: conversation.id, reason });
    return reply.ok ? { ...conversation, state: 'released', releasedReason: reason } : undefined;
  }

  /**
   * The gateway keeping the session of a conversation this gateway admitted in cluster mode (its first
   * run's host); undefined for a conversation whose session is here (one host, nested, or a copy).
   */
  private sessionHostOf(conversationId: string): string | undefined {
    if (!this.deps.cluster) return undefined;
    const record = this.deps.store.run(conversationId);
    if (record?.run.depth !== 1 || isClusterCopyParent(record.run.parent)) return undefined;
    return record.host;
  }

  cancel(id: RunId, scope: Scope): Answer {
    return this.auditor.audited('spawn_cancel', scopeName(scope), () => {
      const record = this.visibility.assertVisible(scope, id);
      return this.answer(this.step({ type: 'cancel', runId: id, ...endedOf(record) }));
    });
  }

  steer(id: RunId, message: string, mode: SteerMode, scope: Scope): Answer {
    return this.auditor.audited('spawn_steer', scopeName(scope), () => {
      if (typeof message !== 'string' || message.trim() === '') throw new CrewError(refusals.emptySteer());
      const record = this.visibility.assertVisible(scope, id);
      return this.answer(this.step({ type: 'steer', runId: id, message, mode, ...endedOf(record) }));
    });
  }

  release(conversationId: string, scope: Scope): Answer {
    return this.auditor.audited('spawn_release', scopeName(scope), () => {
      const live = this.scheduler.conversation(conversationId);
      const stored = live ? undefined : this.deps.store.conversation(conversationId);
      const conversation = live ?? stored;
      if (conversation) this.visibility.assertVisible(scope, conversation.latestRunId);
      return this.answer(
        this.step({ type: 'release', conversationId, reason: 'requested', ...(stored ? { stored } : {}) }),
      );
    });
  }

  /**
   * `spawn_merge`: merges one run's branch, or a wave's members that do not conflict, into `target`
   * without touching any checkout (issue 31, see `mergeRuns`).
   */
  async merge(rawArgs: unknown, scope: Scope): Promise<MergeResult> {
    return this.auditor.auditedAsync('spawn_merge', scopeName(scope), async () => {
      try {
        const args = parseArgs(mergeArgsSchema, rawArgs);
        const workspaces = this.deps.workspaces;
        if (!workspaces) throw new CrewError(noWorkspaces());
        const records =
          args.agent_id !== undefined
            ? [this.visibility.assertVisible(scope, args.agent_id)]
            : this.deps.store.runs({ batchId: args.batch_id as string });
        if (records.length === 0) throw new CrewError(refusals.notVisible(args.batch_id as string));
        for (const record of records) this.visibility.assertVisible(scope, record.run.id);
        return await workspaces.merge(records, args, (runInfo) =>
          this.deps.store.apply({ epoch: this.epoch, runInfo }),
        );
      } catch (error) {
        return refusalOf(error) as MergeResult;
      }
    });
  }

  list(scope: Scope, limit = 500): ListResult {
    const counts = this.counts();
    return {
      ok: true,
      runs: this.visibility.records(scope, limit).map((r) => this.viewOf(r)),
      cap: this.cap,
      running: counts.running + counts.starting,
      running_top_level: counts.topLevel,
      running_nested: counts.running + counts.starting - counts.topLevel,
      queued: counts.queued,
    };
  }

  /** A model request of a run was answered (the provider gateway): see `ProviderFeed.observe`. */
  observeProviderCall(call: ProviderCall): void {
    if (this.closed) return;
    this.providers.observe(call);
    if (isRateLimited(call.status) && this.deps.cluster) {
      // A run executed here for the cluster (or nested under one): the cluster's shared cap hears it,
      // also when the answer is reported just after the run ended.
      const runOf = (id: RunId) => this.scheduler.liveRun(id) ?? this.deps.store.run(id)?.run;
      const rootId = runOf(call.runId)?.rootId;
      const root = rootId === undefined ? undefined : runOf(rootId);
      if (root?.parent.startsWith(CLUSTER_PARENT_PREFIX))
        this.deps.cluster.providerLimited(originIdOf(root.id), call.retryAfterMs);
    }
    // A hold changes no stored record, but queued runs now show `hold_until`: live views re-read them.
    if (isRateLimited(call.status) && this.watchers.size > 0)
      this.notify({ kind: 'runs', runIds: this.scheduler.queuedIds() });
  }

  /** Each provider's cap, hold and running count (`resource_status`'s `providers`). */
  providerCaps(): Record<string, ProviderCapView> {
    return this.providers.caps();
  }

  /** A stored run as every surface shows it, with what a queued one waits for (its provider's hold). */
  viewOf(record: RunRecord): RunView {
    // A live run's usage so far comes from the provider gateway; an ended one's is on its record.
    const live =
      record.providerUsage === undefined && !isTerminal(record.run.status)
        ? this.deps.liveUsage?.(record.run.id)
        : undefined;
    const waiting = this.providers.withWaiting(toRunView(live ? { ...record, providerUsage: live } : record));
    const view =
      waiting.status === 'running' && this.deps.isPaused?.(record.run.id)
        ? { ...waiting, paused: true as const }
        : waiting;
    return this.deps.cluster ? this.withClusterHold(view) : view;
  }

  /**
   * Cluster mode: a top-level run still waiting in the cluster queue (`starting` until a gateway takes it)
   * while the provider holds the cluster's starts says so, as a queued run does on one host.
   */
  private withClusterHold(view: RunView): RunView {
    if (view.status !== 'starting' || view.depth !== 1 || view.started_at !== undefined) return view;
    const holdUntil = this.deps.cluster?.providerHoldUntil();
    if (holdUntil === undefined || holdUntil <= this.deps.clock.now()) return view;
    return { ...view, waiting_for: 'provider', hold_until: new Date(holdUntil).toISOString() };
  }

  /** The current view of each of these runs the scope can see (others are left out), in the given order. */
  views(ids: readonly RunId[], scope: Scope): RunView[] {
    const views: RunView[] = [];
    for (const id of ids) {
      try {
        views.push(this.viewOf(this.visibility.assertVisible(scope, id)));
      } catch (error) {
        if (!isCrewError(error)) throw error;
      }
    }
    return views;
  }

  async status(id: RunId, scope: Scope, options: StatusOptions = {}): Promise<StatusResult> {
    return this.auditor.auditedAsync('spawn_status', scopeName(scope), () =>
      this.statusUnaudited(id, scope, options),
    );
  }

  private async statusUnaudited(id: RunId, scope: Scope, options: StatusOptions): Promise<StatusResult> {
    try {
      const record = this.visibility.assertVisible(scope, id);
      const page = await this.transcriptOf(record, {
        ...options,
        maxChars: this.config['agent.status_max_chars'],
        client: scopeName(scope), // greps take turns between clients (issue 28)
      });
      return {
        ok: true,
        run: this.viewOf(record),
        text: page.text,
        ...(page.fromLine !== undefined ? { from_line: page.fromLine } : {}),
        ...(page.toLine !== undefined ? { to_line: page.toLine } : {}),
        ...(page.totalLines !== undefined ? { total_lines: page.totalLines } : {}),
      };
    } catch (error) {
      return refusalOf(error);
    }
  }

  /**
   * Acknowledges the completion event that names `id` (its own, or its wave's digest), as a person does
   * from the dashboard or Slack: recorded once with the event and its runs (`acked_at`), kept across
   * restarts; acking again answers the first time.
   */
  ack(id: RunId, scope: Scope): AckResult {
    return this.auditor.audited('ack', scopeName(scope), () => {
      const record = this.visibility.assertVisible(scope, id);
      const first = record.run.batchId === undefined ? id : this.firstMemberOf(record.run.batchId, id);
      const event = this.deps.store.outbox({ firstRun: first }).find((e) => e.kind !== 'notice');
      if (!event) throw new CrewError(refusals.nothingToAck(id, record.run.status));
      if (event.ackedAt === undefined) {
        this.deps.store.apply({
          epoch: this.epoch,
          acks: [{ eventId: event.id, at: this.deps.clock.now() }],
        });
        this.notify({ kind: 'ack', eventId: event.id, runIds: event.runIds });
      }
      const acked = this.deps.store.outboxEvent(event.id)?.ackedAt ?? this.deps.clock.now();
      return { ok: true, event_id: event.id, acked_at: new Date(acked).toISOString() };
    });
  }

  /**
   * Writes the one SEL line of a refusal that an edge gave itself (a malformed body, an unknown route, a
   * failed bearer token): `refused_<code>` with the code, path and numbers. Refusals the gateway's own
   * methods answer are audited there; an edge passes only the ones it made.
   */
  audit(
    refusal: Refusal,
    where: { source: string; tool_name: string; event_type?: string; metadata?: Record<string, unknown> },
  ): void {
    this.auditor.audit(refusal, where);
  }

  /**
   * `spawn_wait`: this parent's next undelivered events, waiting up to `timeoutMs` for the first.
   * Returning them delivers them.
   */
  waitForEvents(parent: ParentKey, timeoutMs: number): Promise<DeliveredEvent[]> {
    return this.delivery.waitFor(parent, this.closed ? 0 : timeoutMs);
  }

  /** Pushes this parent's events to `sink` as they come (MCP session, hosted chat, CLI log). */
  attachSink(parent: ParentKey, sink: Sink): () => void {
    return this.delivery.attach(parent, sink);
  }

  /** Stops admitting: every later spawn is refused while what was admitted goes on (shutdown). */
  stopAdmitting(): void {
    this.closing = true;
  }

  /** Resolves once no run is live (queued ones included), or after `timeoutMs`. */
  async drain(timeoutMs: number): Promise<boolean> {
    const deadline = this.deps.clock.now() + timeoutMs;
    while (this.scheduler.counts().live > 0) {
      if (this.deps.clock.now() >= deadline) return false;
      await new Promise<void>((resolve) =>
        this.deps.clock.setTimer(resolve, Math.min(50, deadline - this.deps.clock.now())),
      );
    }
    return true;
  }

  /**
   * Stops admitting, cancels what executes and waits for each to end `cancelled` with its event
   * recorded, leaves queued runs queued in the store for the next start, and releases every timer and
   * waiter. What the gateway was handed (store, SEL, runners) stays open: its creator closes it.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closing = true;
    for (const id of this.supervisor.live()) {
      if (this.scheduler.liveRun(id)) this.step({ type: 'cancel', runId: id });
    }
    await this.supervisor.idle();
    this.closed = true;
    this.stopWorkspaceSweep?.();
    this.writer.close();
    if (this.wakeTimer !== undefined) this.deps.clock.clearTimer(this.wakeTimer);
    this.wakeTimer = undefined;
    await this.delivery.close();
  }

  // ── stepping the scheduler ───────────────────────────────────────────────────────────────────

  /**
   * One event: the scheduler decides, one transaction records it, then its effects are carried out.
   * An admission is refused while the store refuses writes, and undone when its own write fails; any
   * other step has happened once the scheduler took it, so its write waits in order until the store
   * accepts it (its events reach the relay only then).
   */
  private step(event: SchedulerEvent, extra: StepExtra = {}): SchedulerReply {
    const admission = event.type === 'spawn' || event.type === 'continue';
    if (admission) {
      if (!this.writer.canAdmit()) return this.storageRefusal(event);
      // A wake-up due now is its own step, so the admission launches only its own members (rollback).
      if ((this.scheduler.nextWakeAt() ?? Number.POSITIVE_INFINITY) <= this.deps.clock.now()) {
        this.step({ type: 'tick' });
      }
    }
    const now = this.deps.clock.now();
    const { commands, reply, rollback } = this.scheduler.step(event, now);
    // Assigned, not spread: a step is the hot path, and each spread of an optional part is an object.
    const input: PlanInput = { epoch: this.epoch, now, eventId: this.nextEventId };
    if (extra.newSpecs) input.newSpecs = extra.newSpecs;
    if (extra.claim) input.claim = extra.claim;
    if (extra.runInfo) input.runInfo = extra.runInfo;
    const plan = planTransaction(commands, input);
    if (rollback) {
      if (!this.writer.tryWrite(plan.tx)) {
        rollback();
        return this.storageRefusal(event);
      }
      this.committed(plan);
    } else if (!isEmptyTx(plan.tx)) {
      this.writer.write(plan.tx, this.committed, plan);
    }
    this.trackSpecs(commands, extra.newSpecs);
    for (const write of plan.sel) this.auditor.write(write.outcome, write.metadata);
    for (const effect of plan.effects) this.carryOut(effect);
    this.rearm();
    return reply;
  }

  /** What follows a step's commit: its events to the relay, its changed runs to the watchers. */
  private readonly committed = (plan: Plan): void => {
    for (const announced of plan.announced) this.delivery.announced(announced);
    // Only a watcher reads the changed ids: no set is built per step when nobody watches.
    if (this.watchers.size > 0) this.notify({ kind: 'runs', runIds: changedRuns(plan.tx) });
  };

  private storageRefusal(event: SchedulerEvent): SchedulerReply {
    const refusal = refusals.storageUnavailable(this.writer.unavailable ?? 'the last write failed');
    this.auditor.write('refused_storage_unavailable', {
      ...('parent' in event ? { parent: event.parent } : {}),
      reason: this.writer.unavailable,
    });
    return { kind: 'refused', ok: false, refusal };
  }

  /** Tells each watcher (the dashboard) what changed; a watcher's failure is its own. */
  private notify(change: GatewayChange): void {
    if (change.kind === 'runs' && change.runIds.length === 0) return;
    for (const watcher of this.watchers) {
      try {
        watcher(change);
      } catch (error) {
        this.log(`crew: a gateway watcher failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }

  private trackSpecs(commands: readonly SchedulerCommand[], newSpecs: NewSpecs | undefined): void {
    for (const command of commands) {
      if (command.type !== 'persist') continue;
      const spec = newSpecs?.get(command.run.id);
      if (spec) this.specs.set(command.run.id, spec);
      if (isTerminal(command.run.status)) this.specs.delete(command.run.id);
    }
  }

  private carryOut(effect: Effect): void {
    switch (effect.type) {
      case 'launch':
        this.launch(effect.runId);
        return;
      case 'stop':
        this.supervisor.stop(effect.runId, effect.reason);
        return;
      case 'steer':
        this.supervisor.steer(effect.runId, effect.message, effect.mode);
        return;
      case 'release_session': {
        // A conversation admitted here in cluster mode keeps its session on the gateway that ran it.
        const host = this.sessionHostOf(effect.conversationId);
        if (host !== undefined) {
          this.deps.cluster?.release(host, effect.conversationId);
          return;
        }
        // A conversation is named by its first run, whose directory chose its agent.
        const cwd = this.deps.store.run(effect.conversationId)?.spec.cwd;
        const agent = this.agentsAt(cwd).get(effect.agent);
        if (agent) this.supervisor.releaseSession(agent, effect.conversationId);
        return;
      }
      default:
        assertNever(effect);
    }
  }

  private launch(runId: RunId): void {
    const run = this.scheduler.liveRun(runId);
    const spec = this.specs.get(runId) ?? this.deps.store.run(runId)?.spec;
    const agent = spec ? this.agentsAt(spec.cwd).get(spec.agent) : undefined;
    if (!run || !spec || !agent) {
      this.supervisor.failLaunch(runId, `agent ${spec?.agent ?? '?'} is no longer configured`);
      return;
    }
    // Admitted, then its directory swapped for a link that leads out: it ends failed, once, with its event.
    const start = cwdAtStart(spec, this.config['agent.subagent_cwd_allowed_roots']);
    if ('refused' in start) {
      this.supervisor.failLaunch(runId, start.refused);
      return;
    }
    const cluster = this.deps.cluster;
    if (cluster && this.isClusterProxy(run)) {
      const job: ClusterJob = {
        runId,
        kind: run.batchId === undefined ? 'single' : 'wave',
        origin: cluster.gatewayName,
        spec,
        ...(run.maxTurns !== undefined ? { maxTurns: run.maxTurns } : {}),
        ...(run.maxTokens !== undefined ? { maxTokens: run.maxTokens } : {}),
      };
      if (run.conversationId !== undefined) {
        // A continuation runs where the conversation's session is kept.
        const host = this.sessionHostOf(run.conversationId);
        if (host === undefined) {
          this.supervisor.failLaunch(
            runId,
            `conversation ${run.conversationId} has no gateway keeping its session`,
          );
          return;
        }
        job.continues = run.conversationId;
        job.host = host;
      }
      this.supervisor.launchWith(agent.name, runId, (onEvent) => cluster.dispatch(job, onEvent));
      return;
    }
    this.runRequestDeps ??= {
      sessionSharing: this.config['agent.session_sharing'],
      defaultCwd: this.deps.defaultCwd,
      ...(this.deps.buildPrompt ? { buildPrompt: this.deps.buildPrompt } : {}),
      ...(this.deps.mcpServersFor ? { mcpServersFor: this.deps.mcpServersFor } : {}),
      ...(this.deps.runtimeKeyFor ? { runtimeKeyFor: this.deps.runtimeKeyFor } : {}),
      keptSessionOf: (conversationId) => this.scheduler.conversation(conversationId)?.session,
    };
    const request = buildRunRequest(run, spec, agent, this.runRequestDeps);
    if (start.cwd !== undefined) request.cwd = start.cwd;
    const routed = this.providers.routed(agent, runId, request);
    if (routed !== agent) request.agent = routed;
    this.supervisor.launch(agent, request);
  }

  /**
   * Cluster mode: a run admitted here that the cluster executes (its launch adds a job); this gateway only
   * holds it as a proxy. A copy it executes for the cluster, or a nested run, is not one.
   */
  private isClusterProxy(run: Run): boolean {
    return this.deps.cluster !== undefined && run.depth === 1 && !isClusterCopyParent(run.parent);
  }

  /**
   * One timer for the scheduler's next wake-up (stagger or deadline). A timer already set for that time
   * or earlier stays: firing early is a tick with nothing due, which arms the next one. As runs end in
   * order the nearest deadline moves later at nearly every step, and a timer moved each time cost a
   * clear and a set (a Node timer list per distinct delay) per step; now it moves once per firing.
   */
  private rearm(): void {
    if (this.closed) return;
    const at = this.scheduler.nextWakeAt();
    if (at !== undefined && this.wakeTimer !== undefined && this.wakeAt !== undefined && this.wakeAt <= at) {
      return;
    }
    if (this.wakeTimer !== undefined) this.deps.clock.clearTimer(this.wakeTimer);
    this.wakeTimer = undefined;
    this.wakeAt = at;
    if (at === undefined) return;
    this.wakeTimer = this.deps.clock.setTimer(
      () => {
        this.wakeTimer = undefined;
        this.wakeAt = undefined;
        this.step({ type: 'tick' });
      },
      Math.max(0, at - this.deps.clock.now()),
    );
  }

  /** The reaper's release: the conversation ends and its parent gets a notice event. */
  private expireConversation(conversationId: string, reason: 'expired' | 'evicted'): void {
    const conversation = this.scheduler.conversation(conversationId);
    const reply = this.step({ type: 'release', conversationId, reason });
    if (!reply.ok || !conversation) return;
    const origin = conversation.parent.startsWith(CLUSTER_PARENT_PREFIX)
      ? conversation.parent.slice(CLUSTER_PARENT_PREFIX.length)
      : undefined;
    // A session kept here for another gateway's conversation: its origin releases it and tells the parent.
    if (origin !== undefined && this.deps.cluster)
      this.deps.cluster.released(origin, originIdOf(conversationId), reason);
    else this.delivery.notice(conversation.parent, conversation.latestRunId, this.ids.event());
  }

  // ── helpers ──────────────────────────────────────────────────────────────────────────────────

  /** What the store holds for a command id the scheduler no longer knows (its runs ended, or a restart). */
  private knownCommand(parent: ParentKey, commandId: string): KnownCommand | undefined {
    if (this.scheduler.knowsCommand(parent, commandId)) return undefined;
    const records = this.deps.store.runs({ commandId }).filter((r) => r.run.parent === parent);
    if (records.length === 0) return undefined;
    const runs = records.map((r) => r.run).sort((a, b) => a.seq - b.seq);
    return {
      runIds: runs.map((r) => r.id),
      ...(runs[0]?.batchId !== undefined ? { batchId: runs[0].batchId } : {}),
    };
  }

  private knownOf(parent: ParentKey, commandId: string): { known?: KnownCommand } {
    const known = this.knownCommand(parent, commandId);
    return known ? { known } : {};
  }

  /** A wave's digest is filed under its first member (the oldest record of the batch). */
  private firstMemberOf(batchId: string, fallback: RunId): RunId {
    const members = this.deps.store.runs({ batchId });
    return members.at(-1)?.run.id ?? fallback;
  }

  private maxTurnsOf(spec: RunSpec, agents = this.agentsAt(spec.cwd)): number {
    return resolveMaxTurns(spec.maxTurns, agents.get(spec.agent)?.max_turns, this.config);
  }

  private maxTokensOf(spec: RunSpec, agents = this.agentsAt(spec.cwd)): number {
    return resolveMaxTokens(spec.maxTokens, agents.get(spec.agent)?.max_tokens, this.config);
  }

  /** The agents a run working in `cwd` can use (the gateway's directory when it has none). */
  private agentsAt(cwd: string | undefined): ReadonlyMap<string, AgentDef> {
    return this.deps.agentsAt?.(cwd ?? this.deps.defaultCwd) ?? this.deps.agents;
  }

  private memoryReading(): MemoryReading | undefined {
    return this.deps.memoryGate?.();
  }

  private spawnAnswer(reply: SchedulerReply): SpawnResult {
    switch (reply.kind) {
      case 'refused':
        return { ok: false, refusal: reply.refusal };
      case 'done':
        return { ok: true, runs: [] };
      case 'admitted': {
        const runs = reply.runs.map((r) => {
          // A repeated command id answers with where its runs are now.
          const status = reply.existing
            ? (this.scheduler.liveRun(r.id)?.status ?? this.deps.store.run(r.id)?.run.status ?? r.status)
            : r.status;
          return { id: r.id, status, ...(r.position !== undefined ? { position: r.position } : {}) };
        });
        return { ok: true, ...(reply.batchId !== undefined ? { batch_id: reply.batchId } : {}), runs };
      }
      default:
        return assertNever(reply);
    }
  }

  private answer(reply: SchedulerReply): Answer {
    return reply.ok ? { ok: true } : { ok: false, refusal: reply.refusal };
  }
}

/** What a live view (the dashboard) hears of: see `Gateway.watch`. */
export type GatewayChange =
  | { kind: 'runs'; runIds: RunId[] }
  | { kind: 'refusal'; outcome: string; metadata: Record<string, unknown> }
  | { kind: 'ack'; eventId: string; runIds: RunId[] };

function changedRuns(tx: StoreTx): RunId[] {
  const ids = new Set<RunId>();
  for (const { run } of tx.newRuns ?? []) ids.add(run.id);
  for (const run of tx.runs ?? []) ids.add(run.id);
  return [...ids];
}

/** Who asked, for the SEL: the parent a scope speaks for, or the operator. */
/** Page options as another gateway gets them: who asks only orders greps here. */
function withoutClient({ client: _client, ...options }: PageOptions): PageOptions {
  return options;
}

function scopeName(scope: Scope): string {
  return scope.kind === 'operator' ? 'operator' : scope.parent;
}

/** Warnings (an agent that cannot honour a model or effort) ride on a successful answer. */
function withWarnings(answer: SpawnResult, warnings: readonly string[]): SpawnResult {
  return answer.ok && warnings.length > 0 ? { ...answer, warnings: [...warnings] } : answer;
}

/** What the store knows of a run that is no longer live, for the core's refusal. */
function endedOf(record: RunRecord): { ended?: RunRecord['run']['status'] } {
  return isTerminal(record.run.status) ? { ended: record.run.status } : {};
}
