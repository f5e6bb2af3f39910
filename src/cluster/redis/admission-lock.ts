import type { Refusal } from '../../core/errors.js';
import * as refusals from '../../core/refusals.js';
import type { ClusterJobKind } from '../cluster-link.js';
import type { ClusterContext } from './context.js';
import { text } from './context.js';
import { luaScript } from './lua-scripts.js';
import type { Proxies } from './proxies.js';

/** How long admission waits for the cluster's admission lock before answering `cluster_unavailable`. */
const ADMIT_LOCK_WAIT_MS = 10_000;
const ADMIT_LOCK_TTL_MS = 5000;
/** Admissions one turn of the lock takes at most: far below its TTL even on a loaded host. */
const ADMISSIONS_PER_TURN = 64;

/** An admission waiting for its gateway's turn of the cluster's admission lock. */
interface WaitingAdmission {
  kind: ClusterJobKind;
  members: number;
  admission: () => unknown;
  /** Answers the admission's caller: its answer, or `{ refusal }`. */
  resolve: (answer: unknown) => void;
}

/**
 * Cluster admission under the cluster-wide queue bounds (DESIGN §3, 7): one lock in Redis, one count of
 * the queue (`lua/count-queue.lua`) and one add for all the admissions that arrive while this gateway
 * waits for or holds it (docs/decisions.md, cluster mode polish).
 */
export class AdmissionLock {
  /** Admissions waiting for this gateway's next turn of the admission lock, in order. */
  private readonly waiting: WaitingAdmission[] = [];
  private admitting: Promise<void> | undefined;

  constructor(
    private readonly ctx: ClusterContext,
    private readonly proxies: Proxies,
  ) {}

  async admit<T>(
    kind: ClusterJobKind,
    members: number,
    admission: () => T,
  ): Promise<T | { refusal: Refusal }> {
    if (this.ctx.closed || !this.ctx.up) return { refusal: refusals.clusterUnavailable('not connected') };
    // Admissions that arrive while this gateway waits for or holds the cluster's lock share its next turn:
    // one lock, one count and one add for all of them (docs/decisions.md, cluster mode polish).
    return new Promise((resolve) => {
      this.waiting.push({
        kind,
        members,
        admission,
        resolve: resolve as (answer: unknown) => void,
      });
      this.admitting ??= this.admitTurns();
    });
  }

  private async admitTurns(): Promise<void> {
    try {
      while (this.waiting.length > 0) await this.admitTurn();
    } finally {
      // In the step that found none waiting: an admission arriving after it starts the next loop.
      this.admitting = undefined;
    }
  }

  /**
   * One turn of the admission lock: the admissions waiting when it is taken (up to
   * {@link ADMISSIONS_PER_TURN}) run in order against one count of the queue, each counting the jobs of
   * those before it, and answer once their jobs are in the queue.
   */
  private async admitTurn(): Promise<void> {
    const { ctx } = this;
    let batch: WaitingAdmission[] = [];
    const answers = new Map<WaitingAdmission, unknown>();
    let token: string | undefined;
    try {
      // Internal control flow: the catch below answers every waiting admission with a coded
      // `cluster_unavailable` refusal naming this reason; the bare error itself reaches no one.
      if (ctx.closed || !ctx.up) throw new Error('not connected');
      token = await this.lock();
      if (token === undefined) throw new Error('the admission lock stayed busy');
      batch = this.waiting.splice(0, ADMISSIONS_PER_TURN);
      let [single, wave, active, cap] = (await ctx.cmd.eval(
        luaScript('count-queue'),
        3,
        ctx.keys.wait(),
        ctx.keys.active(),
        ctx.queue.keys.meta as string,
        ctx.keys.jobPrefix(),
      )) as [number, number, number, number];
      cap ||= ctx.options.providerCap;
      for (const waiting of batch) {
        const refusal = this.boundRefusal(waiting.kind, waiting.members, single, wave, active, cap);
        if (refusal) {
          answers.set(waiting, { refusal });
          continue;
        }
        const before = this.proxies.pendingCount();
        try {
          answers.set(waiting, waiting.admission());
        } catch (error) {
          answers.set(waiting, { refusal: refusals.clusterUnavailable(text(error)) });
        }
        // Its jobs wait in the queue for the admissions after it in this turn.
        for (const kind of this.proxies.pendingKindsSince(before)) {
          if (kind === 'single') single++;
          else wave++;
        }
      }
      await this.proxies.flush();
    } catch (error) {
      if (batch.length === 0) batch = this.waiting.splice(0);
      for (const waiting of batch)
        if (!answers.has(waiting))
          answers.set(waiting, { refusal: refusals.clusterUnavailable(text(error)) });
    } finally {
      if (token !== undefined)
        ctx.cmd.eval(luaScript('unlock-admission'), 1, ctx.keys.admit(), token).catch(() => undefined);
      for (const waiting of batch) waiting.resolve(answers.get(waiting));
    }
  }

  private boundRefusal(
    kind: ClusterJobKind,
    members: number,
    single: number,
    wave: number,
    active: number,
    providerCap: number,
  ): Refusal | undefined {
    const { maxQueued, maxQueuedWaveMembers } = this.ctx.options;
    if (kind === 'single') return single >= maxQueued ? refusals.queueFull(single, maxQueued) : undefined;
    const free = Math.max(0, providerCap - active - single - wave);
    const wouldQueue = Math.max(0, members - free);
    return wave + wouldQueue > maxQueuedWaveMembers
      ? refusals.waveQueueFull(members, wouldQueue, wave, maxQueuedWaveMembers)
      : undefined;
  }

  private async lock(): Promise<string | undefined> {
    const token = `${this.ctx.gatewayName}:${Math.random().toString(36).slice(2)}`;
    const deadline = Date.now() + ADMIT_LOCK_WAIT_MS;
    for (;;) {
      const ok = await this.ctx.cmd.set(this.ctx.keys.admit(), token, 'PX', ADMIT_LOCK_TTL_MS, 'NX');
      if (ok === 'OK') return token;
      if (Date.now() > deadline) return undefined;
      await new Promise((r) => setTimeout(r, 2));
    }
  }
}
