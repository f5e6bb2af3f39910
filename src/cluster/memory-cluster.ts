import type { Clock } from '../core/clock.js';
import { CrewError, isCrewError, type Refusal } from '../core/errors.js';
import * as refusals from '../core/refusals.js';
import type { RunId, SteerMode } from '../core/types.js';
import type { RunHandle, RunnerEvent } from '../runners/runner.js';
import type { PageOptions, TranscriptPage } from '../transcripts/transcript-store.js';
import {
  type ClusterGateway,
  type ClusterJob,
  type ClusterJobKind,
  type ClusterLink,
  copyIdOf,
  originIdOf,
} from './cluster-link.js';
import { type CapCell, SharedProviderCap } from './shared-provider-cap.js';

/** The cluster's bounds, as `cluster.*` sets them for every gateway. */
export interface MemoryClusterOptions {
  /** `cluster.provider_cap`: how many jobs execute at once across the cluster. */
  providerCap: number;
  maxQueued: number;
  maxQueuedWaveMembers: number;
  clock: Clock;
}

/** A job in the cluster's queue, or executing on `host`. */
interface Entry {
  job: ClusterJob;
  onEvent: (event: RunnerEvent) => void;
  host?: string;
  stopAsked: boolean;
  ended: boolean;
}

/**
 * A cluster in one process: what Redis and BullMQ hold for the Redis link (the queue, the provider cap, the
 * registry), shared by the {@link MemoryClusterLink}s of its gateways. It passes the same conformance suite
 * as the Redis link (test/cluster/cluster-link-conformance.ts) and shares its cap arithmetic
 * ({@link SharedProviderCap}); it has no failure detector (nothing here can die alone) and no transport.
 */
export class MemoryCluster {
  readonly links = new Map<string, MemoryClusterLink>();
  /** Jobs waiting, in order. */
  readonly waiting: Entry[] = [];
  /** Jobs executing anywhere. */
  active = 0;
  /** The shared cap's stored state and the hold it applied (what BullMQ's meta and rate-limit keys hold). */
  capRaw: string | null = null;
  capNow: number;
  holdUntil = 0;

  constructor(readonly options: MemoryClusterOptions) {
    this.capNow = options.providerCap;
  }

  /** A new gateway's link (`bind` it to take jobs). */
  link(gatewayName: string, hostCap: number): MemoryClusterLink {
    const link = new MemoryClusterLink(this, gatewayName, hostCap);
    this.links.set(gatewayName, link);
    return link;
  }

  /** The cap cell the links' shared cap reads and writes (Redis's key, here a field). */
  capCell(): CapCell {
    return {
      read: async () => ({ raw: this.capRaw, running: this.active, now: this.options.clock.now() }),
      swap: async (expected, next, apply) => {
        if (this.capRaw !== expected) return false;
        this.capRaw = next;
        this.capNow = apply.cap;
        if (apply.holdMs > 0)
          this.holdUntil = Math.max(this.holdUntil, this.options.clock.now() + Math.ceil(apply.holdMs));
        this.pumpSoon();
        return true;
      },
    };
  }

  /** Hands waiting jobs to gateways with room, in order, after the current step. */
  pumpSoon(): void {
    queueMicrotask(() => this.pump());
  }

  /**
   * Gateways with room that found every provider slot taken, with when they first did (a sequence number):
   * a freed slot goes to the one waiting longest, not back to the gateway that freed it (the Redis link's
   * rule, docs/decisions.md, fair provider slots). An entry goes when its gateway takes a job or leaves.
   */
  private readonly slotWaiters = new Map<MemoryClusterLink, number>();
  private waitSeq = 0;

  private pump(): void {
    while (this.waiting.length > 0) {
      const withRoom = [...this.links.values()].filter((link) => link.hasRoom());
      for (const link of this.slotWaiters.keys()) if (!withRoom.includes(link)) this.slotWaiters.delete(link);
      if (withRoom.length === 0) return;
      if (this.active >= this.capNow || this.options.clock.now() < this.holdUntil) {
        for (const link of withRoom)
          if (!this.slotWaiters.has(link)) this.slotWaiters.set(link, this.waitSeq++);
        return;
      }
      const since = (link: MemoryClusterLink) => this.slotWaiters.get(link) ?? Number.POSITIVE_INFINITY;
      const taker = withRoom.reduce((best, link) => (since(link) < since(best) ? link : best));
      this.slotWaiters.delete(taker);
      const entry = this.waiting.shift() as Entry;
      this.active++;
      taker.execute(entry);
    }
  }

  /** A job ended on its executing gateway: its slot frees. */
  finished(): void {
    this.active--;
    this.pumpSoon();
  }
}

/** One gateway's {@link ClusterLink} in a {@link MemoryCluster}. */
export class MemoryClusterLink implements ClusterLink {
  readonly proxyRoom: number;
  /** The runs this gateway admitted, until they end (its proxies). */
  private readonly proxies = new Map<RunId, Entry>();
  /** Runs executing here. */
  private readonly executing = new Set<RunId>();
  private readonly sinks = new Map<string, () => void>();
  private readonly cap: SharedProviderCap;
  private gateway: ClusterGateway | undefined;
  private closed = false;

  constructor(
    private readonly cluster: MemoryCluster,
    readonly gatewayName: string,
    private readonly hostCap: number,
  ) {
    const { options } = cluster;
    this.proxyRoom = options.maxQueued + options.maxQueuedWaveMembers + options.providerCap;
    this.cap = new SharedProviderCap(cluster.capCell(), options.providerCap, 'adaptive');
  }

  /** Starts executing jobs for `gateway`, whose relay holds outcomes still owed to `pendingParents`. */
  bind(gateway: ClusterGateway, pendingParents: readonly string[] = []): void {
    this.gateway = gateway;
    for (const parent of pendingParents) {
      const origin = parent.slice('cluster:'.length);
      if (origin) this.ensureSink(origin);
    }
    this.cluster.pumpSoon();
  }

  /** Whether this gateway takes a job now. */
  hasRoom(): boolean {
    return !this.closed && this.gateway !== undefined && this.executing.size < this.hostCap;
  }

  async admit<T>(
    kind: ClusterJobKind,
    members: number,
    admission: () => T,
  ): Promise<T | { refusal: Refusal }> {
    if (this.closed) return { refusal: refusals.clusterUnavailable('not connected') };
    const { options, waiting, active } = this.cluster;
    let single = 0;
    let wave = 0;
    for (const entry of waiting) {
      if (entry.job.kind === 'single') single++;
      else wave++;
    }
    const refusal = boundRefusal(options, kind, members, single, wave, active, this.cluster.capNow);
    if (refusal) return { refusal };
    try {
      return admission();
    } catch (error) {
      return { refusal: refusals.clusterUnavailable(error instanceof Error ? error.message : String(error)) };
    }
  }

  dispatch(job: ClusterJob, onEvent: (event: RunnerEvent) => void): RunHandle {
    const entry: Entry = { job, onEvent, stopAsked: false, ended: false };
    this.proxies.set(job.runId, entry);
    this.cluster.waiting.push(entry);
    this.cluster.pumpSoon();
    return {
      stop: () => this.stop(entry),
      steer: (message, mode) => this.steer(entry, message, mode),
    };
  }

  async page(host: string, runId: RunId, options: PageOptions): Promise<TranscriptPage> {
    if (this.closed) throw new CrewError(refusals.clusterUnavailable('not connected'));
    const gateway = this.cluster.links.get(host)?.boundGateway();
    if (!gateway)
      throw new CrewError(
        refusals.notHere(
          runId,
          host,
          'it has not published itself to the cluster lately (it is down or cut off)',
        ),
      );
    try {
      return await gateway.pageOf(copyIdOf(runId), options);
    } catch (error) {
      if (isCrewError(error)) throw error;
      throw new CrewError(
        refusals.notHere(
          runId,
          host,
          `reading it there failed (${error instanceof Error ? error.message : String(error)})`,
        ),
      );
    }
  }

  providerLimited(runId: RunId, retryAfterMs?: number): void {
    if (this.closed) return;
    void runId;
    this.cap.rateLimited(retryAfterMs).catch(() => undefined);
  }

  providerHoldUntil(): number | undefined {
    const { holdUntil } = this.cap.state;
    return holdUntil > this.cluster.options.clock.now() ? holdUntil : undefined;
  }

  hasGateway(host: string): boolean | undefined {
    return this.cluster.links.get(host)?.boundGateway() !== undefined;
  }

  release(host: string, conversationId: RunId): void {
    this.cluster.links.get(host)?.boundGateway()?.releaseForCluster(conversationId);
  }

  released(origin: string, conversationId: RunId, reason: 'expired' | 'evicted'): void {
    this.cluster.links.get(origin)?.boundGateway()?.releasedElsewhere(conversationId, reason);
  }

  /** Leaves the cluster: its proxies end `cancelled` (the gateway's close cancelled them first). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.cluster.links.delete(this.gatewayName);
    for (const detach of this.sinks.values()) detach();
    this.sinks.clear();
    for (const entry of this.proxies.values()) {
      const at = this.cluster.waiting.indexOf(entry);
      if (at >= 0) this.cluster.waiting.splice(at, 1);
      this.end(entry, { type: 'ended', status: 'cancelled', error: 'the gateway closed' });
    }
    this.proxies.clear();
  }

  /** The gateway this link executes for, while it is in the cluster. */
  boundGateway(): ClusterGateway | undefined {
    return this.closed ? undefined : this.gateway;
  }

  /** Runs a job taken for this gateway: its start and end reach the origin's proxy. */
  execute(entry: Entry): void {
    const gateway = this.gateway as ClusterGateway;
    const { job } = entry;
    entry.host = this.gatewayName;
    this.executing.add(job.runId);
    this.ensureSink(job.origin);
    entry.onEvent({ type: 'started', shared: false, host: this.gatewayName });
    if (entry.stopAsked) gateway.cancel(copyIdOf(job.runId), { kind: 'operator' });
    gateway
      .executeForCluster(job)
      .then(
        (reply) => {
          if (reply.kind === 'refused')
            this.originOf(job)?.end(entry, {
              type: 'ended',
              status: 'failed',
              error: `gateway ${this.gatewayName} could not run it: ${reply.refusal.message}`,
            });
        },
        (error: unknown) =>
          this.originOf(job)?.end(entry, {
            type: 'ended',
            status: 'failed',
            error: `gateway ${this.gatewayName} could not run it: ${error instanceof Error ? error.message : String(error)}`,
          }),
      )
      .finally(() => {
        this.executing.delete(job.runId);
        this.cluster.finished();
      });
  }

  private originOf(job: ClusterJob): MemoryClusterLink | undefined {
    return this.cluster.links.get(job.origin);
  }

  /** The completions of runs executed here for `origin` go to its proxies. */
  private ensureSink(origin: string): void {
    const gateway = this.gateway;
    if (this.sinks.has(origin) || !gateway) return;
    const detach = gateway.attachSink(`cluster:${origin}`, {
      deliver: async (event) => {
        for (const copyId of event.run_ids) {
          const outcome = await gateway.outcomeOf(copyId);
          const link = this.cluster.links.get(origin);
          const entry = link?.proxies.get(originIdOf(copyId));
          if (!outcome || !link || !entry) continue;
          link.end(
            entry,
            {
              type: 'ended',
              status: outcome.status as 'completed',
              ...(outcome.stop !== undefined ? { stop: outcome.stop as 'end_turn' } : {}),
              ...(outcome.error !== undefined ? { error: outcome.error } : {}),
            },
            outcome.text,
          );
        }
      },
    });
    this.sinks.set(origin, detach);
  }

  private stop(entry: Entry): void {
    if (entry.stopAsked || entry.ended) return;
    entry.stopAsked = true;
    if (entry.host !== undefined) {
      this.cluster.links
        .get(entry.host)
        ?.boundGateway()
        ?.cancel(copyIdOf(entry.job.runId), { kind: 'operator' });
      return;
    }
    const at = this.cluster.waiting.indexOf(entry);
    if (at >= 0) this.cluster.waiting.splice(at, 1);
    this.end(entry, { type: 'ended', status: 'cancelled', stop: 'cancelled' });
  }

  private async steer(entry: Entry, message: string, mode: SteerMode): Promise<void> {
    if (entry.host === undefined)
      throw new CrewError(refusals.notSteerable(entry.job.runId, 'waiting in the cluster queue'));
    this.cluster.links
      .get(entry.host)
      ?.boundGateway()
      ?.steer(copyIdOf(entry.job.runId), message, mode, { kind: 'operator' });
  }

  /** Ends a proxy once (a second report is ignored, as the Redis link's origin ignores one). */
  private end(entry: Entry, event: Extract<RunnerEvent, { type: 'ended' }>, text?: string): void {
    if (entry.ended) return;
    entry.ended = true;
    this.proxies.delete(entry.job.runId);
    if (text) entry.onEvent({ type: 'output', text });
    entry.onEvent(event);
  }
}

function boundRefusal(
  options: MemoryClusterOptions,
  kind: ClusterJobKind,
  members: number,
  single: number,
  wave: number,
  active: number,
  providerCap: number,
): Refusal | undefined {
  const { maxQueued, maxQueuedWaveMembers } = options;
  if (kind === 'single') return single >= maxQueued ? refusals.queueFull(single, maxQueued) : undefined;
  const free = Math.max(0, providerCap - active - single - wave);
  const wouldQueue = Math.max(0, members - free);
  return wave + wouldQueue > maxQueuedWaveMembers
    ? refusals.waveQueueFull(members, wouldQueue, wave, maxQueuedWaveMembers)
    : undefined;
}
