import type { AgentDef } from '../core/agent-def.js';
import type { Clock, TimerHandle } from '../core/clock.js';
import type { CrewConfig } from '../core/config-schema.js';
import { CrewError, isCrewError, type Refusal, refuse } from '../core/errors.js';
import { Scheduler } from '../core/scheduler.js';
import type {
  AdmittedRun,
  MemoryReading,
  SchedulerCommand,
  SchedulerEvent,
  SchedulerReply,
} from '../core/scheduler-types.js';
import {
  isTerminal,
  type ParentKey,
  parentRunId,
  type RunId,
  type RunSpec,
  type SteerMode,
} from '../core/types.js';
import type { McpServerRef, RunHandle, Runner, RunnerEvent } from '../runners/runner.js';
import type { SelSink } from '../sel/sel-sink.js';
import type { OutboxEvent, RunRecord, Store, StoreTx } from '../store/store.js';
import type { TranscriptStore, TranscriptWriter } from '../transcripts/transcript-store.js';
import { createIds, type Ids } from './ids.js';
import { Reaper } from './reaper.js';
import { type DeliveredEvent, Relay, type Sink } from './relay.js';
import { renderEvent } from './render-event.js';
import { type RunView, toRunView } from './run-view.js';
import { continueArgsSchema, parseArgs, spawnArgsSchema } from './spawn-args.js';
import { validateSpawn } from './validate.js';

/** Who is asking: the operator (CLI, dashboard) sees everything; a parent sees its own subtree. */
export type Scope = { kind: 'operator' } | { kind: 'parent'; parent: ParentKey };

export interface GatewayDeps {
  clock: Clock;
  store: Store;
  transcripts: TranscriptStore;
  sel: SelSink;
  agents: ReadonlyMap<string, AgentDef>;
  /** The runner for an agent (by its `runner` field, or one fake for everything in tests). */
  runnerFor: (agent: AgentDef) => Runner;
  /** The concurrent-run cap, computed once at start (DESIGN §5). */
  cap: number;
  /** The per-spawn memory gate's live reading; absent = never critical. */
  memoryGate?: () => MemoryReading;
  /** The full prompt of a run: context groups and the agent's system prompt before the task. */
  buildPrompt?: (spec: RunSpec, agent: AgentDef) => string;
  /** Crew's MCP endpoint for a run (with a run-scoped token), so its own spawns nest under it. */
  mcpServersFor?: (runId: RunId) => McpServerRef[];
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
}

export interface RunObserver {
  started?(
    runId: RunId,
    agent: string,
    pid: number | undefined,
    startTime: number | undefined,
    shared: boolean,
  ): void;
  ended?(runId: RunId, agent: string): { peakMemGb?: number } | undefined;
}

export type SpawnResult =
  | { ok: true; batch_id?: string; runs: { id: RunId; status: string; position?: number }[] }
  | { ok: false; refusal: Refusal };
export type Answer = { ok: true } | { ok: false; refusal: Refusal };
export interface ListResult {
  ok: true;
  runs: RunView[];
  cap: number;
  running: number;
  queued: number;
}
export type StatusResult =
  | { ok: true; run: RunView; text?: string; from_line?: number; to_line?: number; total_lines?: number }
  | { ok: false; refusal: Refusal };

export interface StatusOptions {
  offset?: number;
  limit?: number;
  grep?: string;
}

interface LiveExecution {
  handle?: RunHandle;
  transcript: TranscriptWriter;
  spec: RunSpec;
  agent: AgentDef;
  toolCalls: number;
  maxTurns: number;
  turnLimited: boolean;
  ended: boolean;
}

/**
 * The composition root's product: admission (the pure scheduler) wired to a store, runners,
 * transcripts, the SEL and delivery. Every public method answers with a value; refusals are values
 * (`{ok: false, refusal}`), never thrown.
 */
export class Gateway {
  readonly scheduler: Scheduler;
  private readonly epoch: number;
  private readonly ids: Ids;
  private readonly relay: Relay;
  private readonly reaper: Reaper;
  private readonly specs = new Map<RunId, RunSpec>();
  private readonly agentNames: ReadonlySet<string>;
  private readonly executions = new Map<RunId, LiveExecution>();
  private wakeTimer: TimerHandle | undefined;
  private wakeAt: number | undefined;
  private closing = false;
  private closed = false;
  /** Runner ends wait for their transcript to flush; this chains them so records keep their order. */
  private endings: Promise<void> = Promise.resolve();

  constructor(
    readonly config: CrewConfig,
    private readonly deps: GatewayDeps,
  ) {
    this.ids = deps.ids ?? createIds();
    this.agentNames = new Set(deps.agents.keys());
    this.epoch = deps.store.nextEpoch();
    this.scheduler = new Scheduler({
      cap: deps.cap,
      staggerMs: config['agent.subagent_spawn_stagger_secs'] * 1000,
      maxQueued: config['agent.subagent_max_queued'],
      maxQueuedWaveMembers: config['agent.subagent_max_queued_wave_members'],
      maxDepth: config['agent.subagent_max_depth'],
      maxChildren: config['agent.subagent_max_children'],
      timeoutMs: config['agent.subagent_timeout_secs'] * 1000,
    });
    this.relay = new Relay({
      clock: deps.clock,
      store: deps.store,
      epoch: this.epoch,
      render: (event) => this.render(event),
      deliveryTimeoutMs: config['agent.subagent_delivery_timeout_secs'] * 1000,
      attemptTimeoutMs: injectionTimeoutMs(config),
      onUndeliverable: (event) =>
        this.selWrite('undeliverable', {
          event_id: event.id,
          parent: event.parent,
          runs: event.runIds.length,
        }),
      onSettled: (runIds, at) => this.reaper.settled(runIds, at),
    });
    this.reaper = new Reaper({
      clock: deps.clock,
      store: deps.store,
      transcripts: deps.transcripts,
      epoch: this.epoch,
      resultTtlMs: config['agent.subagent_result_ttl_secs'] * 1000,
      keepTtlMs: config['agent.keep_ttl_secs'] * 1000,
      maxKept: config['agent.max_kept_conversations'],
      idleConversations: () => this.scheduler.idleConversations(),
      release: (id, reason) => this.expireConversation(id, reason),
      isKept: (runId) => {
        const run = this.deps.store.run(runId)?.run;
        return run !== undefined && (run.keep || run.conversationId !== undefined);
      },
      ...(deps.reaperIntervalMs !== undefined ? { intervalMs: deps.reaperIntervalMs } : {}),
    });
  }

  /** Recovers what a previous process left: queued runs re-queued in order, executing ones `lost`. */
  start(): void {
    const state = this.deps.store.restartState();
    for (const record of state.queued) {
      const stored = this.deps.store.run(record.id);
      if (stored) this.specs.set(record.id, stored.spec);
    }
    const claim = state.executing.map((r) => r.run.id);
    this.step(
      {
        type: 'restore',
        queued: state.queued,
        executing: state.executing.map((r) => r.run),
        waves: state.waves,
        nextSeq: state.nextSeq,
        conversations: state.conversations,
      },
      { claim },
    );
    this.relay.start();
    this.reaper.start();
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

  get cap(): number {
    return this.scheduler.limits.cap;
  }

  // ── the API ──────────────────────────────────────────────────────────────────────────────────

  /** `spawn_run`: one task, or a wave with `tasks`. Returns at once; results come as events. */
  spawn(parent: ParentKey, rawArgs: unknown, parentCwd?: string): SpawnResult {
    try {
      if (this.closing) throw shuttingDown();
      const args = parseArgs(spawnArgsSchema, rawArgs);
      const validated = this.validate(() =>
        validateSpawn(args, this.config, this.agentNames, parentCwd ?? this.deps.defaultCwd),
      );
      const batchId = validated.wave ? this.ids.batch() : undefined;
      const newSpecs = new Map<RunId, RunSpec>();
      const members = validated.specs.map((spec) => {
        const id = this.ids.run();
        newSpecs.set(id, spec);
        return { id, agent: spec.agent, keep: spec.keep === true };
      });
      const reply = this.step(
        {
          type: 'spawn',
          parent,
          members,
          ...(batchId !== undefined ? { batchId } : {}),
          ...(validated.commandId !== undefined ? { commandId: validated.commandId } : {}),
          ...this.memoryReading(),
        },
        { newSpecs },
      );
      return this.spawnAnswer(reply);
    } catch (error) {
      return refusalOf(error);
    }
  }

  /** `spawn_continue`: a new turn in a kept conversation (admitted like any run). */
  continue(parent: ParentKey, rawArgs: unknown, scope: Scope = { kind: 'parent', parent }): SpawnResult {
    try {
      if (this.closing) throw shuttingDown();
      const args = parseArgs(continueArgsSchema, rawArgs);
      const conversation = this.scheduler.conversation(args.conversation);
      if (conversation) this.assertVisible(scope, conversation.latestRunId);
      const base = conversation ? this.deps.store.run(conversation.latestRunId)?.spec : undefined;
      const agent = args.agent ?? conversation?.agent ?? this.config['agent.default_agent'];
      const validated = this.validate(() =>
        validateSpawn(
          {
            task: args.task,
            agent,
            ...(args.max_turns !== undefined ? { max_turns: args.max_turns } : {}),
            ...(args.model !== undefined ? { model: args.model } : {}),
          },
          this.config,
          this.agentNames,
          base?.cwd ?? this.deps.defaultCwd,
        ),
      );
      const spec = { ...validated.specs[0], keep: true } as RunSpec;
      const id = this.ids.run();
      const reply = this.step(
        {
          type: 'continue',
          parent,
          conversationId: args.conversation,
          id,
          ...(args.command_id !== undefined ? { commandId: args.command_id } : {}),
          ...this.memoryReading(),
        },
        { newSpecs: new Map([[id, spec]]) },
      );
      return this.spawnAnswer(reply);
    } catch (error) {
      return refusalOf(error);
    }
  }

  cancel(id: RunId, scope: Scope): Answer {
    try {
      this.assertVisible(scope, id);
      return this.answer(this.step({ type: 'cancel', runId: id }), id);
    } catch (error) {
      return refusalOf(error);
    }
  }

  steer(id: RunId, message: string, mode: SteerMode, scope: Scope): Answer {
    try {
      if (typeof message !== 'string' || message.trim() === '') {
        throw new CrewError(
          refuse('empty_task', 'the steering message is empty; say what the run should change', {
            path: 'message',
          }),
        );
      }
      this.assertVisible(scope, id);
      return this.answer(this.step({ type: 'steer', runId: id, message, mode }), id);
    } catch (error) {
      return refusalOf(error);
    }
  }

  release(conversationId: string, scope: Scope): Answer {
    try {
      const conversation = this.scheduler.conversation(conversationId);
      if (conversation) this.assertVisible(scope, conversation.latestRunId);
      return this.answer(this.step({ type: 'release', conversationId, reason: 'requested' }));
    } catch (error) {
      return refusalOf(error);
    }
  }

  list(scope: Scope, limit = 500): ListResult {
    const records =
      scope.kind === 'operator' ? this.deps.store.runs({ limit }) : this.visibleRecords(scope.parent, limit);
    const counts = this.scheduler.counts();
    return {
      ok: true,
      runs: records.map((r) => toRunView(r)),
      cap: this.cap,
      running: counts.running + counts.starting,
      queued: counts.queued,
    };
  }

  async status(id: RunId, scope: Scope, options: StatusOptions = {}): Promise<StatusResult> {
    try {
      const record = this.assertVisible(scope, id);
      if (record.prunedAt !== undefined) {
        throw new CrewError(
          refuse(
            'pruned',
            `run ${id}'s transcript was pruned after agent.subagent_result_ttl_secs; its status is ${record.run.status}`,
          ),
        );
      }
      const page = await this.deps.transcripts.page(id, {
        ...options,
        maxChars: this.config['agent.status_max_chars'],
      });
      return {
        ok: true,
        run: toRunView(record),
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
   * `spawn_wait`: this parent's next undelivered events, waiting up to `timeoutMs` for the first.
   * Returning them delivers them.
   */
  waitForEvents(parent: ParentKey, timeoutMs: number): Promise<DeliveredEvent[]> {
    return this.relay.waitFor(parent, this.closed ? 0 : timeoutMs);
  }

  /** Pushes this parent's events to `sink` as they come (MCP session, hosted chat, CLI log). */
  attachSink(parent: ParentKey, sink: Sink): () => void {
    return this.relay.attach(parent, sink);
  }

  /** The reaper's release: the conversation ends and its parent gets a notice event. */
  private expireConversation(conversationId: string, reason: 'expired' | 'evicted'): void {
    const conversation = this.scheduler.conversation(conversationId);
    const reply = this.step({ type: 'release', conversationId, reason });
    if (!reply.ok || !conversation) return;
    const notice: OutboxEvent = {
      id: this.ids.event(),
      parent: conversation.parent,
      kind: 'notice',
      runIds: [conversation.latestRunId],
      createdAt: this.deps.clock.now(),
      state: 'pending',
      attempts: 0,
    };
    this.deps.store.apply({ epoch: this.epoch, outbox: [notice] });
    this.relay.announced(notice);
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
   * Stops admitting, cancels what executes (each ends `cancelled` with its event recorded), leaves
   * queued runs queued in the store for the next start, and releases every timer and waiter.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closing = true;
    for (const id of [...this.executions.keys()]) {
      if (this.scheduler.liveRun(id)) this.step({ type: 'cancel', runId: id });
    }
    const runners = new Set([...this.deps.agents.values()].map((a) => this.deps.runnerFor(a)));
    await Promise.all([...runners].map((r) => r.close()));
    await this.endings;
    this.closed = true;
    if (this.wakeTimer !== undefined) this.deps.clock.clearTimer(this.wakeTimer);
    this.wakeTimer = undefined;
    await this.relay.close();
    this.reaper.close();
    await this.deps.sel.close();
    this.deps.store.close();
  }

  // ── stepping the scheduler ───────────────────────────────────────────────────────────────────

  private step(
    event: SchedulerEvent,
    extra: { newSpecs?: Map<RunId, RunSpec>; claim?: RunId[] } = {},
  ): SchedulerReply {
    const now = this.deps.clock.now();
    const { commands, reply } = this.scheduler.step(event, now);
    this.execute(commands, now, extra);
    this.rearm();
    return reply;
  }

  private execute(
    commands: SchedulerCommand[],
    now: number,
    extra: { newSpecs?: Map<RunId, RunSpec>; claim?: RunId[] },
  ): void {
    const tx: StoreTx = { epoch: this.epoch };
    const newRuns: NonNullable<StoreTx['newRuns']> = [];
    const runs: NonNullable<StoreTx['runs']> = [];
    const outbox: OutboxEvent[] = [];
    const effects: SchedulerCommand[] = [];
    const pendingNew = extra.newSpecs;
    for (const command of commands) {
      switch (command.type) {
        case 'persist': {
          const spec = pendingNew?.get(command.run.id);
          if (spec) {
            pendingNew?.delete(command.run.id);
            this.specs.set(command.run.id, spec);
            newRuns.push({ run: command.run, spec });
          } else {
            runs.push(command.run);
          }
          if (isTerminal(command.run.status)) this.specs.delete(command.run.id);
          break;
        }
        case 'persist_conversation':
          tx.conversations ??= [];
          tx.conversations.push(command.conversation);
          break;
        case 'announce': {
          const a = command.announcement;
          outbox.push({
            id: this.ids.event(),
            parent: a.parent,
            kind: a.kind,
            runIds: a.kind === 'digest' ? a.runIds : [a.runId],
            ...(a.kind === 'digest' ? { batchId: a.batchId } : {}),
            createdAt: now,
            state: 'pending',
            attempts: 0,
          });
          break;
        }
        case 'sel':
          this.selWrite(command.outcome, command.metadata);
          break;
        case 'launch':
        case 'stop':
        case 'steer':
        case 'release_session':
          effects.push(command);
          break;
      }
    }
    if (newRuns.length > 0) tx.newRuns = newRuns;
    if (runs.length > 0) tx.runs = runs;
    if (outbox.length > 0) tx.outbox = outbox;
    if (extra.claim && extra.claim.length > 0) tx.claim = extra.claim;
    this.deps.store.apply(tx);
    for (const event of outbox) this.relay.announced(event);
    for (const effect of effects) this.carryOut(effect);
  }

  private carryOut(command: SchedulerCommand): void {
    switch (command.type) {
      case 'launch':
        this.launch(command.runId);
        return;
      case 'stop': {
        const execution = this.executions.get(command.runId);
        execution?.handle?.stop(command.reason);
        return;
      }
      case 'steer': {
        const execution = this.executions.get(command.runId);
        execution?.handle?.steer(command.message, command.mode).catch((error: unknown) => {
          execution.transcript.write(`\n[steer failed: ${errorText(error)}]\n`);
        });
        return;
      }
      case 'release_session': {
        const agentName = this.scheduler.conversation(command.conversationId)?.agent;
        const agent = agentName === undefined ? undefined : this.deps.agents.get(agentName);
        if (agent)
          this.deps
            .runnerFor(agent)
            .release(command.conversationId)
            .catch(() => undefined);
        return;
      }
      default:
        return;
    }
  }

  private launch(runId: RunId): void {
    const run = this.scheduler.liveRun(runId);
    const spec = this.specs.get(runId) ?? this.deps.store.run(runId)?.spec;
    const agent = spec ? this.deps.agents.get(spec.agent) : undefined;
    const transcript = this.deps.transcripts.open(runId);
    if (!run || !spec || !agent) {
      const execution: LiveExecution = {
        transcript,
        spec: spec ?? { task: '', agent: '' },
        agent: agent ?? { name: '', runner: 'acp', command: [], shared: false, skills: [] },
        toolCalls: 0,
        maxTurns: 0,
        turnLimited: false,
        ended: false,
      };
      this.executions.set(runId, execution);
      this.onRunnerEvent(runId, execution, {
        type: 'ended',
        status: 'failed',
        error: `agent ${spec?.agent ?? '?'} is no longer configured`,
      });
      return;
    }
    const maxTurns = spec.maxTurns ?? agent.max_turns ?? this.config['agent.subagent_max_turns'];
    const execution: LiveExecution = {
      transcript,
      spec,
      agent,
      toolCalls: 0,
      maxTurns,
      turnLimited: false,
      ended: false,
    };
    this.executions.set(runId, execution);
    const model = spec.model ?? agent.model;
    const eligible =
      this.config['agent.session_sharing'] &&
      spec.model === undefined &&
      spec.reasoningEffort === undefined &&
      spec.keep !== true;
    const runtimeKey = eligible ? this.deps.runtimeKeyFor?.(run.parent, agent) : undefined;
    const shared = eligible && agent.shared;
    try {
      execution.handle = this.deps.runnerFor(agent).start(
        {
          runId,
          agent,
          prompt: this.deps.buildPrompt ? this.deps.buildPrompt(spec, agent) : spec.task,
          cwd: spec.cwd ?? this.deps.defaultCwd,
          mcpServers: this.deps.mcpServersFor?.(runId) ?? [],
          keep: spec.keep === true,
          shared,
          ...(runtimeKey !== undefined ? { runtimeKey } : {}),
          ...(model !== undefined ? { model } : {}),
          ...(spec.reasoningEffort !== undefined ? { reasoningEffort: spec.reasoningEffort } : {}),
          ...(run.conversationId !== undefined ? { continueFrom: run.conversationId } : {}),
        },
        (event) => this.onRunnerEvent(runId, execution, event),
      );
    } catch (error) {
      this.onRunnerEvent(runId, execution, {
        type: 'ended',
        status: 'failed',
        error: `could not start: ${errorText(error)}`,
      });
    }
  }

  private onRunnerEvent(runId: RunId, execution: LiveExecution, event: RunnerEvent): void {
    if (execution.ended) return;
    switch (event.type) {
      case 'started':
        this.step({ type: 'started', runId });
        if (event.pid !== undefined) {
          this.deps.store.apply({
            epoch: this.epoch,
            runInfo: [
              {
                id: runId,
                pid: event.pid,
                ...(event.startTime !== undefined ? { startTime: event.startTime } : {}),
              },
            ],
          });
        }
        this.deps.observer?.started?.(runId, execution.agent.name, event.pid, event.startTime, event.shared);
        return;
      case 'output':
        execution.transcript.write(event.text);
        return;
      case 'tool_call':
        execution.toolCalls++;
        // The budget counts tool calls; at the budget the turn is cancelled and the run ends completed.
        if (execution.maxTurns > 0 && execution.toolCalls >= execution.maxTurns && !execution.turnLimited) {
          execution.turnLimited = true;
          execution.handle?.stop('turn_limit');
        }
        return;
      case 'usage':
        return;
      case 'ended': {
        execution.ended = true;
        this.executions.delete(runId);
        const outcome =
          execution.turnLimited && event.status !== 'failed'
            ? { status: 'completed' as const, stop: 'turn_limit' as const }
            : {
                status: event.status,
                ...(event.stop ? { stop: event.stop } : {}),
                ...(event.error ? { error: event.error } : {}),
              };
        this.endings = this.endings.then(async () => {
          let totals: { chars: number } | undefined;
          try {
            totals = await execution.transcript.close();
          } catch {
            totals = undefined;
          }
          // Nothing here may break the chain: every later run's end waits on it.
          let sample: { peakMemGb?: number } | undefined;
          try {
            sample = this.deps.observer?.ended?.(runId, execution.agent.name);
          } catch (error) {
            reportError(`measuring run ${runId}`, error);
          }
          try {
            this.deps.store.apply({
              epoch: this.epoch,
              runInfo: [
                {
                  id: runId,
                  resultPath: this.deps.transcripts.pathOf(runId),
                  ...(totals ? { resultChars: totals.chars } : {}),
                  ...(sample?.peakMemGb !== undefined ? { peakMemGb: sample.peakMemGb } : {}),
                },
              ],
            });
          } catch (error) {
            reportError(`recording run ${runId}'s result`, error);
          }
          try {
            this.step({ type: 'ended', runId, ...outcome });
          } catch (error) {
            reportError(`ending run ${runId}`, error);
          }
        });
        return;
      }
      default:
        return;
    }
  }

  /** One timer for the scheduler's next wake-up (stagger or deadline). */
  private rearm(): void {
    if (this.closed) return;
    const at = this.scheduler.nextWakeAt();
    if (at === this.wakeAt && this.wakeTimer !== undefined) return;
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

  // ── helpers ──────────────────────────────────────────────────────────────────────────────────

  private validate<T>(fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      if (isCrewError(error) && error.code === 'empty_task') {
        this.selWrite('rejected_empty_task', { path: error.refusal.path });
      }
      throw error;
    }
  }

  private memoryReading(): { memory?: MemoryReading } {
    return this.deps.memoryGate ? { memory: this.deps.memoryGate() } : {};
  }

  private spawnAnswer(reply: SchedulerReply): SpawnResult {
    if (!reply.ok) return reply;
    if (!('runs' in reply)) return { ok: true, runs: [] };
    const runs = reply.runs.map((r: AdmittedRun) => {
      const status = reply.existing
        ? (this.scheduler.liveRun(r.id)?.status ?? this.deps.store.run(r.id)?.run.status ?? r.status)
        : r.status;
      return { id: r.id, status, ...(r.position !== undefined ? { position: r.position } : {}) };
    });
    return { ok: true, ...(reply.batchId !== undefined ? { batch_id: reply.batchId } : {}), runs };
  }

  /** A core `not_found` for a run the store knows as ended means "not running". */
  private answer(reply: SchedulerReply, runId?: RunId): Answer {
    if (reply.ok) return { ok: true };
    if (reply.refusal.code === 'not_found' && runId !== undefined) {
      const record = this.deps.store.run(runId);
      if (record && isTerminal(record.run.status)) {
        return {
          ok: false,
          refusal: refuse(
            'not_running',
            `run ${runId} already ended (${record.run.status}); read its result with spawn_status`,
          ),
        };
      }
    }
    return { ok: false, refusal: reply.refusal };
  }

  /** The record, if this scope may see it; otherwise `not_found` (no hint that it exists). */
  private assertVisible(scope: Scope, id: RunId): RunRecord {
    const record = this.deps.store.run(id);
    if (!record || !this.isVisible(scope, record)) {
      throw new CrewError(refuse('not_found', `no run ${id} among yours; list yours with spawn_list`));
    }
    return record;
  }

  private isVisible(scope: Scope, record: RunRecord): boolean {
    if (scope.kind === 'operator') return true;
    let current: RunRecord | undefined = record;
    for (let hops = 0; current && hops < 64; hops++) {
      if (current.run.parent === scope.parent) return true;
      const up = parentRunId(current.run.parent);
      current = up === undefined ? undefined : this.deps.store.run(up);
    }
    return false;
  }

  private visibleRecords(parent: ParentKey, limit: number): RunRecord[] {
    const out: RunRecord[] = [];
    let frontier: ParentKey[] = [parent];
    for (let depth = 0; frontier.length > 0 && depth < 64 && out.length < limit; depth++) {
      const found = this.deps.store.runs({ parents: frontier, limit: limit - out.length });
      out.push(...found);
      frontier = found.map((r) => `run:${r.run.id}`);
    }
    return out;
  }

  private async render(event: OutboxEvent): Promise<string> {
    const records = event.runIds
      .map((id) => this.deps.store.run(id))
      .filter((r): r is RunRecord => r !== undefined);
    return renderEvent(event, records, this.deps.transcripts, {
      keep: this.config['agent.completion_keep'],
      keepChars: this.config['agent.completion_keep_chars'],
    });
  }

  private selWrite(outcome: string, metadata: Record<string, unknown>): void {
    const event = {
      event_type: outcome === 'config_bounds_clamped' ? 'config' : 'admission',
      source: 'gateway',
      tool_name: 'spawn_run',
      outcome,
      metadata,
    };
    try {
      this.deps.sel.write(event);
    } catch {
      // A failing SEL write never fails a spawn.
    }
  }
}

function refusalOf(error: unknown): { ok: false; refusal: Refusal } {
  if (isCrewError(error)) return { ok: false, refusal: error.refusal };
  throw error;
}

function shuttingDown(): CrewError {
  return new CrewError(
    refuse('not_running', 'the gateway is shutting down and admits nothing new; retry against the next one', {
      retry_after_secs: 10,
    }),
  );
}

/** A failure with no caller to answer: said once on stderr, never thrown into the run loop. */
function reportError(what: string, error: unknown): void {
  process.stderr.write(`crew: ${what} failed: ${errorText(error)}\n`);
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** `CREW_INJECTION_TIMEOUT` (seconds, env), clamped to the delivery timeout. */
function injectionTimeoutMs(config: CrewConfig): number {
  const raw = Number(globalThis.process?.env?.CREW_INJECTION_TIMEOUT ?? 900);
  const secs = Number.isFinite(raw) && raw > 0 ? raw : 900;
  return Math.min(secs, config['agent.subagent_delivery_timeout_secs']) * 1000;
}
