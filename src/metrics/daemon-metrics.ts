import type { RunId, RunStatus } from '../core/types.js';
import type { GatewayChange } from '../gateway/gateway.js';
import type { ProviderCall, ProviderCapView } from '../gateway/provider-feed.js';
import type { OutboxEvent, Store } from '../store/store.js';
import type { TranscriptStore } from '../transcripts/transcript-store.js';
import { countingTranscripts, type TranscriptTotals } from './counting-transcripts.js';
import { EventLoopDelay } from './event-loop-delay.js';
import { ProviderCounts } from './provider-counts.js';
import { RunEndCounts } from './run-end-counts.js';

const BYTES_PER_GIB = 1024 ** 3;
/** Pending events read per scrape: past this the count says "at least". */
const PENDING_READ_MAX = 10_000;
const DELAY_QUANTILES = [0.5, 0.9, 0.99] as const;

/** What a scrape reads from the daemon, each at scrape time. */
export interface MetricsSources {
  now(): number;
  counts(): {
    queued: number;
    queuedSingles: number;
    starting: number;
    running: number;
    permitsHeld: number;
  };
  queueLimits: { singles: number; waveMembers: number };
  /** The cap and its terms (`resource_status`). */
  capStatus(): {
    cap: number;
    cap_source: string;
    mem_term: number | null;
    cpu_term: number | null;
    available_memory_gb: number | null;
    cpu_count: number | null;
  };
  providerCaps(): Record<string, ProviderCapView>;
  store: Pick<Store, 'run' | 'outbox'>;
  liveStatus(id: RunId): RunStatus | undefined;
  /** Each sampled run's process-tree RSS now, GiB (the sampler's last tick). */
  treesGb(): Record<string, number>;
  /** `gateway.watch`: the run-end counter subscribes at the first scrape. */
  watch(watcher: (change: GatewayChange) => void): () => void;
}

/** The text a scrape answers with. */
export interface Scrape {
  contentType: string;
  text: string;
}

/**
 * The daemon's Prometheus metrics (issue 32 §2). Provider requests and transcript bytes are counted from
 * start (a hook per request, a sum per run end); prom-client is imported, the registry built, run ends
 * counted and the event loop sampled from the first scrape, so a daemon nobody scrapes pays for nothing
 * more. Every gauge reads its source when scraped.
 */
export class DaemonMetrics {
  readonly runEnds: RunEndCounts;
  private readonly providers = new ProviderCounts();
  private readonly transcriptTotals: TranscriptTotals = { bytes: 0, cut: 0 };
  /** Started with the registry: a daemon nobody scrapes samples nothing. */
  private loop: EventLoopDelay | undefined;
  private registry: Promise<{ metrics(): Promise<string>; contentType: string }> | undefined;
  private unwatch: (() => void) | undefined;

  constructor(private readonly sources: MetricsSources) {
    this.runEnds = new RunEndCounts({ liveStatus: sources.liveStatus, store: sources.store });
  }

  /** For the provider gateway's `onExchange`, beside the gateway's own feed. */
  observeProviderCall(call: Pick<ProviderCall, 'provider' | 'status' | 'tokens'>): void {
    this.providers.observe(call);
  }

  /** The transcript store the gateway writes through, counting bytes as each run's writer closes. */
  transcripts(inner: TranscriptStore): TranscriptStore {
    return countingTranscripts(inner, this.transcriptTotals);
  }

  async scrape(): Promise<Scrape> {
    if (!this.registry) {
      // Any gateway watcher makes every scheduler step collect its changed run ids (~6 µs of CPU per run
      // in bench/observability), so run ends are counted from the first scrape, not from start: a daemon
      // nobody scrapes pays nothing, and a Prometheus counter that starts at the first scrape is still one.
      this.unwatch = this.sources.watch(this.runEnds.watcher);
    }
    this.registry ??= this.buildRegistry();
    const registry = await this.registry;
    return { contentType: registry.contentType, text: await registry.metrics() };
  }

  close(): void {
    this.unwatch?.();
    this.loop?.close();
  }

  private async buildRegistry() {
    const { Counter, Gauge, Registry } = await import('prom-client');
    const registry = new Registry();
    const loop = new EventLoopDelay();
    this.loop = loop;
    const s = this.sources;
    const registers = [registry];
    /** A gauge whose samples are computed at scrape time. */
    const gauge = (
      name: string,
      help: string,
      labelNames: string[],
      fill: (set: (labels: Record<string, string>, value: number) => void) => void,
    ) =>
      new Gauge({
        name,
        help,
        labelNames,
        registers,
        collect() {
          this.reset();
          fill((labels, value) => this.set(labels, value));
        },
      });
    /** A counter kept by Crew (reset on restart, like any process counter), copied in at scrape time. */
    const counter = (
      name: string,
      help: string,
      labelNames: string[],
      fill: (inc: (labels: Record<string, string>, value: number) => void) => void,
    ) =>
      new Counter({
        name,
        help,
        labelNames,
        registers,
        collect() {
          this.reset();
          fill((labels, value) => this.inc(labels, value));
        },
      });

    gauge('crew_runs', 'Live runs by state (nested runs included)', ['state'], (set) => {
      const c = s.counts();
      set({ state: 'queued' }, c.queued);
      set({ state: 'starting' }, c.starting);
      set({ state: 'running' }, c.running);
    });
    gauge('crew_permits_held', 'Top-level runs holding a permit (bounded by crew_cap)', [], (set) =>
      set({}, s.counts().permitsHeld),
    );
    counter(
      'crew_runs_ended_total',
      'Runs ended since the first scrape, by status and error kind (none when it has none)',
      ['status', 'error_kind'],
      (inc) => {
        for (const e of this.runEnds.entries()) inc({ status: e.status, error_kind: e.errorKind }, e.count);
      },
    );
    gauge('crew_queue_depth', 'Queued top-level runs: single spawns and wave members', ['queue'], (set) => {
      const c = s.counts();
      set({ queue: 'single' }, c.queuedSingles);
      set({ queue: 'wave_member' }, c.queued - c.queuedSingles);
    });
    gauge(
      'crew_queue_limit',
      'Queue bounds (agent.subagent_max_queued, agent.subagent_max_queued_wave_members)',
      ['queue'],
      (set) => {
        set({ queue: 'single' }, s.queueLimits.singles);
        set({ queue: 'wave_member' }, s.queueLimits.waveMembers);
      },
    );
    gauge('crew_cap', 'The concurrent-run cap (top-level permits)', [], (set) => set({}, s.capStatus().cap));
    gauge('crew_cap_info', 'Where the cap came from: auto, pinned or fallback (value 1)', ['source'], (set) =>
      set({ source: s.capStatus().cap_source }, 1),
    );
    gauge('crew_cap_term', "The cap's terms sized at start: memory and CPU", ['term'], (set) => {
      const status = s.capStatus();
      if (status.mem_term !== null) set({ term: 'memory' }, status.mem_term);
      if (status.cpu_term !== null) set({ term: 'cpu' }, status.cpu_term);
    });
    gauge(
      'crew_host_memory_available_bytes',
      'Available memory now (min of MemAvailable and cgroup headroom)',
      [],
      (set) => {
        const gb = s.capStatus().available_memory_gb;
        if (gb !== null) set({}, Math.round(gb * BYTES_PER_GIB));
      },
    );
    gauge('crew_host_cpus', 'CPUs the cap counts (affinity and cgroup quota)', [], (set) => {
      const cpus = s.capStatus().cpu_count;
      if (cpus !== null) set({}, cpus);
    });
    gauge(
      'crew_provider_cap',
      'Runs started against each provider at once (configured or adaptive)',
      ['provider'],
      (set) => {
        for (const [provider, view] of Object.entries(s.providerCaps())) set({ provider }, view.cap);
      },
    );
    gauge('crew_provider_running', 'Runs against each provider now', ['provider'], (set) => {
      for (const [provider, view] of Object.entries(s.providerCaps())) set({ provider }, view.running);
    });
    gauge(
      'crew_provider_held',
      '1 while a rate limit holds starts against the provider',
      ['provider'],
      (set) => {
        const now = s.now();
        for (const [provider, view] of Object.entries(s.providerCaps()))
          set({ provider }, view.hold_until !== null && Date.parse(view.hold_until) > now ? 1 : 0);
      },
    );
    counter(
      'crew_provider_requests_total',
      'Model requests through the provider gateway, by provider and HTTP status',
      ['provider', 'status'],
      (inc) => {
        for (const [key, n] of this.providers.requests) {
          const [provider = '', status = ''] = key.split('\0');
          inc({ provider, status }, n);
        }
      },
    );
    counter(
      'crew_provider_rate_limited_total',
      'Provider answers that lower the provider cap: 429, 529 and 503',
      ['provider'],
      (inc) => {
        for (const [provider, n] of this.providers.rateLimited) inc({ provider }, n);
      },
    );
    counter(
      'crew_provider_tokens_total',
      'Tokens (input + output) through the provider gateway',
      ['provider'],
      (inc) => {
        for (const [provider, n] of this.providers.tokens) inc({ provider }, n);
      },
    );
    const pending = (): OutboxEvent[] => s.store.outbox({ state: 'pending', limit: PENDING_READ_MAX });
    gauge(
      'crew_delivery_pending_events',
      `Completion events not yet delivered (read up to ${PENDING_READ_MAX})`,
      [],
      (set) => set({}, pending().length),
    );
    gauge(
      'crew_delivery_oldest_pending_age_seconds',
      'Age of the oldest undelivered completion event (0 when none): the delivery lag',
      [],
      (set) => {
        const events = pending();
        const oldest = Math.min(...events.map((e) => e.createdAt));
        set({}, events.length === 0 ? 0 : Math.max(0, (s.now() - oldest) / 1000));
      },
    );
    counter(
      'crew_transcript_bytes_total',
      'Transcript bytes received by ended runs (cut output included)',
      [],
      (inc) => inc({}, this.transcriptTotals.bytes),
    );
    counter('crew_transcripts_cut_total', 'Transcripts cut at agent.transcript_max_bytes', [], (inc) =>
      inc({}, this.transcriptTotals.cut),
    );
    gauge('crew_process_trees', "Runs' process trees the sampler saw at its last tick", [], (set) =>
      set({}, Object.keys(s.treesGb()).length),
    );
    gauge(
      'crew_process_tree_rss_bytes',
      "Resident memory of all runs' process trees at the last tick",
      [],
      (set) =>
        set({}, Math.round(Object.values(s.treesGb()).reduce((sum, gb) => sum + gb, 0) * BYTES_PER_GIB)),
    );
    // One reading per scrape feeds the three delay series (it resets the histogram).
    let lastDelay: ReturnType<EventLoopDelay['takeSeconds']> | undefined;
    gauge(
      'crew_event_loop_delay_seconds',
      'Event-loop delay since the previous scrape, by quantile',
      ['quantile'],
      (set) => {
        lastDelay = loop.takeSeconds(DELAY_QUANTILES);
        for (const [q, seconds] of lastDelay.quantiles) set({ quantile: String(q) }, seconds);
      },
    );
    gauge(
      'crew_event_loop_delay_max_seconds',
      'Longest event-loop delay since the previous scrape',
      [],
      (set) => set({}, lastDelay?.maxSeconds ?? 0),
    );
    gauge(
      'crew_event_loop_delay_samples',
      'Event-loop delay samples since the previous scrape (every 20 ms)',
      [],
      (set) => set({}, lastDelay?.samples ?? 0),
    );
    gauge('crew_process_resident_memory_bytes', "The daemon's own resident memory", [], (set) =>
      set({}, process.memoryUsage.rss()),
    );
    return registry;
  }
}
