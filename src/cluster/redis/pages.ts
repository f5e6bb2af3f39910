import type { TimerHandle } from '../../core/clock.js';
import { CrewError, isCrewError, type Refusal } from '../../core/errors.js';
import * as refusals from '../../core/refusals.js';
import type { RunId } from '../../core/types.js';
import type { PageOptions, TranscriptPage } from '../../transcripts/transcript-store.js';
import { copyIdOf } from '../cluster-link.js';
import { type ClusterMessage, pageOptionsOf } from '../cluster-message.js';
import { type ClusterContext, text } from './context.js';
import type { Registry } from './registry.js';

/** How long `spawn_status` waits for the executing gateway's page before answering `not_here`. */
export const PAGE_WAIT_MS = 5000;
/** A page answer rests in Redis this long at most (the asker takes it at once, or gave up). */
const PAGE_TTL_MS = 30_000;

interface PageWait {
  resolve: (raw: string | null) => void;
  timer: TimerHandle;
}

/**
 * Transcript pages across the cluster: a transcript stays on the gateway that executed its run, so an
 * origin asks that gateway (its command stream), which writes the page to a key that expires and says so
 * on the asker's outcome stream.
 */
export class Pages {
  /** `spawn_status` calls waiting for another gateway's page, by request id (each ends by its timer). */
  private readonly waits = new Map<string, PageWait>();
  private seq = 0;
  /** Page requests written before this (ms, Redis time) are stale: their asker gave up long ago. */
  readonly readSince = Date.now() - PAGE_TTL_MS;

  constructor(
    private readonly ctx: ClusterContext,
    private readonly registry: Registry,
  ) {}

  async page(host: string, runId: RunId, options: PageOptions): Promise<TranscriptPage> {
    const { ctx } = this;
    if (ctx.closed || !ctx.up) throw new CrewError(refusals.clusterUnavailable('not connected'));
    if (!(await this.registry.isPublished(host)))
      throw new CrewError(
        refusals.notHere(
          runId,
          host,
          'it has not published itself to the cluster lately (it is down or cut off)',
        ),
      );
    const requestId = `${ctx.gatewayName}:${process.pid}:${++this.seq}`;
    const answer = new Promise<string | null>((resolve) => {
      const timer = ctx.options.clock.setTimer(() => {
        this.waits.delete(requestId);
        resolve(null);
      }, PAGE_WAIT_MS);
      this.waits.set(requestId, { resolve, timer });
    });
    try {
      await ctx.xadd(ctx.keys.cmd(host), {
        type: 'page',
        runId,
        requestId,
        replyTo: ctx.gatewayName,
        options: JSON.stringify(options),
      });
    } catch (error) {
      this.settle(requestId, null);
      throw new CrewError(refusals.clusterUnavailable(text(error)));
    }
    const raw = await answer;
    if (raw === null)
      throw new CrewError(refusals.notHere(runId, host, `it did not answer within ${PAGE_WAIT_MS / 1000} s`));
    const body = JSON.parse(raw) as { page?: TranscriptPage; refusal?: Refusal };
    if (body.page) return body.page;
    throw new CrewError(body.refusal ?? refusals.notHere(runId, host, 'its answer was empty'));
  }

  /** The executing gateway wrote its answer: taken whether or not someone still waits. */
  paged(message: Extract<ClusterMessage, { type: 'paged' }>): void {
    const key = this.ctx.keys.page(message.requestId);
    // Taken whether or not someone still waits: the answer never rests longer than it must.
    this.ctx.cmd
      .getdel(key)
      .then((raw) => this.settle(message.requestId, raw))
      .catch(() => this.settle(message.requestId, null));
  }

  /** Every page request still waiting ends unanswered (`not_here`): the gateway closed. */
  closeAll(): void {
    for (const requestId of [...this.waits.keys()]) this.settle(requestId, null);
  }

  private settle(requestId: string, raw: string | null): void {
    const wait = this.waits.get(requestId);
    if (!wait) return;
    this.waits.delete(requestId);
    this.ctx.options.clock.clearTimer(wait.timer);
    wait.resolve(raw);
  }

  /** Reads the page an origin asked for from this gateway's copy of the run and hands it back. */
  async answer(message: Extract<ClusterMessage, { type: 'page' }>): Promise<void> {
    const { ctx } = this;
    const gateway = ctx.gateway;
    if (!gateway) return;
    let body: { page: TranscriptPage } | { refusal: Refusal };
    try {
      body = { page: await gateway.pageOf(copyIdOf(message.runId), pageOptionsOf(message.options)) };
    } catch (error) {
      body = {
        refusal: isCrewError(error)
          ? error.refusal
          : refusals.notHere(message.runId, ctx.gatewayName, `reading it there failed (${text(error)})`),
      };
    }
    await ctx.cmd.set(ctx.keys.page(message.requestId), JSON.stringify(body), 'PX', PAGE_TTL_MS);
    await ctx.xadd(ctx.keys.out(message.replyTo), {
      type: 'paged',
      runId: message.runId,
      requestId: message.requestId,
    });
  }
}
