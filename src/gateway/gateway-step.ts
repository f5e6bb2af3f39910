import type { AgentDef } from '../core/agent-def.js';
import type { TimerHandle } from '../core/clock.js';
import type { CrewConfig } from '../core/config-schema.js';
import * as refusals from '../core/refusals.js';
import type { Scheduler } from '../core/scheduler.js';
import type { SchedulerCommand, SchedulerEvent, SchedulerReply } from '../core/scheduler-types.js';
import { assertNever, isTerminal, type RunId, type RunSpec } from '../core/types.js';
import type { RunInfoUpdate, StoreTx } from '../store/store.js';
import type { Auditor } from './audit.js';
import { cwdAtStart } from './cwd-at-start.js';
import type { Delivery } from './delivery.js';
import type { GatewayDeps } from './gateway-deps.js';
import type { Placement } from './placement.js';
import {
  type Effect,
  isEmptyTx,
  type NewSpecs,
  type Plan,
  type PlanInput,
  planTransaction,
} from './plan-transaction.js';
import type { ProviderFeed } from './provider-feed.js';
import { buildRunRequest, type RunRequestDeps } from './run-request.js';
import type { RunSupervisor } from './run-supervisor.js';
import type { StoreWriter } from './store-writer.js';

/** What one step commits beside the scheduler's own records. */
export interface StepExtra {
  newSpecs?: NewSpecs;
  claim?: RunId[];
  runInfo?: RunInfoUpdate[];
}

/** What the gateway's stepping is wired to (all made by the gateway before its first step). */
export interface StepperDeps {
  config: CrewConfig;
  deps: GatewayDeps;
  scheduler: Scheduler;
  writer: StoreWriter;
  auditor: Auditor;
  delivery: () => Delivery;
  supervisor: () => RunSupervisor;
  providers: () => ProviderFeed;
  placement: Placement;
  epoch: number;
  nextEventId: () => string;
  agentsAt: (cwd: string | undefined) => ReadonlyMap<string, AgentDef>;
  /** The runs a committed step changed, for the gateway's watchers (only called while one watches). */
  changed: (runIds: RunId[]) => void;
  hasWatchers: () => boolean;
}

/**
 * The gateway's one way to change state (issue 30: its own file): an event goes to the pure scheduler,
 * its commands are planned into one store transaction (`planTransaction`), the transaction commits, and
 * then its effects are carried out: launches (here, or where the placement puts them), stops, steers and
 * session releases. One timer wakes the scheduler for its next stagger or deadline.
 */
export class Stepper {
  /** Specs of live runs, so a launch needs no store read. */
  readonly specs = new Map<RunId, RunSpec>();
  /** What every launch's request is built with: the config and deps, fixed for the gateway's life. */
  private runRequestDeps: RunRequestDeps | undefined;
  private wakeTimer: TimerHandle | undefined;
  private wakeAt: number | undefined;
  private closed = false;

  constructor(private readonly d: StepperDeps) {}

  /**
   * One event: the scheduler decides, one transaction records it, then its effects are carried out.
   * An admission is refused while the store refuses writes, and undone when its own write fails; any
   * other step has happened once the scheduler took it, so its write waits in order until the store
   * accepts it (its events reach the relay only then).
   */
  step(event: SchedulerEvent, extra: StepExtra = {}): SchedulerReply {
    const { scheduler, writer, deps } = this.d;
    const admission = event.type === 'spawn' || event.type === 'continue';
    if (admission) {
      if (!writer.canAdmit()) return this.storageRefusal(event);
      // A wake-up due now is its own step, so the admission launches only its own members (rollback).
      if ((scheduler.nextWakeAt() ?? Number.POSITIVE_INFINITY) <= deps.clock.now()) {
        this.step({ type: 'tick' });
      }
    }
    const now = deps.clock.now();
    const { commands, reply, rollback } = scheduler.step(event, now);
    // Assigned, not spread: a step is the hot path, and each spread of an optional part is an object.
    const input: PlanInput = { epoch: this.d.epoch, now, eventId: this.d.nextEventId };
    if (extra.newSpecs) input.newSpecs = extra.newSpecs;
    if (extra.claim) input.claim = extra.claim;
    if (extra.runInfo) input.runInfo = extra.runInfo;
    const plan = planTransaction(commands, input);
    if (rollback) {
      if (!writer.tryWrite(plan.tx)) {
        rollback();
        return this.storageRefusal(event);
      }
      this.committed(plan);
    } else if (!isEmptyTx(plan.tx)) {
      writer.write(plan.tx, this.committed, plan);
    }
    this.trackSpecs(commands, extra.newSpecs);
    for (const write of plan.sel) this.d.auditor.write(write.outcome, write.metadata);
    for (const effect of plan.effects) this.carryOut(effect);
    this.rearm();
    return reply;
  }

  /** No timer is armed again; the one armed is cleared. */
  close(): void {
    this.closed = true;
    if (this.wakeTimer !== undefined) this.d.deps.clock.clearTimer(this.wakeTimer);
    this.wakeTimer = undefined;
  }

  /** What follows a step's commit: its events to the relay, its changed runs to the watchers. */
  private readonly committed = (plan: Plan): void => {
    const delivery = this.d.delivery();
    for (const announced of plan.announced) delivery.announced(announced);
    // Only a watcher reads the changed ids: no set is built per step when nobody watches.
    if (this.d.hasWatchers()) this.d.changed(changedRuns(plan.tx));
  };

  private storageRefusal(event: SchedulerEvent): SchedulerReply {
    const { writer } = this.d;
    const refusal = refusals.storageUnavailable(writer.unavailable ?? 'the last write failed');
    this.d.auditor.write('refused_storage_unavailable', {
      ...('parent' in event ? { parent: event.parent } : {}),
      reason: writer.unavailable,
    });
    return { kind: 'refused', ok: false, refusal };
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
    const supervisor = this.d.supervisor();
    switch (effect.type) {
      case 'launch':
        this.launch(effect.runId);
        return;
      case 'stop':
        supervisor.stop(effect.runId, effect.reason);
        return;
      case 'steer':
        supervisor.steer(effect.runId, effect.message, effect.mode);
        return;
      case 'release_session': {
        if (this.d.placement.releaseSession(effect.conversationId)) return;
        // A conversation is named by its first run, whose directory chose its agent.
        const cwd = this.d.deps.store.run(effect.conversationId)?.spec.cwd;
        const agent = this.d.agentsAt(cwd).get(effect.agent);
        if (agent) supervisor.releaseSession(agent, effect.conversationId);
        return;
      }
      default:
        assertNever(effect);
    }
  }

  private launch(runId: RunId): void {
    const { deps, config, scheduler, placement } = this.d;
    const supervisor = this.d.supervisor();
    const run = scheduler.liveRun(runId);
    const spec = this.specs.get(runId) ?? deps.store.run(runId)?.spec;
    const agent = spec ? this.d.agentsAt(spec.cwd).get(spec.agent) : undefined;
    if (!run || !spec || !agent) {
      supervisor.failLaunch(runId, `agent ${spec?.agent ?? '?'} is no longer configured`);
      return;
    }
    // Admitted, then its directory swapped for a link that leads out: it ends failed, once, with its event.
    const start = cwdAtStart(spec, config['agent.subagent_cwd_allowed_roots']);
    if ('refused' in start) {
      supervisor.failLaunch(runId, start.refused);
      return;
    }
    const elsewhere = placement.startElsewhere(run, spec);
    if (elsewhere !== undefined) {
      if ('failed' in elsewhere) supervisor.failLaunch(runId, elsewhere.failed);
      else supervisor.launchWith(agent.name, runId, elsewhere);
      return;
    }
    this.runRequestDeps ??= {
      sessionSharing: config['agent.session_sharing'],
      defaultCwd: deps.defaultCwd,
      ...(deps.buildPrompt ? { buildPrompt: deps.buildPrompt } : {}),
      ...(deps.mcpServersFor ? { mcpServersFor: deps.mcpServersFor } : {}),
      ...(deps.runtimeKeyFor ? { runtimeKeyFor: deps.runtimeKeyFor } : {}),
      keptSessionOf: (conversationId) => this.d.scheduler.conversation(conversationId)?.session,
    };
    const request = buildRunRequest(run, spec, agent, this.runRequestDeps);
    if (start.cwd !== undefined) request.cwd = start.cwd;
    const routed = this.d.providers().routed(agent, runId, request);
    if (routed !== agent) request.agent = routed;
    supervisor.launch(agent, request);
  }

  /**
   * One timer for the scheduler's next wake-up (stagger or deadline). A timer already set for that time
   * or earlier stays: firing early is a tick with nothing due, which arms the next one. As runs end in
   * order the nearest deadline moves later at nearly every step, and a timer moved each time cost a
   * clear and a set (a Node timer list per distinct delay) per step; now it moves once per firing.
   */
  private rearm(): void {
    if (this.closed) return;
    const { clock } = this.d.deps;
    const at = this.d.scheduler.nextWakeAt();
    if (at !== undefined && this.wakeTimer !== undefined && this.wakeAt !== undefined && this.wakeAt <= at) {
      return;
    }
    if (this.wakeTimer !== undefined) clock.clearTimer(this.wakeTimer);
    this.wakeTimer = undefined;
    this.wakeAt = at;
    if (at === undefined) return;
    this.wakeTimer = clock.setTimer(
      () => {
        this.wakeTimer = undefined;
        this.wakeAt = undefined;
        this.step({ type: 'tick' });
      },
      Math.max(0, at - clock.now()),
    );
  }
}

function changedRuns(tx: StoreTx): RunId[] {
  const ids = new Set<RunId>();
  for (const { run } of tx.newRuns ?? []) ids.add(run.id);
  for (const run of tx.runs ?? []) ids.add(run.id);
  return [...ids];
}
