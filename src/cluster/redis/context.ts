import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { Clock, TimerHandle } from '../../core/clock.js';
import type { ClusterGateway, ClusterJob } from '../cluster-link.js';

export type { ClusterGateway } from '../cluster-link.js';

import { type ClusterMessage, toFields } from '../cluster-message.js';
import { SharedProviderCap } from '../shared-provider-cap.js';
import { ClusterKeys } from './keys.js';
import { RedisCapCell } from './redis-cap-cell.js';

/** Completed / failed jobs BullMQ keeps (for inspection); older ones are removed. */
export const KEEP_FINISHED_JOBS = 1000;
/** Each gateway's outcome and command streams are trimmed to about this many entries. */
export const STREAM_MAX_LEN = 10_000;
/** The longest one step of closing waits for Redis. */
export const CLOSE_STEP_MS = 2000;

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

/**
 * What every part of one gateway's cluster link shares (made first, so the parts import it and not each
 * other): the options, the keys, the four Redis connections, the BullMQ queue, the shared provider cap,
 * the gateway once bound, and whether Redis answers and the link is closing.
 */
export class ClusterContext {
  readonly prefix = 'crew';
  readonly gatewayName: string;
  readonly keys: ClusterKeys;
  /** Commands: fail fast while Redis is away (admission refuses rather than waits). */
  readonly cmd: Redis;
  /** Blocking reads of this gateway's two streams. */
  readonly reader: Redis;
  readonly queueConn: Redis;
  readonly workerConn: Redis;
  readonly queue: Queue;
  /** The cluster's provider cap, shared through Redis (docs/decisions.md, the shared provider cap). */
  readonly cap: SharedProviderCap;
  gateway: ClusterGateway | undefined;
  /** Redis answers on the command connection. */
  up = false;
  /** Redis went away since it last answered (jobs a restarted, empty Redis lost are added again). */
  wasDown = false;
  closed = false;
  /** The gateway is closing: its proxies end at once when stopped. */
  closing = false;

  constructor(readonly options: RedisClusterOptions) {
    this.gatewayName = options.gatewayName;
    this.keys = new ClusterKeys(this.prefix, options.name);
    const connectionName = `crew:${options.gatewayName}`;
    this.cmd = new Redis(options.url, { connectionName, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    this.reader = new Redis(options.url, { connectionName, maxRetriesPerRequest: null });
    this.queueConn = new Redis(options.url, { connectionName, maxRetriesPerRequest: null });
    this.workerConn = new Redis(options.url, { connectionName, maxRetriesPerRequest: null });
    for (const client of this.connections()) {
      // A Redis that goes away is expected (reconnects follow); the admission path reports it.
      client.on('error', () => undefined);
    }
    this.cmd.on('close', () => {
      if (this.up) this.wasDown = true;
      this.up = false;
    });
    this.queue = new Queue(options.name, { connection: this.queueConn, prefix: this.prefix });
    this.queue.on('error', () => undefined);
    const keys = this.queue.keys;
    this.cap = new SharedProviderCap(
      new RedisCapCell(this.cmd, {
        state: this.keys.cap(),
        active: keys.active as string,
        meta: keys.meta as string,
        limiter: keys.limiter as string,
        marker: keys.marker as string,
      }),
      options.providerCap,
      options.adaptiveCap ? 'adaptive' : 'configured',
    );
  }

  connections(): Redis[] {
    return [this.cmd, this.reader, this.queueConn, this.workerConn];
  }

  log(line: string): void {
    this.options.log(line);
  }

  /** Appends `message` to a stream, trimmed to about {@link STREAM_MAX_LEN} entries. */
  xadd(key: string, message: ClusterMessage): Promise<unknown> {
    return this.cmd.xadd(key, 'MAXLEN', '~', STREAM_MAX_LEN, '*', ...toFields(message));
  }

  /** Sends a command to the gateway `host` (its failure is logged). */
  command(host: string, message: ClusterMessage): void {
    this.xadd(this.keys.cmd(host), message).catch((error: unknown) =>
      this.log(`crew: cluster: sending ${message.type} to ${host} failed: ${text(error)}`),
    );
  }
}

export function text(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A job's data as BullMQ stores it (JSON), or undefined if it is not a cluster job's. */
export function parseJob(raw: string): ClusterJob | undefined {
  try {
    const data = JSON.parse(raw) as ClusterJob;
    return typeof data?.runId === 'string' && typeof data.origin === 'string' ? data : undefined;
  } catch {
    return undefined;
  }
}

export const TIMED_OUT = Symbol('timed out');

/** `work`'s value, or {@link TIMED_OUT} after `ms` on `clock` (the timer is cleared either way). */
export async function within<T>(work: Promise<T>, ms: number, clock: Clock): Promise<T | typeof TIMED_OUT> {
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
export async function bounded(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    work.catch(() => undefined),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]);
  clearTimeout(timer);
}
