import type { Job, Worker } from 'bullmq';
import type { RunId } from '../../core/types.js';
import { type ClusterJob, copyIdOf, originIdOf } from '../cluster-link.js';
import type { ClusterMessage } from '../cluster-message.js';
import { parseEntry } from '../cluster-status.js';
import {
  bounded,
  CLOSE_STEP_MS,
  type ClusterContext,
  type ClusterGateway,
  KEEP_FINISHED_JOBS,
  TIMED_OUT,
  text,
  within,
} from './context.js';
import { FairWorker, SlotTurns } from './fair-worker.js';
import type { LostRuns } from './lost-runs.js';
import { HOLD_MARK, LIMITER_WINDOW_MS } from './redis-cap-cell.js';

/** The copy of a transcript an outcome carries to the origin; the whole stays on the executing host. */
export const OUTCOME_TEXT_MAX_CHARS = 256 * 1024;
/** The mark a forwarded turn's end leaves for the gateway holding its slot, at least this long. */
const TURN_KEY_TTL_MS = 60_000;
/** Looks in a row that find the session's gateway alive but not running a forwarded turn before it is `lost`. */
const TURN_MISSES = 2;
/** A forwarded turn's end mark when it ran (otherwise the mark is why it did not). */
const TURN_RAN = 'ended';

/**
 * The executing side: this gateway's BullMQ worker takes up to the host cap of the cluster's jobs and runs
 * each as a copy on the gateway, sending its start and end to the origin; a continuation whose session is
 * kept on another gateway is forwarded there while this job holds the cluster slot.
 */
export class ClusterWorker {
  private worker: Worker | undefined;
  /** This gateway's place among those waiting for a provider slot (fair provider slots). */
  private turns: SlotTurns | undefined;
  /** Runs this gateway executes for the cluster now (the worker's active jobs). */
  readonly executing = new Set<RunId>();
  /** Those of them the provider answered 429 / 529 / 503: their completion does not raise the cap. */
  private readonly limited = new Set<RunId>();
  /** Those of them cancelled here because another gateway reported them lost (each cancelled once). */
  private readonly cancelledLost = new Set<RunId>();
  private readonly sinks = new Map<string, () => void>();
  /** The worker is paused because this host's memory is critical (`memoryCritical`). */
  pausedForMemory = false;
  /** Outcomes sent straight from a job as this gateway closes (close waits for them, bounded). */
  private readonly closingSends = new Set<Promise<unknown>>();
  /**
   * Continuation jobs this gateway's worker took for a conversation whose session is on another gateway:
   * the slot is held here while that gateway runs the turn; resolved by its `turn_ended` (or its absence).
   * An entry lives as long as its job; close settles them all.
   */
  readonly held = new Map<RunId, (error: string | undefined) => void>();
  /**
   * Turns another gateway's worker took for a session kept here, waiting for a slot or running: they
   * count against this host's cap as the worker's own jobs do, so the worker takes that many fewer.
   */
  readonly turnsHere = new Set<RunId>();
  /** Runs waiting for a slot under the host cap, in order; each is woken when a run here ends. */
  private slotWaiters: Array<() => void> = [];

  constructor(
    private readonly ctx: ClusterContext,
    private readonly lostRuns: LostRuns,
  ) {}

  /** Starts taking jobs for `gateway`, whose relay holds outcomes still owed to `pendingParents`. */
  start(gateway: ClusterGateway, pendingParents: readonly string[]): void {
    const { ctx } = this;
    ctx.gateway = gateway;
    for (const parent of pendingParents) {
      const origin = parent.slice('cluster:'.length);
      if (origin) this.ensureSink(origin);
    }
    const interval = ctx.options.stalledIntervalMs;
    const queueKeys = ctx.queue.keys;
    this.turns = new SlotTurns(
      ctx.workerConn,
      {
        waiters: ctx.keys.slotWaiters(),
        leases: ctx.keys.slotLeases(),
        active: queueKeys.active as string,
        wait: queueKeys.wait as string,
        meta: queueKeys.meta as string,
        marker: queueKeys.marker as string,
        gateways: ctx.keys.gateways(),
      },
      ctx.gatewayName,
      ctx.cmd,
    );
    this.worker = new FairWorker(
      ctx.options.name,
      (job) => this.execute(job),
      {
        connection: ctx.workerConn,
        prefix: ctx.prefix,
        concurrency: ctx.options.hostCap,
        stalledInterval: interval,
        lockDuration: interval,
        maxStalledCount: 0,
        removeOnComplete: { count: KEEP_FINISHED_JOBS },
        removeOnFail: { count: KEEP_FINISHED_JOBS },
        name: ctx.gatewayName,
        // Only so BullMQ honours the cluster's hold (the rate-limit key): no window ever counts this many starts.
        limiter: { max: HOLD_MARK, duration: LIMITER_WINDOW_MS },
      },
      this.turns,
    );
    this.worker.on('error', () => undefined);
    this.worker.on('stalled', (jobId) => {
      this.lostRuns
        .onStalled(jobId)
        .catch((error: unknown) =>
          ctx.log(`crew: cluster: reporting stalled job ${jobId} failed: ${text(error)}`),
        );
    });
    this.followMemory();
  }

  /**
   * Pauses the worker while this host's memory is critical and resumes it once it is not, so a gateway
   * short of memory takes no cluster job another gateway could run (checked at every refresh). A fetch
   * already waiting for a job when the pause comes may still take that one (BullMQ does not look again);
   * the reservation gate then holds its copy here.
   */
  followMemory(): void {
    const { ctx } = this;
    const critical = ctx.options.memoryCritical?.() ?? false;
    if (!this.worker || ctx.closing || ctx.closed || critical === this.pausedForMemory) return;
    this.pausedForMemory = critical;
    if (critical) {
      ctx.log('crew: cluster: host memory is critical; this gateway takes no cluster job until it recovers');
      this.worker.pause(true).catch(() => undefined);
      this.leaveTurns();
    } else {
      ctx.log('crew: cluster: host memory recovered; this gateway takes cluster jobs again');
      this.worker.resume().catch(() => undefined);
    }
  }

  /**
   * The provider answered 429 / 529 / 503 to a run this gateway executes for the cluster (or to a run
   * nested under it): the shared cap drops and the whole cluster's starts are held for the retry-after.
   */
  providerLimited(runId: RunId, retryAfterMs?: number): void {
    const { ctx } = this;
    if (ctx.closed) return;
    // Still executing: its completion will not count as clean. (A 429 reported just after the run ended
    // still cuts the cap.)
    if (this.executing.has(runId)) this.limited.add(runId);
    ctx.cap.rateLimited(retryAfterMs).then(
      (state) => {
        if (!state) ctx.log('crew: cluster: the provider cap stayed contended; this 429 was not applied');
      },
      (error: unknown) => ctx.log(`crew: cluster: applying a 429 to the provider cap failed: ${text(error)}`),
    );
  }

  /** The worker takes no new job (the gateway is closing); jobs it holds finish as their runs end. */
  async stopTaking(): Promise<void> {
    if (this.worker) await bounded(this.worker.pause(true), CLOSE_STEP_MS);
    if (this.turns) await bounded(this.turns.leave(), CLOSE_STEP_MS);
  }

  /** A paused worker asks no more: its place among the slot waiters goes rather than lapse. */
  private leaveTurns(): void {
    this.turns
      ?.leave()
      .catch((error: unknown) =>
        this.ctx.log(`crew: cluster: leaving the slot waiters failed: ${text(error)}`),
      );
  }

  /** Runs waiting for a slot give up, and the sinks detach: the gateway is closing. */
  beginClose(): void {
    for (const wake of this.slotWaiters.splice(0)) wake();
    for (const detach of this.sinks.values()) detach();
    this.sinks.clear();
  }

  /** Waits (bounded) for outcomes sent straight from jobs as the gateway closes. */
  async closingSendsDone(): Promise<void> {
    await bounded(Promise.allSettled([...this.closingSends]), CLOSE_STEP_MS);
  }

  /** Closes BullMQ's worker; a close that could not finish leaves its blocking connection retrying: cut. */
  async closeWorker(): Promise<void> {
    if (this.worker) await bounded(this.worker.close(true), CLOSE_STEP_MS);
  }

  async disconnectWorker(): Promise<void> {
    if (this.worker) await bounded(this.worker.disconnect(), CLOSE_STEP_MS);
  }

  /** Every slot held for a turn on another gateway is given up: the gateway closed. */
  settleHeld(): void {
    for (const settle of [...this.held.values()]) settle('the gateway holding its slot closed');
    this.held.clear();
  }

  /** Another gateway said forwarded turn `runId` ended (with `error` when it did not run). */
  turnEnded(runId: RunId, error: string | undefined): void {
    this.held.get(runId)?.(error);
  }

  /**
   * Runs executing here that another gateway has reported lost (this gateway's event loop stalled past the
   * stalled interval and it was taken for dead): their origins have ended them, so what they would still
   * produce reaches no one. They are cancelled here rather than left to run on.
   */
  cancelReportedLost(runIds: readonly RunId[], claims: readonly (string | null)[]): void {
    for (const [i, runId] of runIds.entries()) {
      const claim = claims[i];
      if (claim == null || !this.executing.has(runId) || this.cancelledLost.has(runId)) continue;
      this.cancelledLost.add(runId);
      this.ctx.log(`crew: cluster: run ${runId} executing here was reported lost (${claim}); cancelling it`);
      this.ctx.gateway?.cancel(copyIdOf(runId), { kind: 'operator' });
    }
  }

  private execute(job: Job): Promise<string> {
    const data = job.data as ClusterJob;
    return data.host !== undefined && data.host !== this.ctx.gatewayName
      ? this.forward(data, data.host)
      : this.runHere(data);
  }

  /** Runs a job's run (a copy, or a continuation in a session kept here) on this gateway until it ends. */
  private async runHere(data: ClusterJob): Promise<string> {
    const { ctx } = this;
    const gateway = ctx.gateway;
    // Bare errors here are BullMQ's processor contract, never shown to a user: a thrown job attempt goes back
    // to the queue and another gateway takes it.
    if (!gateway || ctx.closed) throw new Error('the gateway is closing');
    await this.slotUnderHostCap();
    if (ctx.closed) throw new Error('the gateway is closing');
    this.executing.add(data.runId);
    try {
      this.ensureSink(data.origin);
      // Not awaited: the copy need not wait a round trip to start, and its end goes out on the same
      // connection after this (Redis keeps one connection's commands in order).
      ctx
        .xadd(ctx.keys.out(data.origin), {
          type: 'started',
          runId: data.runId,
          host: ctx.gatewayName,
        })
        .catch(() => undefined);
      const reply = await gateway.executeForCluster(data);
      if (reply.kind !== 'refused' && ctx.closing) {
        // The gateway's close cancelled the copy: its completion is recorded, but the relay closes before
        // it could reach the origin's sink, and the origin would wait for the stalled check to call the run
        // lost. Send it now (the origin ignores a second report; the recorded one is sent at the next start).
        const send = this.sendOutcome(data.origin, copyIdOf(data.runId)).catch(() => undefined);
        this.closingSends.add(send);
        await send;
        this.closingSends.delete(send);
      }
      // A clean completion raises the shared cap, while this job still counts as running (as one host does).
      // (Once per run: a job this gateway had already executed, `existing`, is not counted again.)
      if (reply.kind === 'admitted' && !reply.existing && !this.limited.has(data.runId)) {
        if (gateway.statusOf(copyIdOf(data.runId)) === 'completed')
          await ctx.cap
            .cleanCompletion()
            .catch((error: unknown) =>
              ctx.log(`crew: cluster: raising the provider cap failed: ${text(error)}`),
            );
      }
      if (reply.kind === 'refused') {
        await ctx.xadd(ctx.keys.out(data.origin), {
          type: 'ended',
          runId: data.runId,
          status: 'failed',
          error: `gateway ${ctx.gatewayName} could not run it: ${reply.refusal.message}`,
          host: ctx.gatewayName,
          text: '',
        });
      }
      return ctx.gatewayName;
    } finally {
      this.executing.delete(data.runId);
      this.limited.delete(data.runId);
      this.cancelledLost.delete(data.runId);
      this.slotWaiters.shift()?.();
    }
  }

  /**
   * Waits until fewer than the host cap run here. The worker never takes more jobs than its concurrency,
   * but a forwarded turn (`runTurn`) runs here beside them: it waits for a slot as a run queued on one host
   * waits for a permit, and lowers the worker's concurrency meanwhile, so the worker's next jobs leave it
   * that slot. (A worker job waits only in the moment a turn took the slot it was fetched for, or when the
   * host cap is 1 and the worker cannot go below one.)
   */
  private async slotUnderHostCap(): Promise<void> {
    while (this.executing.size >= this.ctx.options.hostCap && !this.ctx.closed)
      await new Promise<void>((resolve) => this.slotWaiters.push(resolve));
  }

  /** The worker's concurrency: the host cap less the turns forwarded here (BullMQ's floor is one). */
  private fitWorker(): void {
    if (this.worker) this.worker.concurrency = Math.max(1, this.ctx.options.hostCap - this.turnsHere.size);
  }

  /** The completions of runs executed here for `origin` go to its outcome stream (retried while Redis is away). */
  private ensureSink(origin: string): void {
    const gateway = this.ctx.gateway;
    if (this.sinks.has(origin) || !gateway) return;
    const detach = gateway.attachSink(`cluster:${origin}`, {
      deliver: async (event) => {
        for (const copyId of event.run_ids) await this.sendOutcome(origin, copyId);
      },
    });
    this.sinks.set(origin, detach);
  }

  /** Sends how a copy this gateway executed ended (with a bounded transcript) to its origin. */
  private async sendOutcome(origin: string, copyId: RunId): Promise<void> {
    const { ctx } = this;
    const outcome = await ctx.gateway?.outcomeOf(copyId);
    if (!outcome) return;
    await ctx.xadd(ctx.keys.out(origin), {
      type: 'ended',
      runId: originIdOf(copyId),
      status: outcome.status as 'completed',
      ...(outcome.stop !== undefined ? { stop: outcome.stop as 'end_turn' } : {}),
      ...(outcome.error !== undefined ? { error: outcome.error } : {}),
      host: ctx.gatewayName,
      text:
        outcome.text.length > OUTCOME_TEXT_MAX_CHARS
          ? outcome.text.slice(0, OUTCOME_TEXT_MAX_CHARS)
          : outcome.text,
    });
  }

  /**
   * A continuation this worker took whose conversation's session is on `host`: `host` runs the turn and
   * this job holds the cluster slot until it says the turn ended (docs/decisions.md, kept conversations in
   * cluster mode). Every stalled interval it looks at `host`: a gateway gone from the registry, or alive
   * but not running the turn twice in a row (it restarted and lost the request), ends the run `lost` at
   * its origin (the origin ignores a second report, should the turn's own end come after all).
   */
  private async forward(data: ClusterJob, host: string): Promise<string> {
    const { ctx } = this;
    const interval = ctx.options.stalledIntervalMs;
    const ended = new Promise<string | undefined>((resolve) => this.held.set(data.runId, resolve));
    let end: { status: 'failed' | 'lost'; error: string } | undefined;
    try {
      if ((await this.turnState(host, data.runId)).state === 'gone') {
        end = {
          status: 'failed',
          error: `gateway ${host}, which held this conversation's session, is not in the cluster (found by ${ctx.gatewayName}); start a new conversation`,
        };
        return ctx.gatewayName;
      }
      await ctx.xadd(ctx.keys.cmd(host), { type: 'turn', runId: data.runId, replyTo: ctx.gatewayName });
      for (let misses = 0; ; ) {
        const outcome = await within(ended, interval, ctx.options.clock);
        if (outcome !== TIMED_OUT) {
          if (outcome !== undefined && !ctx.closed) end = { status: 'failed', error: outcome };
          return ctx.gatewayName;
        }
        if (ctx.closed) return ctx.gatewayName;
        const { state, error } = await this.turnState(host, data.runId);
        if (state === 'ended') {
          if (error !== undefined) end = { status: 'failed', error };
          return ctx.gatewayName;
        }
        misses = state === 'running' ? 0 : misses + 1;
        if (state === 'gone' || misses >= TURN_MISSES) {
          end = {
            status: 'lost',
            error: `gateway ${host}, which holds this conversation's session, ${state === 'gone' ? 'stopped answering' : 'is not running this turn'} (found by ${ctx.gatewayName}); it is presumed lost`,
          };
          return ctx.gatewayName;
        }
      }
    } finally {
      this.held.delete(data.runId);
      if (end)
        await ctx
          .xadd(ctx.keys.out(data.origin), {
            type: 'ended',
            runId: data.runId,
            ...end,
            host: ctx.gatewayName,
            text: '',
          })
          .catch(() => undefined);
    }
  }

  /**
   * Where a forwarded turn stands on `host`: its end is marked (`error`: it never ran), `host` publishes it
   * among its runs, publishes without it, or is stale.
   */
  private async turnState(
    host: string,
    runId: RunId,
  ): Promise<{ state: 'ended' | 'running' | 'absent' | 'gone'; error?: string }> {
    const { ctx } = this;
    const [mark, raw] = await Promise.all([
      ctx.cmd.get(ctx.keys.turn(runId)),
      ctx.cmd.hget(ctx.keys.gateways(), host),
    ]);
    if (mark !== null) return mark === TURN_RAN ? { state: 'ended' } : { state: 'ended', error: mark };
    const entry = raw ? parseEntry(raw) : undefined;
    if (!entry || Date.now() - (entry.at ?? 0) > ctx.options.stalledIntervalMs) return { state: 'gone' };
    return { state: entry.runs?.includes(runId) ? 'running' : 'absent' };
  }

  /**
   * The executing side of a forwarded turn: runs the continuation job here (its data read from the queue),
   * then marks its end (a key that expires) and tells the gateway holding the slot.
   */
  async runTurn(message: Extract<ClusterMessage, { type: 'turn' }>): Promise<void> {
    const { ctx } = this;
    const job = await ctx.queue.getJob(message.runId);
    const data = job?.data as ClusterJob | undefined;
    // A second request for a turn already running here (a stream read again) is answered by the first.
    if (data && (this.executing.has(data.runId) || this.turnsHere.has(data.runId))) return;
    let error: string | undefined;
    if (!data || data.host !== ctx.gatewayName) {
      error = `gateway ${ctx.gatewayName} has no continuation ${message.runId} to run (its job is gone)`;
    } else {
      this.turnsHere.add(data.runId);
      this.fitWorker();
      try {
        await this.runHere(data);
      } catch (failure) {
        error = `gateway ${ctx.gatewayName} could not run it: ${text(failure)}`;
      } finally {
        this.turnsHere.delete(data.runId);
        this.fitWorker();
      }
    }
    await ctx.cmd.set(
      ctx.keys.turn(message.runId),
      error ?? TURN_RAN,
      'PX',
      Math.max(TURN_KEY_TTL_MS, 4 * ctx.options.stalledIntervalMs),
    );
    await ctx.xadd(ctx.keys.out(message.replyTo), {
      type: 'turn_ended',
      runId: message.runId,
      ...(error !== undefined ? { error } : {}),
    });
  }
}
