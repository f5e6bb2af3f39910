import { type Job, Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { Clock, TimerHandle } from '../core/clock.js';
import { CrewError, isCrewError, type Refusal } from '../core/errors.js';
import * as refusals from '../core/refusals.js';
import type { SchedulerReply } from '../core/scheduler-types.js';
import { assertNever, type RunId, type SteerMode } from '../core/types.js';
import type { RunHandle, RunnerEvent } from '../runners/runner.js';
import type { PageOptions, TranscriptPage } from '../transcripts/transcript-store.js';
import {
  type ClusterJob,
  type ClusterJobKind,
  type ClusterLink,
  copyIdOf,
  originIdOf,
} from './cluster-link.js';
import { type ClusterMessage, pageOptionsOf, parseMessage, toFields } from './cluster-message.js';
import { type ClusterStatus, clusterStatusOf, type GatewayEntry, parseEntry } from './cluster-status.js';
import {
  aliveOf,
  LAPSED_JOBS_SCRIPT,
  listingsOf,
  REPORT_LOST_SCRIPT,
  RegistryWatch,
} from './dead-gateways.js';
import { HOLD_MARK, LIMITER_WINDOW_MS, RedisCapCell } from './redis-cap-cell.js';
import { capView, SharedProviderCap } from './shared-provider-cap.js';

/** Completed / failed jobs BullMQ keeps (for inspection); older ones are removed. */
export const KEEP_FINISHED_JOBS = 1000;
/** Each gateway's outcome and command streams are trimmed to about this many entries. */
export const STREAM_MAX_LEN = 10_000;
/** The copy of a transcript an outcome carries to the origin; the whole stays on the executing host. */
export const OUTCOME_TEXT_MAX_CHARS = 256 * 1024;
/** How long admission waits for the cluster's admission lock before answering `cluster_unavailable`. */
const ADMIT_LOCK_WAIT_MS = 10_000;
const ADMIT_LOCK_TTL_MS = 5000;
/** Admissions one turn of the lock takes at most: far below its TTL even on a loaded host. */
const ADMISSIONS_PER_TURN = 64;
/** The longest one step of closing waits for Redis. */
const CLOSE_STEP_MS = 2000;
/** How long `spawn_status` waits for the executing gateway's page before answering `not_here`. */
export const PAGE_WAIT_MS = 5000;
/** A page answer rests in Redis this long at most (the asker takes it at once, or gave up). */
const PAGE_TTL_MS = 30_000;
/** The mark a forwarded turn's end leaves for the gateway holding its slot, at least this long. */
const TURN_KEY_TTL_MS = 60_000;
/** Looks in a row that find the session's gateway alive but not running a forwarded turn before it is `lost`. */
const TURN_MISSES = 2;
/** A forwarded turn's end mark when it ran (otherwise the mark is why it did not). */
const TURN_RAN = 'ended';
/**
 * A run's claim to have been reported lost lasts at least this long (and ten stalled intervals): past any
 * later finding of the same run (BullMQ's stalled check comes at most about five intervals after a death).
 */
const LOST_CLAIM_TTL_MS = 60_000;

/** What the coordinator drives on its own gateway (the executing side). */
export interface ClusterGateway {
  executeForCluster(job: ClusterJob): Promise<SchedulerReply>;
  attachSink(parent: string, sink: { deliver(event: { run_ids: string[] }): Promise<void> }): () => void;
  cancel(id: RunId, scope: { kind: 'operator' }): { ok: boolean };
  steer(id: RunId, message: string, mode: SteerMode, scope: { kind: 'operator' }): { ok: boolean };
  /** A run's status as this gateway holds it now (undefined for an unknown run). */
  statusOf(id: RunId): string | undefined;
  /** A run's status and bounded text as this gateway holds it (for the outcome sent to the origin). */
  outcomeOf(id: RunId): Promise<{ status: string; stop?: string; error?: string; text: string } | undefined>;
  /** A page of a run's transcript as this gateway holds it (throws its refusal as a CrewError). */
  pageOf(id: RunId, options: PageOptions): Promise<TranscriptPage>;
  /** Releases the session this gateway holds for kept conversation `conversationId` (an origin's id). */
  releaseForCluster(conversationId: RunId): void;
  /**
   * The gateway holding the session of this gateway's kept conversation `conversationId` released it
   * (its reaper): released here too, with a notice to its parent, unless it is busy or already released.
   */
  releasedElsewhere(conversationId: RunId, reason: 'expired' | 'evicted'): void;
}

interface PageWait {
  resolve: (raw: string | null) => void;
  timer: TimerHandle;
}

export interface RedisClusterOptions {
  url: string;
  /** `cluster.name`: the namespace (BullMQ prefix `crew`, queue `<name>`). */
  name: string;
  gatewayName: string;
  /** This host's cap (DESIGN §5): the worker's concurrency. */
  hostCap: number;
  /**
   * `cluster.provider_cap`: BullMQ's global concurrency; with `adaptiveCap` the start value and ceiling of
   * the shared adaptive cap.
   */
  providerCap: number;
  /**
   * Whether the cluster's cap adapts to the provider (`providers.enabled` and `providers.adaptive_cap`):
   * one value in Redis that every gateway's 429s cut and clean completions raise. Either way a 429 holds
   * the cluster's starts for its retry-after. @default false
   */
  adaptiveCap?: boolean;
  stalledIntervalMs: number;
  maxQueued: number;
  maxQueuedWaveMembers: number;
  clock: Clock;
  log: (line: string) => void;
  /**
   * Whether this host's memory is below the per-spawn minimum (`agent.spawn_min_memory_gb`). While it is,
   * the worker takes no new job (it pauses; the jobs in hand go on), so the other gateways take them.
   * @default never
   */
  memoryCritical?: () => boolean;
}

interface Proxy {
  job: ClusterJob;
  onEvent: (event: RunnerEvent) => void;
  /** The gateway executing it, once it said `started`. */
  host?: string;
  stopAsked: boolean;
  /** Added to the queue (a Redis that restarted empty loses it: added again while not started). */
  added: boolean;
}

/** An admission waiting for its gateway's turn of the cluster's admission lock. */
interface WaitingAdmission {
  kind: ClusterJobKind;
  members: number;
  admission: () => unknown;
  /** Answers the admission's caller: its answer, or `{ refusal }`. */
  resolve: (answer: unknown) => void;
}

/** Counts waiting jobs by kind (the job name), the active ones and the cap now (0 = none set), in one step. */
const COUNT_SCRIPT = `
local ids = redis.call('LRANGE', KEYS[1], 0, -1)
local single, wave = 0, 0
for _, id in ipairs(ids) do
  local name = redis.call('HGET', ARGV[1] .. id, 'name')
  if name == 'single' then single = single + 1 elseif name == 'wave' then wave = wave + 1 end
end
return {single, wave, redis.call('LLEN', KEYS[2]), tonumber(redis.call('HGET', KEYS[3], 'concurrency') or '0')}`;

const UNLOCK_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

/**
 * Cluster mode on BullMQ 6 and Redis (docs/decisions.md, cluster mode): the {@link ClusterLink} of one
 * gateway. Its queue `<name>` holds every top-level run admitted anywhere (job id = run id), its worker
 * executes up to the host cap of them here, and BullMQ's global concurrency holds the cluster to the
 * provider cap. Outcomes go back to each run's origin through the origin's outcome stream; cancel and steer
 * reach the executing gateway through its command stream.
 */
export class RedisCluster implements ClusterLink {
  readonly gatewayName: string;
  readonly proxyRoom: number;
  private readonly prefix = 'crew';
  private readonly ns: string;
  /** Commands: fail fast while Redis is away (admission refuses rather than waits). */
  private readonly cmd: Redis;
  /** Blocking reads of this gateway's two streams. */
  private readonly reader: Redis;
  private readonly queueConn: Redis;
  private readonly workerConn: Redis;
  private readonly queue: Queue;
  private worker: Worker | undefined;
  private gateway: ClusterGateway | undefined;
  private readonly proxies = new Map<RunId, Proxy>();
  /** Jobs dispatched and not yet handed to the queue (flushed together). */
  private pending: Proxy[] = [];
  private flushing: Promise<void> | undefined;
  /** Runs this gateway executes for the cluster now (the worker's active jobs). */
  private readonly executing = new Set<RunId>();
  /** Those of them the provider answered 429 / 529 / 503: their completion does not raise the cap. */
  private readonly limited = new Set<RunId>();
  /** Those of them cancelled here because another gateway reported them lost (each cancelled once). */
  private readonly cancelledLost = new Set<RunId>();
  /** The cluster's provider cap, shared through Redis (docs/decisions.md, the shared provider cap). */
  private readonly cap: SharedProviderCap;
  private readonly sinks = new Map<string, () => void>();
  private up = false;
  private wasDown = false;
  private closed = false;
  /** The gateway is closing: its proxies end at once when stopped. */
  private closing = false;
  /** The worker is paused because this host's memory is critical (`memoryCritical`). */
  private pausedForMemory = false;
  private readLoop: Promise<void> | undefined;
  private refreshTimer: TimerHandle | undefined;
  private snapshot: ClusterStatus;
  private lastOut = '0-0';
  private lastCmd = '0-0';
  /** Admissions waiting for this gateway's next turn of the admission lock, in order. */
  private readonly waitingAdmissions: WaitingAdmission[] = [];
  private admitting: Promise<void> | undefined;
  /** Outcomes sent straight from a job as this gateway closes (close waits for them, bounded). */
  private readonly closingSends = new Set<Promise<unknown>>();
  /**
   * Continuation jobs this gateway's worker took for a conversation whose session is on another gateway:
   * the slot is held here while that gateway runs the turn; resolved by its `turn_ended` (or its absence).
   * An entry lives as long as its job; close settles them all.
   */
  private readonly held = new Map<RunId, (error: string | undefined) => void>();
  /**
   * Turns another gateway's worker took for a session kept here, waiting for a slot or running: they
   * count against this host's cap as the worker's own jobs do, so the worker takes that many fewer.
   */
  private readonly turnsHere = new Set<RunId>();
  /** Runs waiting for a slot under the host cap, in order; each is woken when a run here ends. */
  private slotWaiters: Array<() => void> = [];
  /** `spawn_status` calls waiting for another gateway's page, by request id (each ends by its timer). */
  private readonly pageWaits = new Map<string, PageWait>();
  /**
   * When a message from each gateway last arrived here (its sender names itself in `host`): a gateway
   * that just joined is heard from before the next registry read lists it. Entries older than three
   * stalled intervals are dropped at each refresh, so the map holds the gateways heard from lately.
   */
  private readonly heardFrom = new Map<string, number>();
  private pageSeq = 0;
  /** Page requests written before this (ms, Redis time) are stale: their asker gave up long ago. */
  private readonly readSince = Date.now() - PAGE_TTL_MS;
  /** Whether this gateway's registry reads have been continuous enough to judge a silent gateway. */
  private readonly watch: RegistryWatch;
  /** The failure detector's look at silent gateways' runs, while one is under way (one at a time). */
  private detecting: Promise<void> | undefined;

  constructor(private readonly options: RedisClusterOptions) {
    this.gatewayName = options.gatewayName;
    this.ns = `${this.prefix}:${options.name}`;
    this.watch = new RegistryWatch(options.stalledIntervalMs / 2, options.stalledIntervalMs / 2);
    // Runs live here as proxies: queued cluster-wide (both bounds) or executing anywhere (provider cap).
    this.proxyRoom = options.maxQueued + options.maxQueuedWaveMembers + options.providerCap;
    this.snapshot = {
      name: options.name,
      gateway: options.gatewayName,
      available: false,
      provider_cap: options.providerCap,
      running: 0,
      queued: 0,
      gateways: [],
    };
    const connectionName = `crew:${options.gatewayName}`;
    this.cmd = new Redis(options.url, { connectionName, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    this.reader = new Redis(options.url, { connectionName, maxRetriesPerRequest: null });
    this.queueConn = new Redis(options.url, { connectionName, maxRetriesPerRequest: null });
    this.workerConn = new Redis(options.url, { connectionName, maxRetriesPerRequest: null });
    for (const client of [this.cmd, this.reader, this.queueConn, this.workerConn]) {
      // A Redis that goes away is expected (reconnects follow); the admission path reports it.
      client.on('error', () => undefined);
    }
    this.cmd.on('ready', () => this.onReady());
    this.cmd.on('close', () => {
      if (this.up) this.wasDown = true;
      this.up = false;
    });
    this.queue = new Queue(options.name, { connection: this.queueConn, prefix: this.prefix });
    this.queue.on('error', () => undefined);
    const keys = this.queue.keys;
    this.cap = new SharedProviderCap(
      new RedisCapCell(this.cmd, {
        state: this.capKey(),
        active: keys.active as string,
        meta: keys.meta as string,
        limiter: keys.limiter as string,
        marker: keys.marker as string,
      }),
      options.providerCap,
      options.adaptiveCap ? 'adaptive' : 'configured',
    );
  }

  /** Starts executing jobs for `gateway` and reading this gateway's streams. */
  bind(gateway: ClusterGateway, pendingParents: readonly string[] = []): void {
    this.gateway = gateway;
    for (const parent of pendingParents) {
      const origin = parent.slice('cluster:'.length);
      if (origin) this.ensureSink(origin);
    }
    const interval = this.options.stalledIntervalMs;
    this.worker = new Worker(this.options.name, (job) => this.execute(job), {
      connection: this.workerConn,
      prefix: this.prefix,
      concurrency: this.options.hostCap,
      stalledInterval: interval,
      lockDuration: interval,
      maxStalledCount: 0,
      removeOnComplete: { count: KEEP_FINISHED_JOBS },
      removeOnFail: { count: KEEP_FINISHED_JOBS },
      name: this.gatewayName,
      // Only so BullMQ honours the cluster's hold (the rate-limit key): no window ever counts this many starts.
      limiter: { max: HOLD_MARK, duration: LIMITER_WINDOW_MS },
    });
    this.worker.on('error', () => undefined);
    this.worker.on('stalled', (jobId) => {
      this.onStalled(jobId).catch((error: unknown) =>
        this.options.log(`crew: cluster: reporting stalled job ${jobId} failed: ${text(error)}`),
      );
    });
    this.followMemory();
    this.readLoop = this.readStreams();
    this.refresh();
  }

  /**
   * Pauses the worker while this host's memory is critical and resumes it once it is not, so a gateway
   * short of memory takes no cluster job another gateway could run (checked at every refresh). A fetch
   * already waiting for a job when the pause comes may still take that one (BullMQ does not look again);
   * the reservation gate then holds its copy here.
   */
  private followMemory(): void {
    const critical = this.options.memoryCritical?.() ?? false;
    if (!this.worker || this.closing || this.closed || critical === this.pausedForMemory) return;
    this.pausedForMemory = critical;
    if (critical) {
      this.options.log(
        'crew: cluster: host memory is critical; this gateway takes no cluster job until it recovers',
      );
      this.worker.pause(true).catch(() => undefined);
    } else {
      this.options.log('crew: cluster: host memory recovered; this gateway takes cluster jobs again');
      this.worker.resume().catch(() => undefined);
    }
  }

  // ── the origin side ──────────────────────────────────────────────────────────────────────────

  async admit<T>(
    kind: ClusterJobKind,
    members: number,
    admission: () => T,
  ): Promise<T | { refusal: Refusal }> {
    if (this.closed || !this.up) return { refusal: refusals.clusterUnavailable('not connected') };
    // Admissions that arrive while this gateway waits for or holds the cluster's lock share its next turn:
    // one lock, one count and one add for all of them (docs/decisions.md, cluster mode polish).
    return new Promise((resolve) => {
      this.waitingAdmissions.push({
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
      while (this.waitingAdmissions.length > 0) await this.admitTurn();
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
    let batch: WaitingAdmission[] = [];
    const answers = new Map<WaitingAdmission, unknown>();
    let token: string | undefined;
    try {
      if (this.closed || !this.up) throw new Error('not connected');
      token = await this.lock();
      if (token === undefined) throw new Error('the admission lock stayed busy');
      batch = this.waitingAdmissions.splice(0, ADMISSIONS_PER_TURN);
      let [single, wave, active, cap] = (await this.cmd.eval(
        COUNT_SCRIPT,
        3,
        `${this.ns}:wait`,
        `${this.ns}:active`,
        this.queue.keys.meta as string,
        `${this.ns}:`,
      )) as [number, number, number, number];
      cap ||= this.options.providerCap;
      for (const waiting of batch) {
        const refusal = this.boundRefusal(waiting.kind, waiting.members, single, wave, active, cap);
        if (refusal) {
          answers.set(waiting, { refusal });
          continue;
        }
        const before = this.pending.length;
        try {
          answers.set(waiting, waiting.admission());
        } catch (error) {
          answers.set(waiting, { refusal: refusals.clusterUnavailable(text(error)) });
        }
        // Its jobs wait in the queue for the admissions after it in this turn.
        for (const proxy of this.pending.slice(before)) {
          if (proxy.job.kind === 'single') single++;
          else wave++;
        }
      }
      await this.flush();
    } catch (error) {
      if (batch.length === 0) batch = this.waitingAdmissions.splice(0);
      for (const waiting of batch)
        if (!answers.has(waiting))
          answers.set(waiting, { refusal: refusals.clusterUnavailable(text(error)) });
    } finally {
      if (token !== undefined)
        this.cmd.eval(UNLOCK_SCRIPT, 1, `${this.ns}:admit`, token).catch(() => undefined);
      for (const waiting of batch) waiting.resolve(answers.get(waiting));
    }
  }

  dispatch(job: ClusterJob, onEvent: (event: RunnerEvent) => void): RunHandle {
    const proxy: Proxy = { job, onEvent, stopAsked: false, added: false };
    this.proxies.set(job.runId, proxy);
    this.pending.push(proxy);
    queueMicrotask(() => {
      this.flush().catch(() => undefined);
    });
    return {
      stop: () => this.stopProxy(proxy),
      steer: (message, mode) => this.steerProxy(proxy, message, mode),
    };
  }

  async page(host: string, runId: RunId, options: PageOptions): Promise<TranscriptPage> {
    if (this.closed || !this.up) throw new CrewError(refusals.clusterUnavailable('not connected'));
    if (!(await this.isPublished(host)))
      throw new CrewError(
        refusals.notHere(
          runId,
          host,
          'it has not published itself to the cluster lately (it is down or cut off)',
        ),
      );
    const requestId = `${this.gatewayName}:${process.pid}:${++this.pageSeq}`;
    const answer = new Promise<string | null>((resolve) => {
      const timer = this.options.clock.setTimer(() => {
        this.pageWaits.delete(requestId);
        resolve(null);
      }, PAGE_WAIT_MS);
      this.pageWaits.set(requestId, { resolve, timer });
    });
    try {
      await this.xadd(this.cmdKey(host), {
        type: 'page',
        runId,
        requestId,
        replyTo: this.gatewayName,
        options: JSON.stringify(options),
      });
    } catch (error) {
      this.settlePage(requestId, null);
      throw new CrewError(refusals.clusterUnavailable(text(error)));
    }
    const raw = await answer;
    if (raw === null)
      throw new CrewError(refusals.notHere(runId, host, `it did not answer within ${PAGE_WAIT_MS / 1000} s`));
    const body = JSON.parse(raw) as { page?: TranscriptPage; refusal?: Refusal };
    if (body.page) return body.page;
    throw new CrewError(body.refusal ?? refusals.notHere(runId, host, 'its answer was empty'));
  }

  /** The cluster as the last refresh saw it (`resource_status`'s `cluster`), with the cap as last seen. */
  status(): ClusterStatus {
    return {
      ...this.snapshot,
      ...capView(this.cap, Date.now()),
      available: this.up,
      this_gateway_running: this.executing.size,
    };
  }

  /** Until when the provider holds the cluster's starts, as this gateway last read or wrote the cap. */
  providerHoldUntil(): number | undefined {
    const { holdUntil } = this.cap.state;
    return holdUntil > Date.now() ? holdUntil : undefined;
  }

  /**
   * Whether `host` has published itself lately: the last refresh's view, else its entry read now (a
   * gateway that joined since that refresh, up to one interval ago, is not in the view yet).
   */
  private async isPublished(host: string): Promise<boolean> {
    if (this.snapshot.gateways.some((g) => g.name === host)) return true;
    const raw = await this.cmd.hget(`${this.ns}:gateways`, host).catch(() => null);
    const at = raw === null ? undefined : parseEntry(raw)?.at;
    return at !== undefined && Date.now() - at <= 3 * this.options.stalledIntervalMs;
  }

  hasGateway(host: string): boolean | undefined {
    if (!this.up || !this.snapshot.available) return undefined;
    // A gateway missing from the last registry read but heard from lately joined since that read.
    return this.snapshot.gateways.some((g) => g.name === host) || this.heardFrom.has(host);
  }

  release(host: string, conversationId: RunId): void {
    this.command(host, { type: 'release', runId: conversationId });
  }

  released(origin: string, conversationId: RunId, reason: 'expired' | 'evicted'): void {
    this.xadd(this.outKey(origin), { type: 'released', runId: conversationId, reason }).catch(
      (error: unknown) =>
        this.options.log(
          `crew: cluster: telling ${origin} of released ${conversationId} failed: ${text(error)}`,
        ),
    );
  }

  /**
   * The provider answered 429 / 529 / 503 to a run this gateway executes for the cluster (or to a run
   * nested under it): the shared cap drops and the whole cluster's starts are held for the retry-after.
   */
  providerLimited(runId: RunId, retryAfterMs?: number): void {
    if (this.closed) return;
    // Still executing: its completion will not count as clean. (A 429 reported just after the run ended
    // still cuts the cap.)
    if (this.executing.has(runId)) this.limited.add(runId);
    this.cap.rateLimited(retryAfterMs).then(
      (state) => {
        if (!state)
          this.options.log('crew: cluster: the provider cap stayed contended; this 429 was not applied');
      },
      (error: unknown) =>
        this.options.log(`crew: cluster: applying a 429 to the provider cap failed: ${text(error)}`),
    );
  }

  /** The worker takes no new job (the gateway is closing); jobs it holds finish as their runs end. */
  async stopTaking(): Promise<void> {
    this.closing = true;
    if (this.worker) await bounded(this.worker.pause(true), CLOSE_STEP_MS);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Runs waiting for a slot give up: the gateway is closing.
    for (const wake of this.slotWaiters.splice(0)) wake();
    if (this.refreshTimer !== undefined) this.options.clock.clearTimer(this.refreshTimer);
    this.refreshTimer = undefined;
    for (const detach of this.sinks.values()) detach();
    this.sinks.clear();
    await bounded(Promise.allSettled([...this.closingSends]), CLOSE_STEP_MS);
    // A look for a silent gateway's runs under way stops at its next run; its Redis calls end first.
    if (this.detecting) await bounded(this.detecting, CLOSE_STEP_MS);
    // BullMQ's closes wait for Redis; a Redis that is away must not hold the gateway's exit.
    if (this.worker) await bounded(this.worker.close(true), CLOSE_STEP_MS);
    await bounded(this.queue.close(), CLOSE_STEP_MS);
    // A close that could not finish leaves BullMQ's own (blocking) connection retrying: cut it.
    if (this.worker) await bounded(this.worker.disconnect(), CLOSE_STEP_MS);
    await bounded(this.queue.disconnect(), CLOSE_STEP_MS);
    if (this.up) await bounded(this.cmd.hdel(`${this.ns}:gateways`, this.gatewayName), CLOSE_STEP_MS);
    for (const client of [this.cmd, this.reader, this.queueConn, this.workerConn]) client.disconnect();
    if (this.readLoop) await bounded(this.readLoop, CLOSE_STEP_MS);
    for (const requestId of [...this.pageWaits.keys()]) this.settlePage(requestId, null);
    for (const settle of [...this.held.values()]) settle('the gateway holding its slot closed');
    this.held.clear();
    // Proxies still live end with the gateway (its close cancels them first); none may wait for ever.
    for (const proxy of this.proxies.values()) {
      proxy.onEvent({ type: 'ended', status: 'cancelled', error: 'the gateway closed' });
    }
    this.proxies.clear();
  }

  private boundRefusal(
    kind: ClusterJobKind,
    members: number,
    single: number,
    wave: number,
    active: number,
    providerCap: number,
  ): Refusal | undefined {
    const { maxQueued, maxQueuedWaveMembers } = this.options;
    if (kind === 'single') return single >= maxQueued ? refusals.queueFull(single, maxQueued) : undefined;
    const free = Math.max(0, providerCap - active - single - wave);
    const wouldQueue = Math.max(0, members - free);
    return wave + wouldQueue > maxQueuedWaveMembers
      ? refusals.waveQueueFull(members, wouldQueue, wave, maxQueuedWaveMembers)
      : undefined;
  }

  private async lock(): Promise<string | undefined> {
    const token = `${this.gatewayName}:${Math.random().toString(36).slice(2)}`;
    const deadline = Date.now() + ADMIT_LOCK_WAIT_MS;
    for (;;) {
      const ok = await this.cmd.set(`${this.ns}:admit`, token, 'PX', ADMIT_LOCK_TTL_MS, 'NX');
      if (ok === 'OK') return token;
      if (Date.now() > deadline) return undefined;
      await new Promise((r) => setTimeout(r, 2));
    }
  }

  /** Hands every dispatched job to the queue; jobs that could not be added wait for Redis to return. */
  private flush(): Promise<void> {
    if (this.flushing) return this.flushing.then(() => this.flush());
    const batch = this.pending.filter((p) => !p.added && this.proxies.get(p.job.runId) === p);
    this.pending = [];
    if (batch.length === 0) return Promise.resolve();
    this.flushing = this.queue
      .addBulk(
        batch.map((p) => ({
          name: p.job.kind,
          data: p.job,
          opts: {
            jobId: p.job.runId,
            removeOnComplete: { count: KEEP_FINISHED_JOBS },
            removeOnFail: { count: KEEP_FINISHED_JOBS },
          },
        })),
      )
      .then(() => {
        for (const p of batch) p.added = true;
      })
      .catch((error: unknown) => {
        this.options.log(
          `crew: cluster: adding ${batch.length} jobs failed (${text(error)}); retried when Redis returns`,
        );
      })
      .finally(() => {
        this.flushing = undefined;
      });
    return this.flushing;
  }

  private stopProxy(proxy: Proxy): void {
    if (proxy.stopAsked) return;
    proxy.stopAsked = true;
    if (proxy.host !== undefined) {
      this.command(proxy.host, { type: 'cancel', runId: proxy.job.runId });
      // A closing gateway does not wait for the executing one (Redis may be away): its proxy ends now.
      if (this.closing)
        this.endProxy(proxy.job.runId, { type: 'ended', status: 'cancelled', stop: 'cancelled' });
      return;
    }
    if (this.closing) {
      this.queue.remove(proxy.job.runId).catch(() => undefined);
      this.endProxy(proxy.job.runId, { type: 'ended', status: 'cancelled', stop: 'cancelled' });
      return;
    }
    // Still waiting: take it out of the queue. A job a worker took meanwhile is cancelled when it says so.
    this.queue
      .remove(proxy.job.runId)
      .then((removed) => {
        if (removed === 1 || !proxy.added)
          this.endProxy(proxy.job.runId, { type: 'ended', status: 'cancelled', stop: 'cancelled' });
      })
      .catch(() => {
        if (!proxy.added)
          this.endProxy(proxy.job.runId, { type: 'ended', status: 'cancelled', stop: 'cancelled' });
      });
  }

  private async steerProxy(proxy: Proxy, message: string, mode: SteerMode): Promise<void> {
    if (proxy.host === undefined)
      throw new Error('the run has not started on a gateway yet; steer it once it runs');
    await this.xadd(this.cmdKey(proxy.host), { type: 'steer', runId: proxy.job.runId, message, mode });
  }

  private endProxy(runId: RunId, event: Extract<RunnerEvent, { type: 'ended' }>, text?: string): void {
    const proxy = this.proxies.get(runId);
    if (!proxy) return;
    this.proxies.delete(runId);
    if (text) proxy.onEvent({ type: 'output', text });
    proxy.onEvent(event);
  }

  private settlePage(requestId: string, raw: string | null): void {
    const wait = this.pageWaits.get(requestId);
    if (!wait) return;
    this.pageWaits.delete(requestId);
    this.options.clock.clearTimer(wait.timer);
    wait.resolve(raw);
  }

  private onMessage(message: ClusterMessage, at: number): void {
    if (message.type === 'started' || message.type === 'ended') this.heardFrom.set(message.host, Date.now());
    switch (message.type) {
      case 'started': {
        const proxy = this.proxies.get(message.runId);
        if (!proxy || proxy.host !== undefined) return;
        proxy.host = message.host;
        proxy.onEvent({ type: 'started', shared: false, host: message.host });
        if (proxy.stopAsked) this.command(message.host, { type: 'cancel', runId: message.runId });
        return;
      }
      case 'ended':
        this.endProxy(
          message.runId,
          {
            type: 'ended',
            status: message.status,
            ...(message.stop !== undefined ? { stop: message.stop } : {}),
            ...(message.error !== undefined ? { error: message.error } : {}),
          },
          message.text,
        );
        return;
      case 'cancel':
        this.gateway?.cancel(copyIdOf(message.runId), { kind: 'operator' });
        return;
      case 'steer':
        this.gateway?.steer(copyIdOf(message.runId), message.message, message.mode, { kind: 'operator' });
        return;
      case 'page':
        if (at < this.readSince) return;
        this.answerPage(message).catch((error: unknown) =>
          this.options.log(
            `crew: cluster: answering ${message.replyTo}'s page request failed: ${text(error)}`,
          ),
        );
        return;
      case 'turn':
        if (at < this.readSince) return;
        this.runTurn(message).catch((error: unknown) =>
          this.options.log(
            `crew: cluster: running ${message.replyTo}'s turn ${message.runId} failed: ${text(error)}`,
          ),
        );
        return;
      case 'turn_ended':
        this.held.get(message.runId)?.(message.error);
        return;
      case 'release':
        this.gateway?.releaseForCluster(message.runId);
        return;
      case 'released':
        this.gateway?.releasedElsewhere(message.runId, message.reason);
        return;
      case 'paged': {
        const key = this.pageKey(message.requestId);
        // Taken whether or not someone still waits: the answer never rests longer than it must.
        this.cmd
          .getdel(key)
          .then((raw) => this.settlePage(message.requestId, raw))
          .catch(() => this.settlePage(message.requestId, null));
        return;
      }
      default:
        assertNever(message);
    }
  }

  // ── the executing side ───────────────────────────────────────────────────────────────────────

  /** Reads the page an origin asked for from this gateway's copy of the run and hands it back. */
  private async answerPage(message: Extract<ClusterMessage, { type: 'page' }>): Promise<void> {
    const gateway = this.gateway;
    if (!gateway) return;
    let body: { page: TranscriptPage } | { refusal: Refusal };
    try {
      body = { page: await gateway.pageOf(copyIdOf(message.runId), pageOptionsOf(message.options)) };
    } catch (error) {
      body = {
        refusal: isCrewError(error)
          ? error.refusal
          : refusals.notHere(message.runId, this.gatewayName, `reading it there failed (${text(error)})`),
      };
    }
    await this.cmd.set(this.pageKey(message.requestId), JSON.stringify(body), 'PX', PAGE_TTL_MS);
    await this.xadd(this.outKey(message.replyTo), {
      type: 'paged',
      runId: message.runId,
      requestId: message.requestId,
    });
  }

  private execute(job: Job): Promise<string> {
    const data = job.data as ClusterJob;
    return data.host !== undefined && data.host !== this.gatewayName
      ? this.forward(data, data.host)
      : this.runHere(data);
  }

  /** Runs a job's run (a copy, or a continuation in a session kept here) on this gateway until it ends. */
  private async runHere(data: ClusterJob): Promise<string> {
    const gateway = this.gateway;
    if (!gateway || this.closed) throw new Error('the gateway is closing');
    await this.slotUnderHostCap();
    if (this.closed) throw new Error('the gateway is closing');
    this.executing.add(data.runId);
    try {
      this.ensureSink(data.origin);
      // Not awaited: the copy need not wait a round trip to start, and its end goes out on the same
      // connection after this (Redis keeps one connection's commands in order).
      this.xadd(this.outKey(data.origin), {
        type: 'started',
        runId: data.runId,
        host: this.gatewayName,
      }).catch(() => undefined);
      const reply = await gateway.executeForCluster(data);
      if (reply.kind !== 'refused' && this.closing) {
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
          await this.cap
            .cleanCompletion()
            .catch((error: unknown) =>
              this.options.log(`crew: cluster: raising the provider cap failed: ${text(error)}`),
            );
      }
      if (reply.kind === 'refused') {
        await this.xadd(this.outKey(data.origin), {
          type: 'ended',
          runId: data.runId,
          status: 'failed',
          error: `gateway ${this.gatewayName} could not run it: ${reply.refusal.message}`,
          host: this.gatewayName,
          text: '',
        });
      }
      return this.gatewayName;
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
    while (this.executing.size >= this.options.hostCap && !this.closed)
      await new Promise<void>((resolve) => this.slotWaiters.push(resolve));
  }

  /** The worker's concurrency: the host cap less the turns forwarded here (BullMQ's floor is one). */
  private fitWorker(): void {
    if (this.worker) this.worker.concurrency = Math.max(1, this.options.hostCap - this.turnsHere.size);
  }

  /** The completions of runs executed here for `origin` go to its outcome stream (retried while Redis is away). */
  private ensureSink(origin: string): void {
    if (this.sinks.has(origin) || !this.gateway) return;
    const gateway = this.gateway;
    const detach = gateway.attachSink(`cluster:${origin}`, {
      deliver: async (event) => {
        for (const copyId of event.run_ids) await this.sendOutcome(origin, copyId);
      },
    });
    this.sinks.set(origin, detach);
  }

  /** Sends how a copy this gateway executed ended (with a bounded transcript) to its origin. */
  private async sendOutcome(origin: string, copyId: RunId): Promise<void> {
    const outcome = await this.gateway?.outcomeOf(copyId);
    if (!outcome) return;
    await this.xadd(this.outKey(origin), {
      type: 'ended',
      runId: originIdOf(copyId),
      status: outcome.status as 'completed',
      ...(outcome.stop !== undefined ? { stop: outcome.stop as 'end_turn' } : {}),
      ...(outcome.error !== undefined ? { error: outcome.error } : {}),
      host: this.gatewayName,
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
    const interval = this.options.stalledIntervalMs;
    const ended = new Promise<string | undefined>((resolve) => this.held.set(data.runId, resolve));
    let end: { status: 'failed' | 'lost'; error: string } | undefined;
    try {
      if ((await this.turnState(host, data.runId)).state === 'gone') {
        end = {
          status: 'failed',
          error: `gateway ${host}, which held this conversation's session, is not in the cluster (found by ${this.gatewayName}); start a new conversation`,
        };
        return this.gatewayName;
      }
      await this.xadd(this.cmdKey(host), { type: 'turn', runId: data.runId, replyTo: this.gatewayName });
      for (let misses = 0; ; ) {
        const outcome = await within(ended, interval, this.options.clock);
        if (outcome !== TIMED_OUT) {
          if (outcome !== undefined && !this.closed) end = { status: 'failed', error: outcome };
          return this.gatewayName;
        }
        if (this.closed) return this.gatewayName;
        const { state, error } = await this.turnState(host, data.runId);
        if (state === 'ended') {
          if (error !== undefined) end = { status: 'failed', error };
          return this.gatewayName;
        }
        misses = state === 'running' ? 0 : misses + 1;
        if (state === 'gone' || misses >= TURN_MISSES) {
          end = {
            status: 'lost',
            error: `gateway ${host}, which holds this conversation's session, ${state === 'gone' ? 'stopped answering' : 'is not running this turn'} (found by ${this.gatewayName}); it is presumed lost`,
          };
          return this.gatewayName;
        }
      }
    } finally {
      this.held.delete(data.runId);
      if (end)
        await this.xadd(this.outKey(data.origin), {
          type: 'ended',
          runId: data.runId,
          ...end,
          host: this.gatewayName,
          text: '',
        }).catch(() => undefined);
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
    const [mark, raw] = await Promise.all([
      this.cmd.get(this.turnKey(runId)),
      this.cmd.hget(`${this.ns}:gateways`, host),
    ]);
    if (mark !== null) return mark === TURN_RAN ? { state: 'ended' } : { state: 'ended', error: mark };
    const entry = raw ? parseEntry(raw) : undefined;
    if (!entry || Date.now() - (entry.at ?? 0) > this.options.stalledIntervalMs) return { state: 'gone' };
    return { state: entry.runs?.includes(runId) ? 'running' : 'absent' };
  }

  /**
   * The executing side of a forwarded turn: runs the continuation job here (its data read from the queue),
   * then marks its end (a key that expires) and tells the gateway holding the slot.
   */
  private async runTurn(message: Extract<ClusterMessage, { type: 'turn' }>): Promise<void> {
    const job = await this.queue.getJob(message.runId);
    const data = job?.data as ClusterJob | undefined;
    // A second request for a turn already running here (a stream read again) is answered by the first.
    if (data && (this.executing.has(data.runId) || this.turnsHere.has(data.runId))) return;
    let error: string | undefined;
    if (!data || data.host !== this.gatewayName) {
      error = `gateway ${this.gatewayName} has no continuation ${message.runId} to run (its job is gone)`;
    } else {
      this.turnsHere.add(data.runId);
      this.fitWorker();
      try {
        await this.runHere(data);
      } catch (failure) {
        error = `gateway ${this.gatewayName} could not run it: ${text(failure)}`;
      } finally {
        this.turnsHere.delete(data.runId);
        this.fitWorker();
      }
    }
    await this.cmd.set(
      this.turnKey(message.runId),
      error ?? TURN_RAN,
      'PX',
      Math.max(TURN_KEY_TTL_MS, 4 * this.options.stalledIntervalMs),
    );
    await this.xadd(this.outKey(message.replyTo), {
      type: 'turn_ended',
      runId: message.runId,
      ...(error !== undefined ? { error } : {}),
    });
  }

  /**
   * A job whose lock expired: its gateway died, or only stalled for a moment (a busy event loop renews
   * late). BullMQ's stalled check is the backstop behind the registry's failure detector
   * ({@link detectLost}), which usually reported it already. The registry decides: while a gateway still
   * publishes that it executes (or holds) the run, it is kept (its end reaches the origin as usual);
   * otherwise the origin ends the run `lost`, once (the report is claimed in Redis, whoever makes it).
   */
  private async onStalled(jobId: string): Promise<void> {
    const job = await this.queue.getJob(jobId);
    const data = job?.data as ClusterJob | undefined;
    if (!job || !data) return;
    // BullMQ's `pb`, unless a worker took the job since (to fail it): then a stale entry's gateway, below.
    let holder = (job as { processedBy?: string }).processedBy;
    const interval = this.options.stalledIntervalMs;
    for (let look = 0; look < 8 && !this.closed; look++) {
      const all = await this.cmd.hgetall(`${this.ns}:gateways`);
      const { fresh, stale } = listingsOf(all, data.runId, Date.now(), interval);
      holder = stale[0] ?? holder;
      if (!fresh) break;
      // Still published as running: look again later; a gateway that keeps publishing it is alive.
      if (look === 7) return;
      await new Promise((r) => setTimeout(r, interval / 4));
    }
    if (this.closed) return;
    await this.reportLost(data, holder, 'stalled');
  }

  /**
   * The failure detector (docs/decisions.md, dead-gateway detection in cluster mode): for each silent
   * gateway, reports lost the active jobs it holds whose locks have lapsed (BullMQ agrees it is gone). A
   * gateway still renewing its locks keeps its runs, however late its entry. Each run is reported once
   * across the cluster; later looks find its claim and pass.
   */
  private async detectLost(alive: readonly string[]): Promise<void> {
    const found = (await this.cmd.eval(
      LAPSED_JOBS_SCRIPT,
      1,
      this.queue.keys.active as string,
      this.queue.toKey(''),
      this.lostKey(''),
      ...alive,
    )) as string[];
    for (let i = 0; i + 2 < found.length && !this.closed; i += 3) {
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
    const jobKey = this.queue.toKey(data.runId);
    const message: ClusterMessage = {
      type: 'ended',
      runId: data.runId,
      status: 'lost',
      error: `gateway ${holder ?? '?'} executing it stopped renewing its lock and answering (found by ${this.gatewayName}); it is presumed dead`,
      host: this.gatewayName,
      text: '',
    };
    // 0 when the run was reported already, or (`silent`) its gateway still holds it: nothing to do either way.
    await this.cmd.eval(
      REPORT_LOST_SCRIPT,
      5,
      this.lostKey(data.runId),
      this.outKey(data.origin),
      jobKey,
      `${jobKey}:lock`,
      this.queue.keys.active as string,
      finding === 'silent' ? (holder ?? '') : '',
      `${this.gatewayName} ${finding}`,
      Math.max(LOST_CLAIM_TTL_MS, 10 * this.options.stalledIntervalMs),
      STREAM_MAX_LEN,
      data.runId,
      ...toFields(message),
    );
  }

  // ── streams, registry, reconnects ────────────────────────────────────────────────────────────

  private async readStreams(): Promise<void> {
    const out = this.outKey(this.gatewayName);
    const cmd = this.cmdKey(this.gatewayName);
    while (!this.closed) {
      try {
        const answer = (await this.reader.xread(
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
        if (this.closed) return;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }

  private command(host: string, message: ClusterMessage): void {
    this.xadd(this.cmdKey(host), message).catch((error: unknown) =>
      this.options.log(`crew: cluster: sending ${message.type} to ${host} failed: ${text(error)}`),
    );
  }

  private xadd(key: string, message: ClusterMessage): Promise<unknown> {
    return this.cmd.xadd(key, 'MAXLEN', '~', STREAM_MAX_LEN, '*', ...toFields(message));
  }

  private outKey(gateway: string): string {
    return `${this.ns}:gw:${gateway}:out`;
  }

  private pageKey(requestId: string): string {
    return `${this.ns}:page:${requestId}`;
  }

  /**
   * Runs executing here that another gateway has reported lost (this gateway's event loop stalled past the
   * stalled interval and it was taken for dead): their origins have ended them, so what they would still
   * produce reaches no one. They are cancelled here rather than left to run on.
   */
  private cancelReportedLost(runIds: readonly RunId[], claims: readonly (string | null)[]): void {
    for (const [i, runId] of runIds.entries()) {
      const claim = claims[i];
      if (claim == null || !this.executing.has(runId) || this.cancelledLost.has(runId)) continue;
      this.cancelledLost.add(runId);
      this.options.log(
        `crew: cluster: run ${runId} executing here was reported lost (${claim}); cancelling it`,
      );
      this.gateway?.cancel(copyIdOf(runId), { kind: 'operator' });
    }
  }

  /** The claim that run `runId` was reported lost (so it is reported once). */
  private lostKey(runId: RunId): string {
    return `${this.ns}:lost:${runId}`;
  }

  private turnKey(runId: RunId): string {
    return `${this.ns}:turn:${runId}`;
  }

  private cmdKey(gateway: string): string {
    return `${this.ns}:gw:${gateway}:cmd`;
  }

  /** The shared provider cap's state (one key for the cluster). */
  private capKey(): string {
    return `${this.ns}:provider-cap`;
  }

  /**
   * Redis answers (again): the shared provider cap is created if missing and applied to the queue, and
   * jobs a restarted (empty) Redis lost are added again.
   */
  private onReady(): void {
    this.up = true;
    this.cap
      .ensure()
      .catch((error: unknown) =>
        this.options.log(`crew: cluster: setting the provider cap failed: ${text(error)}`),
      );
    if (!this.wasDown) return;
    this.wasDown = false;
    for (const proxy of this.proxies.values()) {
      if (proxy.host === undefined) {
        proxy.added = false;
        this.pending.push(proxy);
      }
    }
    this.flush().catch(() => undefined);
  }

  /**
   * Publishes this gateway's entry and reads the cluster's, every quarter stalled interval (50 ms to 1 s),
   * and looks for the runs of gateways silent for a stalled interval (the failure detector).
   */
  private refresh(): void {
    if (this.closed) return;
    this.followMemory();
    const interval = Math.min(1000, Math.max(50, this.options.stalledIntervalMs / 4));
    const entry: GatewayEntry = {
      cap: this.options.hostCap,
      running: this.executing.size,
      // A held slot is published too: the stalled check judges this gateway alive by it. So is a turn
      // waiting here for a slot: the gateway holding its job sees it in hand, not lost.
      runs: [...new Set([...this.executing, ...this.held.keys(), ...this.turnsHere])],
      at: Date.now(),
      ...(this.pausedForMemory ? { memoryShort: true } : {}),
    };
    const key = `${this.ns}:gateways`;
    const executing = [...this.executing];
    const work = this.up
      ? Promise.all([
          this.cmd.hset(key, this.gatewayName, JSON.stringify(entry)),
          this.cmd.hgetall(key),
          this.cmd.llen(`${this.ns}:active`),
          this.cmd.llen(`${this.ns}:wait`),
          this.cmd.get(this.capKey()),
          executing.length > 0 ? this.cmd.mget(...executing.map((id) => this.lostKey(id))) : [],
        ]).then(([, all, running, queued, cap, claims]) => {
          // Another gateway's change of the shared cap shows here within one refresh.
          this.cap.observe(cap);
          this.cancelReportedLost(executing, claims);
          // Any gateway removes the entries of gateways gone for three intervals: the registry stays bounded.
          const stale = Object.entries(all)
            .filter(([, raw]) => Date.now() - (parseEntry(raw)?.at ?? 0) > 3 * this.options.stalledIntervalMs)
            .map(([gateway]) => gateway);
          if (stale.length > 0) this.cmd.hdel(key, ...stale).catch(() => undefined);
          for (const [gateway, heard] of this.heardFrom)
            if (Date.now() - heard > 3 * this.options.stalledIntervalMs) this.heardFrom.delete(gateway);

          // The failure detector: active jobs of gateways silent for a stalled interval or never heard in
          // the registry, with lapsed locks; judged only from a continuous view.
          const alive = aliveOf(all, this.gatewayName, Date.now(), this.options.stalledIntervalMs);
          if (this.watch.read(Date.now()) && this.detecting === undefined) {
            this.detecting = this.detectLost(alive)
              .catch((error: unknown) =>
                this.options.log(`crew: cluster: looking for a silent gateway's runs failed: ${text(error)}`),
              )
              .finally(() => {
                this.detecting = undefined;
              });
          }
          this.snapshot = clusterStatusOf({
            name: this.options.name,
            gateway: this.gatewayName,
            providerCap: this.options.providerCap,
            running,
            queued,
            entries: all,
            now: Date.now(),
            staleMs: 3 * this.options.stalledIntervalMs,
          });
        })
      : Promise.resolve();
    work
      .catch(() => undefined)
      .finally(() => {
        if (this.closed) return;
        this.refreshTimer = this.options.clock.setTimer(() => this.refresh(), interval);
      });
  }
}

/** A job's data as BullMQ stores it (JSON), or undefined if it is not a cluster job's. */
function parseJob(raw: string): ClusterJob | undefined {
  try {
    const data = JSON.parse(raw) as ClusterJob;
    return typeof data?.runId === 'string' && typeof data.origin === 'string' ? data : undefined;
  } catch {
    return undefined;
  }
}

function text(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

const TIMED_OUT = Symbol('timed out');

/** `work`'s value, or {@link TIMED_OUT} after `ms` on `clock` (the timer is cleared either way). */
async function within<T>(work: Promise<T>, ms: number, clock: Clock): Promise<T | typeof TIMED_OUT> {
  let timer: TimerHandle | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<typeof TIMED_OUT>((resolve) => {
        timer = clock.setTimer(() => resolve(TIMED_OUT), ms);
      }),
    ]);
  } finally {
    if (timer !== undefined) clock.clearTimer(timer);
  }
}

/** Waits for `work` at most `ms` (its failure is ignored): closing must finish with Redis away. */
async function bounded(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    work.catch(() => undefined),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]);
  clearTimeout(timer);
}
