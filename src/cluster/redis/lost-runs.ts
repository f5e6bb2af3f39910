import type { ClusterJob } from '../cluster-link.js';
import type { ClusterMessage } from '../cluster-message.js';
import { toFields } from '../cluster-message.js';
import { listingsOf } from '../dead-gateways.js';
import { type ClusterContext, parseJob, STREAM_MAX_LEN, text } from './context.js';
import { luaScript } from './lua-scripts.js';

/**
 * A run's claim to have been reported lost lasts at least this long (and ten stalled intervals): past any
 * later finding of the same run (BullMQ's stalled check comes at most about five intervals after a death).
 */
const LOST_CLAIM_TTL_MS = 60_000;

/**
 * Lost runs (docs/decisions.md, dead-gateway detection in cluster mode): the failure detector's look at
 * silent gateways' runs and BullMQ's stalled check both report a run whose gateway died `lost` to its
 * origin, once across the cluster (`lua/report-lost.lua` claims it).
 */
export class LostRuns {
  /** The failure detector's look at silent gateways' runs, while one is under way (one at a time). */
  private detecting: Promise<void> | undefined;

  constructor(private readonly ctx: ClusterContext) {}

  /** Starts a look for the runs of gateways not in `alive`, unless one is under way. */
  detect(alive: readonly string[]): void {
    if (this.detecting !== undefined) return;
    this.detecting = this.detectLost(alive)
      .catch((error: unknown) =>
        this.ctx.log(`crew: cluster: looking for a silent gateway's runs failed: ${text(error)}`),
      )
      .finally(() => {
        this.detecting = undefined;
      });
  }

  /** The look under way, if any (close waits for it). */
  underWay(): Promise<void> | undefined {
    return this.detecting;
  }

  /**
   * A job whose lock expired: its gateway died, or only stalled for a moment (a busy event loop renews
   * late). BullMQ's stalled check is the backstop behind the registry's failure detector
   * ({@link detectLost}), which usually reported it already. The registry decides: while a gateway still
   * publishes that it executes (or holds) the run, it is kept (its end reaches the origin as usual);
   * otherwise the origin ends the run `lost`, once (the report is claimed in Redis, whoever makes it).
   */
  async onStalled(jobId: string): Promise<void> {
    const { ctx } = this;
    const job = await ctx.queue.getJob(jobId);
    const data = job?.data as ClusterJob | undefined;
    if (!job || !data) return;
    // BullMQ's `pb`, unless a worker took the job since (to fail it): then a stale entry's gateway, below.
    let holder = (job as { processedBy?: string }).processedBy;
    const interval = ctx.options.stalledIntervalMs;
    for (let look = 0; look < 8 && !ctx.closed; look++) {
      const all = await ctx.cmd.hgetall(ctx.keys.gateways());
      const { fresh, stale } = listingsOf(all, data.runId, Date.now(), interval);
      holder = stale[0] ?? holder;
      if (!fresh) break;
      // Still published as running: look again later; a gateway that keeps publishing it is alive.
      if (look === 7) return;
      await new Promise((r) => setTimeout(r, interval / 4));
    }
    if (ctx.closed) return;
    await this.reportLost(data, holder, 'stalled');
  }

  /**
   * The failure detector (docs/decisions.md, dead-gateway detection in cluster mode): for each silent
   * gateway, reports lost the active jobs it holds whose locks have lapsed (BullMQ agrees it is gone). A
   * gateway still renewing its locks keeps its runs, however late its entry. Each run is reported once
   * across the cluster; later looks find its claim and pass.
   */
  private async detectLost(alive: readonly string[]): Promise<void> {
    const { ctx } = this;
    const found = (await ctx.cmd.eval(
      luaScript('lapsed-jobs'),
      1,
      ctx.queue.keys.active as string,
      ctx.queue.toKey(''),
      ctx.keys.lost(''),
      ...alive,
    )) as string[];
    for (let i = 0; i + 2 < found.length && !ctx.closed; i += 3) {
      const data = parseJob(found[i + 2] as string);
      if (data) await this.reportLost(data, found[i + 1] as string, 'silent');
    }
  }

  /**
   * Reports a run lost to its origin unless it was reported already (by any gateway, through either
   * finding): `silent` (the detector) only while the job is still active, held by `holder` and unlocked;
   * `stalled` (BullMQ's check, which has already judged the lock) at once.
   */
  private async reportLost(
    data: ClusterJob,
    holder: string | undefined,
    finding: 'silent' | 'stalled',
  ): Promise<void> {
    const { ctx } = this;
    const jobKey = ctx.queue.toKey(data.runId);
    const message: ClusterMessage = {
      type: 'ended',
      runId: data.runId,
      status: 'lost',
      error: `gateway ${holder ?? '?'} executing it stopped renewing its lock and answering (found by ${ctx.gatewayName}); it is presumed dead`,
      host: ctx.gatewayName,
      text: '',
    };
    // 0 when the run was reported already, or (`silent`) its gateway still holds it: nothing to do either way.
    await ctx.cmd.eval(
      luaScript('report-lost'),
      5,
      ctx.keys.lost(data.runId),
      ctx.keys.out(data.origin),
      jobKey,
      `${jobKey}:lock`,
      ctx.queue.keys.active as string,
      finding === 'silent' ? (holder ?? '') : '',
      `${ctx.gatewayName} ${finding}`,
      Math.max(LOST_CLAIM_TTL_MS, 10 * ctx.options.stalledIntervalMs),
      STREAM_MAX_LEN,
      data.runId,
      ...toFields(message),
    );
  }
}
