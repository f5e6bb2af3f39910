import type { Refusal } from '../../core/errors.js';
import type { RunId } from '../../core/types.js';
import { assertNever } from '../../core/types.js';
import type { RunHandle, RunnerEvent } from '../../runners/runner.js';
import type { PageOptions, TranscriptPage } from '../../transcripts/transcript-store.js';
import { type ClusterJob, type ClusterJobKind, type ClusterLink, copyIdOf } from '../cluster-link.js';
import { type ClusterMessage, parseMessage } from '../cluster-message.js';
import type { ClusterStatus } from '../cluster-status.js';
import { AdmissionLock } from './admission-lock.js';
import {
  bounded,
  CLOSE_STEP_MS,
  ClusterContext,
  type ClusterGateway,
  type RedisClusterOptions,
  text,
} from './context.js';
import { LostRuns } from './lost-runs.js';
import { loadLuaScripts } from './lua-scripts.js';
import { Pages } from './pages.js';
import { Proxies } from './proxies.js';
import { Registry } from './registry.js';
import { ClusterWorker } from './worker.js';

export {
  type ClusterGateway,
  KEEP_FINISHED_JOBS,
  type RedisClusterOptions,
  STREAM_MAX_LEN,
} from './context.js';
export { PAGE_WAIT_MS } from './pages.js';
export { OUTCOME_TEXT_MAX_CHARS } from './worker.js';

/**
 * Cluster mode on BullMQ 6 and Redis (docs/decisions.md, cluster mode): the {@link ClusterLink} of one
 * gateway. Its queue `<name>` holds every top-level run admitted anywhere (job id = run id), its worker
 * executes up to the host cap of them here, and BullMQ's global concurrency holds the cluster to the
 * provider cap. Outcomes go back to each run's origin through the origin's outcome stream; cancel and steer
 * reach the executing gateway through its command stream.
 *
 * This file composes the parts (one concern a file beside it, all sharing one {@link ClusterContext}) and
 * reads this gateway's two streams, handing each message to the part it is for.
 */
export class RedisCluster implements ClusterLink {
  readonly gatewayName: string;
  readonly proxyRoom: number;
  private readonly ctx: ClusterContext;
  private readonly proxies: Proxies;
  private readonly admission: AdmissionLock;
  private readonly lostRuns: LostRuns;
  private readonly worker: ClusterWorker;
  private readonly registry: Registry;
  private readonly pages: Pages;
  private readLoop: Promise<void> | undefined;
  private lastOut = '0-0';
  private lastCmd = '0-0';

  constructor(options: RedisClusterOptions) {
    // A script missing from the build fails here, at the start, not at its first use.
    loadLuaScripts();
    this.gatewayName = options.gatewayName;
    // Runs live here as proxies: queued cluster-wide (both bounds) or executing anywhere (provider cap).
    this.proxyRoom = options.maxQueued + options.maxQueuedWaveMembers + options.providerCap;
    this.ctx = new ClusterContext(options);
    this.proxies = new Proxies(this.ctx);
    this.admission = new AdmissionLock(this.ctx, this.proxies);
    this.lostRuns = new LostRuns(this.ctx);
    this.worker = new ClusterWorker(this.ctx, this.lostRuns);
    this.registry = new Registry(this.ctx, this.worker, this.lostRuns);
    this.pages = new Pages(this.ctx, this.registry);
    this.ctx.cmd.on('ready', () => this.onReady());
  }

  /** Starts executing jobs for `gateway` and reading this gateway's streams. */
  bind(gateway: ClusterGateway, pendingParents: readonly string[] = []): void {
    this.worker.start(gateway, pendingParents);
    this.readLoop = this.readStreams();
    this.registry.refresh();
  }

  // ── the origin side ──────────────────────────────────────────────────────────────────────────

  admit<T>(kind: ClusterJobKind, members: number, admission: () => T): Promise<T | { refusal: Refusal }> {
    return this.admission.admit(kind, members, admission);
  }

  dispatch(job: ClusterJob, onEvent: (event: RunnerEvent) => void): RunHandle {
    return this.proxies.dispatch(job, onEvent);
  }

  page(host: string, runId: RunId, options: PageOptions): Promise<TranscriptPage> {
    return this.pages.page(host, runId, options);
  }

  /** The cluster as the last refresh saw it (`resource_status`'s `cluster`), with the cap as last seen. */
  status(): ClusterStatus {
    return this.registry.status();
  }

  /** Until when the provider holds the cluster's starts, as this gateway last read or wrote the cap. */
  providerHoldUntil(): number | undefined {
    const { holdUntil } = this.ctx.cap.state;
    return holdUntil > Date.now() ? holdUntil : undefined;
  }

  hasGateway(host: string): boolean | undefined {
    return this.registry.hasGateway(host);
  }

  release(host: string, conversationId: RunId): void {
    this.ctx.command(host, { type: 'release', runId: conversationId });
  }

  released(origin: string, conversationId: RunId, reason: 'expired' | 'evicted'): void {
    this.ctx
      .xadd(this.ctx.keys.out(origin), { type: 'released', runId: conversationId, reason })
      .catch((error: unknown) =>
        this.ctx.log(`crew: cluster: telling ${origin} of released ${conversationId} failed: ${text(error)}`),
      );
  }

  providerLimited(runId: RunId, retryAfterMs?: number): void {
    this.worker.providerLimited(runId, retryAfterMs);
  }

  /** The worker takes no new job (the gateway is closing); jobs it holds finish as their runs end. */
  async stopTaking(): Promise<void> {
    this.ctx.closing = true;
    await this.worker.stopTaking();
  }

  async close(): Promise<void> {
    const { ctx } = this;
    if (ctx.closed) return;
    ctx.closed = true;
    // Runs waiting for a slot give up: the gateway is closing.
    this.worker.beginClose();
    this.registry.stop();
    await this.worker.closingSendsDone();
    // A look for a silent gateway's runs under way stops at its next run; its Redis calls end first.
    const detecting = this.lostRuns.underWay();
    if (detecting) await bounded(detecting, CLOSE_STEP_MS);
    // BullMQ's closes wait for Redis; a Redis that is away must not hold the gateway's exit.
    await this.worker.closeWorker();
    await bounded(ctx.queue.close(), CLOSE_STEP_MS);
    // A close that could not finish leaves BullMQ's own (blocking) connection retrying: cut it.
    await this.worker.disconnectWorker();
    await bounded(ctx.queue.disconnect(), CLOSE_STEP_MS);
    if (ctx.up) await bounded(ctx.cmd.hdel(ctx.keys.gateways(), ctx.gatewayName), CLOSE_STEP_MS);
    for (const client of ctx.connections()) client.disconnect();
    if (this.readLoop) await bounded(this.readLoop, CLOSE_STEP_MS);
    this.pages.closeAll();
    this.worker.settleHeld();
    this.proxies.closeAll();
  }

  // ── streams and reconnects ───────────────────────────────────────────────────────────────────

  private async readStreams(): Promise<void> {
    const { ctx } = this;
    const out = ctx.keys.out(this.gatewayName);
    const cmd = ctx.keys.cmd(this.gatewayName);
    while (!ctx.closed) {
      try {
        const answer = (await ctx.reader.xread(
          'COUNT',
          500,
          'BLOCK',
          1000,
          'STREAMS',
          out,
          cmd,
          this.lastOut,
          this.lastCmd,
        )) as [string, [string, string[]][]][] | null;
        for (const [key, entries] of answer ?? []) {
          for (const [id, fields] of entries) {
            if (key === out) this.lastOut = id;
            else this.lastCmd = id;
            const message = parseMessage(fields);
            if (message) this.onMessage(message, Number(id.split('-')[0]));
          }
        }
      } catch {
        if (ctx.closed) return;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }

  private onMessage(message: ClusterMessage, at: number): void {
    const { ctx } = this;
    if (message.type === 'started' || message.type === 'ended') this.registry.heard(message.host);
    switch (message.type) {
      case 'started':
        this.proxies.started(message);
        return;
      case 'ended':
        this.proxies.ended(message);
        return;
      case 'cancel':
        ctx.gateway?.cancel(copyIdOf(message.runId), { kind: 'operator' });
        return;
      case 'steer':
        ctx.gateway?.steer(copyIdOf(message.runId), message.message, message.mode, { kind: 'operator' });
        return;
      case 'page':
        if (at < this.pages.readSince) return;
        this.pages
          .answer(message)
          .catch((error: unknown) =>
            ctx.log(`crew: cluster: answering ${message.replyTo}'s page request failed: ${text(error)}`),
          );
        return;
      case 'turn':
        if (at < this.pages.readSince) return;
        this.worker
          .runTurn(message)
          .catch((error: unknown) =>
            ctx.log(
              `crew: cluster: running ${message.replyTo}'s turn ${message.runId} failed: ${text(error)}`,
            ),
          );
        return;
      case 'turn_ended':
        this.worker.turnEnded(message.runId, message.error);
        return;
      case 'release':
        ctx.gateway?.releaseForCluster(message.runId);
        return;
      case 'released':
        ctx.gateway?.releasedElsewhere(message.runId, message.reason);
        return;
      case 'paged':
        this.pages.paged(message);
        return;
      default:
        assertNever(message);
    }
  }

  /**
   * Redis answers (again): the shared provider cap is created if missing and applied to the queue, and
   * jobs a restarted (empty) Redis lost are added again.
   */
  private onReady(): void {
    const { ctx } = this;
    ctx.up = true;
    ctx.cap
      .ensure()
      .catch((error: unknown) => ctx.log(`crew: cluster: setting the provider cap failed: ${text(error)}`));
    if (!ctx.wasDown) return;
    ctx.wasDown = false;
    this.proxies.addAgain();
  }
}
