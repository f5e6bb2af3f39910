import type { AgentDef } from '../core/agent-def.js';
import type { CrewConfig } from '../core/config-schema.js';
import { CrewError, type Refusal } from '../core/errors.js';
import * as refusals from '../core/refusals.js';
import type { Scheduler } from '../core/scheduler.js';
import type { MemorySample, SchedulerEvent, SchedulerReply } from '../core/scheduler-types.js';
import {
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
import type { RunRecord } from '../store/store.js';
import type { PageOptions, TranscriptPage } from '../transcripts/transcript-store.js';
import type { MergeResult } from '../workspace/merge.js';
import { mergeArgsSchema } from '../workspace/merge-args.js';
import { noWorkspaces } from '../workspace/workspace-refusals.js';
import { Admissions } from './admissions.js';
import {
  type AckResult,
  type Answer,
  answerOf,
  type GatewayCounts,
  type ListResult,
  refusalOf,
  type SpawnResult,
  type StatusOptions,
  type StatusResult,
} from './answers.js';
import { Auditor } from './audit.js';
import type { Delivery } from './delivery.js';
import type { GatewayDeps } from './gateway-deps.js';
import { deliveryFor, every, schedulerFor, supervisorFor } from './gateway-parts.js';
import { type StepExtra, Stepper } from './gateway-step.js';
import { createIds, type Ids } from './ids.js';
import { localPlacement, type Placement } from './placement.js';
import { type ProviderCall, type ProviderCapView, ProviderFeed } from './provider-feed.js';
import { RunReads, scopeName } from './run-reads.js';
import type { RunSupervisor } from './run-supervisor.js';
import type { RunView } from './run-view.js';
import type { DeliveredEvent, Sink } from './sink.js';
import { parseArgs, type SpawnArgs, spawnArgsSchema } from './spawn-args.js';
import { StoreWriter } from './store-writer.js';
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
  private readonly log: (line: string) => void;
  private readonly writer: StoreWriter;
  private readonly watchers = new Set<(change: GatewayChange) => void>();
  /** Where runs execute: here, unless the daemon composed another placement (cluster mode). */
  private readonly placement: Placement;
  private readonly stepper: Stepper;
  private readonly admissions: Admissions;
  private readonly reads: RunReads;
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
    const placement = deps.placement ?? localPlacement();
    this.placement = placement;
    this.scheduler = schedulerFor(config, deps.cap, placement);
    this.stepper = new Stepper({
      config,
      deps,
      scheduler: this.scheduler,
      writer: this.writer,
      auditor: this.auditor,
      delivery: () => this.delivery,
      supervisor: () => this.supervisor,
      providers: () => this.providers,
      placement,
      epoch: this.epoch,
      nextEventId: this.nextEventId,
      agentsAt: (cwd) => this.agentsAt(cwd),
      changed: (runIds) => this.notify({ kind: 'runs', runIds }),
      hasWatchers: () => this.watchers.size > 0,
    });
    this.providers = new ProviderFeed({
      scheduler: this.scheduler,
      clock: deps.clock,
      config,
      step: (event) => this.step(event),
      ...(deps.providerEnvFor ? { providerEnvFor: deps.providerEnvFor } : {}),
    });
    this.delivery = deliveryFor(config, deps, this.epoch, this.log, this.scheduler, {
      releaseConversation: (id, reason) => this.expireConversation(id, reason),
      onUndeliverable: (event) =>
        this.auditor.write('undeliverable', {
          event_id: event.id,
          parent: event.parent,
          runs: event.runIds.length,
        }),
    });
    this.supervisor = supervisorFor(deps, this.log, (event, facts) => {
      this.step(event, facts?.runInfo ? { runInfo: facts.runInfo } : {});
    });
    this.admissions = new Admissions({
      config,
      deps,
      scheduler: this.scheduler,
      ids: this.ids,
      providers: this.providers,
      visibility: this.visibility,
      placement,
      step: (event, extra) => this.step(event, extra),
      agentsAt: (cwd) => this.agentsAt(cwd),
      memoryReading: () => this.deps.memoryGate?.(),
      closing: () => this.closing,
    });
    this.reads = new RunReads({
      config,
      deps,
      scheduler: this.scheduler,
      providers: this.providers,
      placement,
      visibility: this.visibility,
    });
    placement.bind({
      record: (id) => this.deps.store.run(id),
      pageOf: (id, options) => this.pageOf(id, options),
      now: () => this.deps.clock.now(),
    });
  }

  /** Recovers what a previous process left: queued runs re-queued in order, executing ones `lost`. */
  start(): void {
    const state = this.deps.store.restartState();
    for (const record of state.queued) {
      const stored = this.deps.store.run(record.id);
      if (stored) this.stepper.specs.set(record.id, stored.spec);
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
    return every(this.deps.clock, intervalMs, fn);
  }

  /** The gateway's clock reading (front ends time their waits by it). */
  now(): number {
    return this.deps.clock.now();
  }

  /** The host cap (DESIGN §5). */
  get cap(): number {
    return this.deps.cap;
  }

  /** The scheduler's counts as the host sees them: see `RunReads.counts`. */
  counts(): GatewayCounts {
    return this.reads.counts();
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
    return this.auditor.audited('spawn_run', parent, () =>
      this.admissions.spawn(parent, parseArgs(spawnArgsSchema, rawArgs), parentCwd),
    );
  }

  /** `spawn_continue`: a new turn in a kept conversation (admitted like any run). */
  continue(parent: ParentKey, rawArgs: unknown, scope: Scope = { kind: 'parent', parent }): SpawnResult {
    return this.auditor.audited('spawn_continue', parent, () =>
      this.admissions.continue(parent, rawArgs, scope),
    );
  }

  /**
   * `spawn_run` as the front ends call it: a top-level spawn is admitted under the placement's bounds
   * (in cluster mode the cluster-wide queue bounds, answering once its jobs are in the cluster queue); a
   * nested spawn executes here under its ancestor's permit. The arguments are parsed once, first: the
   * placement counts members of a parsed spawn, never of raw input.
   */
  async admit(parent: ParentKey, rawArgs: unknown, parentCwd?: string): Promise<SpawnResult> {
    if (parentRunId(parent) !== undefined) return this.spawn(parent, rawArgs, parentCwd);
    let args: SpawnArgs | undefined;
    const parsed = this.auditor.audited('spawn_run', parent, () => {
      args = parseArgs(spawnArgsSchema, rawArgs);
      return { ok: true };
    });
    if (!parsed.ok || args === undefined) return parsed as SpawnResult;
    const valid = args;
    const size = valid.tasks
      ? { kind: 'wave' as const, members: valid.tasks.length }
      : { kind: 'single' as const, members: 1 };
    const answer = await this.placement.admit(size, () =>
      this.auditor.audited('spawn_run', parent, () => this.admissions.spawn(parent, valid, parentCwd)),
    );
    return this.placed(answer, parent, 'spawn_run');
  }

  /**
   * `spawn_continue` as the front ends call it: a top-level parent's continuation is admitted under the
   * placement's bounds like any top-level run (in cluster mode it runs on the gateway holding the
   * conversation's session: docs/decisions.md, kept conversations in cluster mode).
   */
  async admitContinue(parent: ParentKey, rawArgs: unknown, scope?: Scope): Promise<SpawnResult> {
    if (parentRunId(parent) !== undefined) return this.continue(parent, rawArgs, scope);
    const answer = await this.placement.admit({ kind: 'single', members: 1 }, () =>
      this.continue(parent, rawArgs, scope),
    );
    return this.placed(answer, parent, 'spawn_continue');
  }

  /** An admission's answer, or the placement's own refusal (audited here: nothing on its way wrote it). */
  private placed(answer: SpawnResult | { refusal: Refusal }, parent: ParentKey, tool: string): SpawnResult {
    if ('ok' in answer) return answer;
    this.audit(answer.refusal, { source: parent, tool_name: tool });
    return { ok: false, refusal: answer.refusal };
  }

  /**
   * Admits one top-level run whose spec and budgets an admission elsewhere already resolved (a job another
   * gateway placed here), under `parent`, with `id` as its own command id so the same request twice admits
   * once. With `continues`, it is the next turn of that kept conversation.
   */
  admitResolved(
    parent: ParentKey,
    id: RunId,
    spec: RunSpec,
    budget: { maxTurns?: number; maxTokens?: number },
    continues?: string,
  ): SchedulerReply {
    return this.admissions.admitResolved(parent, id, spec, budget, continues);
  }

  /**
   * Releases live conversation `conversationId` though no parent asked here: `requested` as its keeper
   * elsewhere asked; `expired` / `evicted` as the reaper does (only while idle; its parent gets a notice).
   */
  endConversation(conversationId: string, reason: 'requested' | 'expired' | 'evicted'): void {
    const conversation = this.closed ? undefined : this.scheduler.conversation(conversationId);
    if (!conversation) return;
    if (reason === 'requested') this.step({ type: 'release', conversationId, reason });
    else if (conversation.state === 'idle') this.expireConversation(conversationId, reason);
  }

  /** The stored record of a run (do not change it); undefined for an unknown run. */
  recordOf(id: RunId): RunRecord | undefined {
    return this.deps.store.run(id);
  }

  /** A live run as the scheduler holds it (no store read; do not change it); undefined once it has ended. */
  liveRun(id: RunId): Readonly<Run> | undefined {
    return this.scheduler.liveRun(id);
  }

  /** A run's status now (live or recorded); undefined for an unknown run. */
  statusOf(id: RunId): RunStatus | undefined {
    return this.scheduler.liveRun(id)?.status ?? this.deps.store.run(id)?.run.status;
  }

  /**
   * A page of run `id`'s transcript as this gateway holds it (`pruned` once the reaper took it,
   * `not_found` for a run it does not know): what this gateway answers whoever asks for the transcript of
   * a run it executes (cluster mode: the origin of a copy it runs).
   */
  pageOf(id: RunId, options: PageOptions): Promise<TranscriptPage> {
    return this.reads.pageOf(id, options);
  }

  cancel(id: RunId, scope: Scope): Answer {
    return this.auditor.audited('spawn_cancel', scopeName(scope), () => {
      const record = this.visibility.assertVisible(scope, id);
      return answerOf(this.step({ type: 'cancel', runId: id, ...endedOf(record) }));
    });
  }

  steer(id: RunId, message: string, mode: SteerMode, scope: Scope): Answer {
    return this.auditor.audited('spawn_steer', scopeName(scope), () => {
      if (typeof message !== 'string' || message.trim() === '') throw new CrewError(refusals.emptySteer());
      const record = this.visibility.assertVisible(scope, id);
      return answerOf(this.step({ type: 'steer', runId: id, message, mode, ...endedOf(record) }));
    });
  }

  release(conversationId: string, scope: Scope): Answer {
    return this.auditor.audited('spawn_release', scopeName(scope), () => {
      const live = this.scheduler.conversation(conversationId);
      const stored = live ? undefined : this.deps.store.conversation(conversationId);
      const conversation = live ?? stored;
      if (conversation) this.visibility.assertVisible(scope, conversation.latestRunId);
      return answerOf(
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
    return this.reads.list(scope, limit);
  }

  /** A model request of a run was answered (the provider gateway): see `ProviderFeed.observe`. */
  observeProviderCall(call: ProviderCall): void {
    if (this.closed) return;
    this.providers.observe(call);
    if (isRateLimited(call.status)) {
      // The placement hears it by the run's top-level ancestor (cluster mode: the shared cap), also when
      // the answer is reported just after the run ended.
      const runOf = (id: RunId) => this.scheduler.liveRun(id) ?? this.deps.store.run(id)?.run;
      const rootId = runOf(call.runId)?.rootId;
      const root = rootId === undefined ? undefined : runOf(rootId);
      if (root) this.placement.providerLimited(root, call.retryAfterMs);
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
    return this.reads.viewOf(record);
  }

  /** The current view of each of these runs the scope can see (others are left out), in the given order. */
  views(ids: readonly RunId[], scope: Scope): RunView[] {
    return this.reads.views(ids, scope);
  }

  async status(id: RunId, scope: Scope, options: StatusOptions = {}): Promise<StatusResult> {
    return this.auditor.auditedAsync('spawn_status', scopeName(scope), () =>
      this.reads.status(id, scope, options),
    );
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
    // Before the cancels: each frees a permit, which must not launch a queued run now.
    this.step({ type: 'stop_starts' });
    for (const id of this.supervisor.live()) {
      if (this.scheduler.liveRun(id)) this.step({ type: 'cancel', runId: id });
    }
    await this.supervisor.idle();
    this.closed = true;
    this.stopWorkspaceSweep?.();
    this.writer.close();
    this.stepper.close();
    await this.delivery.close();
  }

  /** One event through the scheduler, its commit and its effects (`Stepper.step`). */
  private step(event: SchedulerEvent, extra: StepExtra = {}): SchedulerReply {
    return this.stepper.step(event, extra);
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

  /** The reaper's release: the conversation ends and its parent gets a notice event. */
  private expireConversation(conversationId: string, reason: 'expired' | 'evicted'): void {
    const conversation = this.scheduler.conversation(conversationId);
    const reply = this.step({ type: 'release', conversationId, reason });
    if (!reply.ok || !conversation) return;
    // A session kept here for a conversation admitted elsewhere: the placement tells its origin.
    if (!this.placement.sessionReleased(conversation, reason))
      this.delivery.notice(conversation.parent, conversation.latestRunId, this.ids.event());
  }

  // ── helpers ──────────────────────────────────────────────────────────────────────────────────

  /** A wave's digest is filed under its first member (the oldest record of the batch). */
  private firstMemberOf(batchId: string, fallback: RunId): RunId {
    const members = this.deps.store.runs({ batchId });
    return members.at(-1)?.run.id ?? fallback;
  }

  /** The agents a run working in `cwd` can use (the gateway's directory when it has none). */
  private agentsAt(cwd: string | undefined): ReadonlyMap<string, AgentDef> {
    return this.deps.agentsAt?.(cwd ?? this.deps.defaultCwd) ?? this.deps.agents;
  }
}

/** What a live view (the dashboard) hears of: see `Gateway.watch`. */
export type GatewayChange =
  | { kind: 'runs'; runIds: RunId[] }
  | { kind: 'refusal'; outcome: string; metadata: Record<string, unknown> }
  | { kind: 'ack'; eventId: string; runIds: RunId[] };

/** What the store knows of a run that is no longer live, for the core's refusal. */
function endedOf(record: RunRecord): { ended?: RunRecord['run']['status'] } {
  return isTerminal(record.run.status) ? { ended: record.run.status } : {};
}
