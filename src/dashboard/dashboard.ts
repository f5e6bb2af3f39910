import { randomBytes } from 'node:crypto';
import type { ClusterStatus } from '../cluster/cluster-status.js';
import type { Clock, TimerHandle } from '../core/clock.js';
import type { RunSpec } from '../core/types.js';
import type { Gateway, GatewayChange } from '../gateway/gateway.js';
import type { RunView } from '../gateway/run-view.js';
import { CapacityHistory, type CapacityReading } from './capacity-history.js';
import { type DashboardHistory, HistoryFill } from './history-fill.js';
import { LiveFeed } from './live-feed.js';
import { LoginCodes } from './login-codes.js';
import { readRefusals, refusalFromSel } from './refusals-feed.js';
import { type PageOptions, RunIndex, type RunPage, type Tab, tabCounts } from './run-index.js';
import { DashboardSessions } from './sessions.js';

export interface DashboardDeps {
  gateway: Pick<Gateway, 'watch' | 'list'>;
  /** The current views of these runs (a store read); runs gone from the store are left out. */
  viewsOf: (ids: readonly string[]) => RunView[];
  /** `resource_status` now. */
  resources: () => Record<string, unknown>;
  /** The SEL file, read from its tail for the refusals feed. */
  selPath: string;
  clock: Clock;
  /** `dashboard.read_only`: the page shows no actions and sessions may only read. */
  readOnly: boolean;
  /** Runs kept in the read model (`agent.run_history_max`). */
  historyMax: number;
  /** `agent.subagent_max_queued` and `agent.subagent_max_queued_wave_members`, shown beside the queues. */
  queueBounds: { singles: number; waveMembers: number };
  /** How often capacity is compared while a client listens. @default 2000 */
  capacityIntervalMs?: number;
  /** Replay buffer length. @default 2000 */
  replayMax?: number;
  /**
   * Running, queued and the caps now (cheap: the scheduler's counters), sampled into the capacity
   * history from the daemon's start, so the chart has the last hour even on the page's first load.
   */
  capacityReading?: () => CapacityReading;
  /** How often the capacity history samples. @default 5000 */
  capacitySampleMs?: number;
  /** A stored run's spec (for a re-run's arguments); undefined when it is gone from the store. */
  specOf?: (id: string) => RunSpec | undefined;
  /**
   * History a page at a time. With it the first page reads the newest runs and the live ones, and the
   * rest fills in a page per turn; without it the first use reads all of history at once.
   */
  history?: DashboardHistory;
  /** The name an MCP client gave itself, for a parent key that is its session (see `ClientNames`). */
  parentName?: (parent: string) => string | undefined;
  /** Pause between two pages of history while it fills. @default 0 */
  fillIntervalMs?: number;
}

/**
 * The operator dashboard's server side: login codes and sessions, the read model of runs, and the live
 * feed the WebSocket serves. It costs nothing until first used (`activate`, on the first page, API call
 * or socket): then it reads the newest runs and the live ones, follows the gateway's change notices, and
 * fills in the rest of history a page per turn (`HistoryFill`), so the first page costs the page.
 */
export class Dashboard {
  readonly codes: LoginCodes;
  readonly sessions: DashboardSessions;
  readonly feed: LiveFeed;
  readonly index: RunIndex;
  readonly history: CapacityHistory;
  private sampleTimer: TimerHandle | undefined;
  private unwatch: (() => void) | undefined;
  private capacityTimer: TimerHandle | undefined;
  private lastCapacity = '';
  private closed = false;
  /** Runs changed since the last flush, and acks to announce after them. */
  private readonly pending = new Set<string>();
  private pendingAcks: { eventId: string; runIds: string[] }[] = [];
  private flushTimer: TimerHandle | undefined;
  private warmTimer: TimerHandle | undefined;
  private fill: HistoryFill | undefined;
  private fillTimer: TimerHandle | undefined;

  constructor(private readonly deps: DashboardDeps) {
    this.codes = new LoginCodes(deps.clock);
    this.sessions = new DashboardSessions(deps.clock);
    this.feed = new LiveFeed(randomBytes(8).toString('hex'), {
      ...(deps.replayMax !== undefined ? { max: deps.replayMax } : {}),
    });
    this.index = new RunIndex(deps.historyMax);
    this.history = new CapacityHistory(deps.clock);
    if (deps.capacityReading) this.sample();
  }

  /** A stored run's spec, for its re-run. */
  specOf(id: string): RunSpec | undefined {
    return this.deps.specOf?.(id);
  }

  /** Records capacity now, then again each `capacitySampleMs` until close. */
  private sample(): void {
    const read = this.deps.capacityReading;
    if (this.closed || !read) return;
    this.history.record(read());
    this.sampleTimer = this.deps.clock.setTimer(() => {
      this.sampleTimer = undefined;
      this.sample();
    }, this.deps.capacitySampleMs ?? 5000);
  }

  get readOnly(): boolean {
    return this.deps.readOnly;
  }

  get isActive(): boolean {
    return this.unwatch !== undefined;
  }

  /**
   * Loads history into the read model and starts following changes (once); later calls bring the read
   * model up to date with changes not yet flushed, so every read sees what happened before it.
   */
  activate(): void {
    if (this.unwatch) {
      this.flush();
      return;
    }
    if (this.closed) return;
    this.unwatch = this.deps.gateway.watch((change) => this.onChange(change));
    if (this.deps.history) {
      this.fill = new HistoryFill(this.deps.history, this.index, this.deps.historyMax);
      if (!this.fill.start()) this.armFill();
    } else {
      const views = this.deps.gateway.list({ kind: 'operator' }, this.deps.historyMax).runs;
      views.reverse();
      this.index.upsert(views);
    }
    this.lastCapacity = capacityKey(this.capacity());
    this.armCapacity();
  }

  /** Whether the read model holds all of history (not yet while it fills in). */
  get historyComplete(): boolean {
    return this.fill?.complete ?? true;
  }

  /** Reads the rest of history now: for a read that needs all of it (a filter, a sort, a deep page). */
  completeHistory(): void {
    this.activate();
    if (!this.fill || this.fill.complete) return;
    this.fill.finish();
    this.fillDone();
  }

  private armFill(): void {
    if (this.closed) return;
    this.fillTimer = this.deps.clock.setTimer(() => {
      this.fillTimer = undefined;
      if (!this.fill || this.fill.complete) return;
      if (this.fill.step()) this.fillDone();
      else this.armFill();
    }, this.deps.fillIntervalMs ?? 0);
  }

  /** History is all in: pages, counts and notifications read so far were partial, so clients re-read. */
  private fillDone(): void {
    if (this.fillTimer !== undefined) this.deps.clock.clearTimer(this.fillTimer);
    this.fillTimer = undefined;
    this.feed.publish({ type: 'history', complete: true });
  }

  /** Runs per tab: the read model's, or the store's while history fills in. */
  counts(): Record<Tab, number> {
    this.activate();
    if (!this.fill || this.fill.complete || !this.deps.history) return this.index.counts();
    const by = this.deps.history.statusCounts();
    let all = 0;
    for (const n of by.values()) all += n;
    return tabCounts(by, Math.min(all, this.deps.historyMax));
  }

  /**
   * A page of rows. While history fills in, the newest rows of `all` and the `live` tab come from what
   * is read (every live run is); any other page reads the rest of history first.
   */
  page(options: PageOptions = {}): RunPage {
    this.activate();
    const tab = options.tab ?? 'all';
    const plain = tab === 'all' && (options.query ?? '').trim() === '' && options.sort === undefined;
    // Not the oldest row read: it may be a wave whose older members are not read yet.
    const end = (options.offset ?? 0) + (options.limit ?? 50);
    if (!this.historyComplete && !(tab === 'live' || (plain && end < this.index.placedRows))) {
      this.completeHistory();
    }
    const page = this.index.page({ now: this.deps.clock.now(), ...options });
    if (!plain || this.historyComplete) return page;
    // Rows not read yet: counted as one per run (waves and nested runs fold once they are read).
    const unread = Math.max(0, this.counts().all - this.index.size);
    return { ...page, total: page.total + unread };
  }

  /** A run's view: from the read model, or from the store while history fills in. */
  run(id: string): RunView | undefined {
    this.activate();
    const known = this.index.get(id);
    if (known || this.historyComplete) return known;
    return this.deps.viewsOf([id])[0];
  }

  /**
   * Activates on the next turn of the event loop: `crew dashboard` asks for a login code a moment before
   * the browser asks for the page, so the history is loaded by then.
   */
  warm(): void {
    if (this.unwatch || this.closed || this.warmTimer !== undefined) return;
    this.warmTimer = this.deps.clock.setTimer(() => {
      this.warmTimer = undefined;
      this.activate();
    }, 0);
  }

  /**
   * The capacity header: resource status, running top-level and nested apart, queues against bounds; in
   * cluster mode also what binds the cluster's next start (`binds`).
   */
  capacity(): Record<string, unknown> {
    const resources = this.deps.resources();
    const running = this.index.running();
    const queued = this.index.queued();
    const cluster = resources.cluster as ClusterStatus | undefined;
    return {
      ...resources,
      ...(cluster ? { binds: clusterBinds(cluster, this.deps.clock.now()) } : {}),
      running_top_level: resources.running_top_level ?? running.top_level,
      running_nested: resources.running_nested ?? running.nested,
      queued_singles: queued.singles,
      queued_wave_members: queued.wave_members,
      max_queued: this.deps.queueBounds.singles,
      max_queued_wave_members: this.deps.queueBounds.waveMembers,
    };
  }

  /** Everything the page shows at load, and the feed position it is current to. */
  snapshot(options: PageOptions = {}) {
    this.activate();
    const page = this.page(options);
    const notifications = this.index.notifications();
    const refusals = this.refusals(50);
    return {
      ok: true as const,
      epoch: this.feed.epoch,
      seq: this.feed.lastSeq,
      read_only: this.readOnly,
      capacity: this.capacity(),
      counts: this.counts(),
      page,
      notifications,
      parent_names: this.parentNames([
        ...page.rows.map((r) => r.parent),
        ...notifications.items.map((n) => n.parent),
        ...refusals.map((r) => r.parent),
      ]),
      refusals,
    };
  }

  /**
   * The client names of these parents that have one, as [parent, name] pairs (a name is the client's own
   * text: the page shows it as text, never as markup).
   */
  parentNames(parents: Iterable<string>): [string, string][] {
    const out = new Map<string, string>();
    const nameOf = this.deps.parentName;
    if (!nameOf) return [];
    for (const parent of parents) {
      if (out.has(parent)) continue;
      const name = nameOf(parent);
      if (name !== undefined) out.set(parent, name);
    }
    return [...out];
  }

  refusals(limit: number) {
    return readRefusals(this.deps.selPath, limit);
  }

  close(): void {
    this.closed = true;
    if (this.sampleTimer !== undefined) this.deps.clock.clearTimer(this.sampleTimer);
    this.sampleTimer = undefined;
    this.unwatch?.();
    this.unwatch = undefined;
    if (this.capacityTimer !== undefined) this.deps.clock.clearTimer(this.capacityTimer);
    this.capacityTimer = undefined;
    if (this.flushTimer !== undefined) this.deps.clock.clearTimer(this.flushTimer);
    this.flushTimer = undefined;
    if (this.warmTimer !== undefined) this.deps.clock.clearTimer(this.warmTimer);
    this.warmTimer = undefined;
    if (this.fillTimer !== undefined) this.deps.clock.clearTimer(this.fillTimer);
    this.fillTimer = undefined;
  }

  /**
   * Reads the runs changed since the last flush in one store query and publishes them as one `runs`
   * message (then the acks): changes that come together (a wave, a burst of ends) cost one read.
   */
  flush(): void {
    if (this.flushTimer !== undefined) this.deps.clock.clearTimer(this.flushTimer);
    this.flushTimer = undefined;
    if (this.pending.size === 0 && this.pendingAcks.length === 0) return;
    const runs = this.deps.viewsOf([...this.pending]);
    this.pending.clear();
    this.index.upsert(this.fill ? this.fill.admit(runs) : runs);
    if (runs.length > 0) this.feed.publish({ type: 'runs', runs });
    const acks = this.pendingAcks;
    this.pendingAcks = [];
    for (const ack of acks) this.feed.publish({ type: 'ack', event_id: ack.eventId, run_ids: ack.runIds });
  }

  private onChange(change: GatewayChange): void {
    switch (change.kind) {
      case 'runs':
      case 'ack': {
        for (const id of change.runIds) this.pending.add(id);
        if (change.kind === 'ack') this.pendingAcks.push({ eventId: change.eventId, runIds: change.runIds });
        // Bounded: a flood of changes between two turns of the event loop is flushed at once.
        if (this.pending.size >= 5000) this.flush();
        else this.flushTimer ??= this.deps.clock.setTimer(() => this.flush(), 0);
        return;
      }
      case 'refusal': {
        const refusal = refusalFromSel(
          change.outcome,
          change.metadata,
          new Date(this.deps.clock.now()).toISOString(),
        );
        if (refusal) this.feed.publish({ type: 'refusal', refusal });
        return;
      }
    }
  }

  /** Compares capacity now and then while someone listens; a change is one `capacity` message. */
  private armCapacity(): void {
    if (this.closed) return;
    this.capacityTimer = this.deps.clock.setTimer(() => {
      this.capacityTimer = undefined;
      if (this.feed.subscriberCount > 0) {
        const capacity = this.capacity();
        const text = capacityKey(capacity);
        if (text !== this.lastCapacity) {
          this.lastCapacity = text;
          this.feed.publish({ type: 'capacity', capacity });
        }
      }
      this.armCapacity();
    }, this.deps.capacityIntervalMs ?? 2000);
  }
}

/**
 * What holds back the next run the cluster would start (cluster mode's header): `provider_hold` while a
 * 429's hold lasts, `provider_cap` while the cluster runs as many as its provider cap, `host_caps` while
 * every gateway runs at its host cap or is short of memory; null while there is room.
 */
export function clusterBinds(
  cluster: ClusterStatus,
  now: number,
): 'provider_hold' | 'provider_cap' | 'host_caps' | null {
  if (cluster.hold_until && Date.parse(cluster.hold_until) > now) return 'provider_hold';
  if (cluster.running >= cluster.provider_cap) return 'provider_cap';
  const { gateways } = cluster;
  // A gateway short of memory takes no job: it has no room either.
  if (gateways.length > 0 && gateways.every((g) => g.memory_short || g.running >= g.cap)) return 'host_caps';
  return null;
}

/** What counts as a capacity change: not the load average, and memory to a tenth of a GiB. */
function capacityKey(capacity: Record<string, unknown>): string {
  const available = capacity.available_memory_gb;
  return JSON.stringify({
    ...capacity,
    load_average: null,
    available_memory_gb: typeof available === 'number' ? Math.round(available * 10) / 10 : available,
  });
}
