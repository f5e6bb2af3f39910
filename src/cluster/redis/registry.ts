import type { TimerHandle } from '../../core/clock.js';
import { type ClusterStatus, clusterStatusOf, type GatewayEntry, parseEntry } from '../cluster-status.js';
import { aliveOf, RegistryWatch } from '../dead-gateways.js';
import { capView } from '../shared-provider-cap.js';
import type { ClusterContext } from './context.js';
import type { LostRuns } from './lost-runs.js';
import type { ClusterWorker } from './worker.js';

/**
 * The registry: every quarter stalled interval this gateway publishes its entry (cap, runs in hand, at)
 * and reads everyone's, which gives `resource_status`'s cluster view, the shared cap as others changed it,
 * which gateways are alive (so the failure detector can look at the silent ones' runs) and which runs
 * executing here another gateway has reported lost.
 */
export class Registry {
  private snapshot: ClusterStatus;
  /**
   * When a message from each gateway last arrived here (its sender names itself in `host`): a gateway
   * that just joined is heard from before the next registry read lists it. Entries older than three
   * stalled intervals are dropped at each refresh, so the map holds the gateways heard from lately.
   */
  private readonly heardFrom = new Map<string, number>();
  /** Whether this gateway's registry reads have been continuous enough to judge a silent gateway. */
  private readonly watch: RegistryWatch;
  private refreshTimer: TimerHandle | undefined;

  constructor(
    private readonly ctx: ClusterContext,
    private readonly worker: ClusterWorker,
    private readonly lostRuns: LostRuns,
  ) {
    const { options } = ctx;
    this.watch = new RegistryWatch(options.stalledIntervalMs / 2, options.stalledIntervalMs / 2);
    this.snapshot = {
      name: options.name,
      gateway: options.gatewayName,
      available: false,
      provider_cap: options.providerCap,
      running: 0,
      queued: 0,
      gateways: [],
    };
  }

  /** A message from `host` arrived now. */
  heard(host: string): void {
    this.heardFrom.set(host, Date.now());
  }

  /** The cluster as the last refresh saw it (`resource_status`'s `cluster`), with the cap as last seen. */
  status(): ClusterStatus {
    return {
      ...this.snapshot,
      ...capView(this.ctx.cap, Date.now()),
      available: this.ctx.up,
      this_gateway_running: this.worker.executing.size,
    };
  }

  /**
   * Whether `host` has published itself lately: the last refresh's view, else its entry read now (a
   * gateway that joined since that refresh, up to one interval ago, is not in the view yet).
   */
  async isPublished(host: string): Promise<boolean> {
    if (this.snapshot.gateways.some((g) => g.name === host)) return true;
    const raw = await this.ctx.cmd.hget(this.ctx.keys.gateways(), host).catch(() => null);
    const at = raw === null ? undefined : parseEntry(raw)?.at;
    return at !== undefined && Date.now() - at <= 3 * this.ctx.options.stalledIntervalMs;
  }

  hasGateway(host: string): boolean | undefined {
    if (!this.ctx.up || !this.snapshot.available) return undefined;
    // A gateway missing from the last registry read but heard from lately joined since that read.
    return this.snapshot.gateways.some((g) => g.name === host) || this.heardFrom.has(host);
  }

  /** No refresh after this one. */
  stop(): void {
    if (this.refreshTimer !== undefined) this.ctx.options.clock.clearTimer(this.refreshTimer);
    this.refreshTimer = undefined;
  }

  /**
   * Publishes this gateway's entry and reads the cluster's, every quarter stalled interval (50 ms to 1 s),
   * and looks for the runs of gateways silent for a stalled interval (the failure detector).
   */
  refresh(): void {
    const { ctx, worker } = this;
    if (ctx.closed) return;
    worker.followMemory();
    const { options } = ctx;
    const interval = Math.min(1000, Math.max(50, options.stalledIntervalMs / 4));
    const entry: GatewayEntry = {
      cap: options.hostCap,
      running: worker.executing.size,
      // A held slot is published too: the stalled check judges this gateway alive by it. So is a turn
      // waiting here for a slot: the gateway holding its job sees it in hand, not lost.
      runs: [...new Set([...worker.executing, ...worker.held.keys(), ...worker.turnsHere])],
      at: Date.now(),
      ...(worker.pausedForMemory ? { memoryShort: true } : {}),
    };
    const key = ctx.keys.gateways();
    const executing = [...worker.executing];
    const work = ctx.up
      ? Promise.all([
          ctx.cmd.hset(key, ctx.gatewayName, JSON.stringify(entry)),
          ctx.cmd.hgetall(key),
          ctx.cmd.llen(ctx.keys.active()),
          ctx.cmd.llen(ctx.keys.wait()),
          ctx.cmd.get(ctx.keys.cap()),
          executing.length > 0 ? ctx.cmd.mget(...executing.map((id) => ctx.keys.lost(id))) : [],
        ]).then(([, all, running, queued, cap, claims]) => {
          // Another gateway's change of the shared cap shows here within one refresh.
          ctx.cap.observe(cap);
          worker.cancelReportedLost(executing, claims);
          // Any gateway removes the entries of gateways gone for three intervals: the registry stays bounded.
          const stale = Object.entries(all)
            .filter(([, raw]) => Date.now() - (parseEntry(raw)?.at ?? 0) > 3 * options.stalledIntervalMs)
            .map(([gateway]) => gateway);
          if (stale.length > 0) ctx.cmd.hdel(key, ...stale).catch(() => undefined);
          for (const [gateway, heard] of this.heardFrom)
            if (Date.now() - heard > 3 * options.stalledIntervalMs) this.heardFrom.delete(gateway);

          // The failure detector: active jobs of gateways silent for a stalled interval or never heard in
          // the registry, with lapsed locks; judged only from a continuous view.
          const alive = aliveOf(all, ctx.gatewayName, Date.now(), options.stalledIntervalMs);
          if (this.watch.read(Date.now())) this.lostRuns.detect(alive);
          this.snapshot = clusterStatusOf({
            name: options.name,
            gateway: ctx.gatewayName,
            providerCap: options.providerCap,
            running,
            queued,
            entries: all,
            now: Date.now(),
            staleMs: 3 * options.stalledIntervalMs,
          });
        })
      : Promise.resolve();
    work
      .catch(() => undefined)
      .finally(() => {
        if (ctx.closed) return;
        this.refreshTimer = options.clock.setTimer(() => this.refresh(), interval);
      });
  }
}
