import { type Job, type Processor, Worker, type WorkerOptions } from 'bullmq';
import { luaScript } from './lua-scripts.js';

/** The one command the turns need (an ioredis client has it; this file imports no Redis package). */
interface EvalClient {
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
}

/**
 * How long (s) an idle worker blocks on the queue's marker before it asks again (BullMQ's `drainDelay`):
 * a waiting gateway renews its place at least this often.
 */
export const DRAIN_DELAY_S = 2;
/**
 * A waiter's place lapses this long after its last ask: three missed asks, so a gateway that died or
 * stopped asking while waiting holds no one up for longer.
 */
export const WAITER_LEASE_MS = 3 * DRAIN_DELAY_S * 1000;

/** The Redis keys the turns read and write: the waiters, their leases, and BullMQ's own. */
export interface SlotTurnKeys {
  waiters: string;
  leases: string;
  active: string;
  wait: string;
  meta: string;
  marker: string;
  /** The registry (gateway name → entry): every gateway's worker is woken while some wait. */
  gateways: string;
}

/**
 * Whose turn a freed provider slot is (docs/decisions.md, fair provider slots): the cluster's waiters in
 * Redis, ordered by when each gateway first asked for a slot and found none (scripts `lua/slot-ask.lua`,
 * `lua/slot-taken.lua`, `lua/slot-freed.lua`). BullMQ's global concurrency still holds the cap; this only
 * decides which gateway asks BullMQ first.
 */
export class SlotTurns {
  constructor(
    /** The worker's own connection: an ask waits out a Redis restart as BullMQ's take beside it does. */
    private readonly client: EvalClient,
    private readonly keys: SlotTurnKeys,
    private readonly gatewayName: string,
    /** A connection that fails at once while Redis is away: leaving must not hold up a close. */
    private readonly quick: EvalClient = client,
  ) {}

  /**
   * Whether this gateway may take a slot now (fewer waiters ahead of it than free slots); else it waits.
   * `waiting`: it is among the waiters (its place goes once BullMQ gives it a job).
   */
  async ask(): Promise<{ granted: boolean; waiting: boolean }> {
    const { waiters, leases, active, meta } = this.keys;
    const answer = await this.client.eval(
      luaScript('slot-ask'),
      4,
      waiters,
      leases,
      active,
      meta,
      this.gatewayName,
      WAITER_LEASE_MS,
    );
    return { granted: answer === 1 || answer === 2, waiting: answer !== 1 };
  }

  /** After asking BullMQ: served (`took`) it leaves the waiters; not served while jobs wait, it waits. */
  async taken(took: boolean, client: EvalClient = this.client): Promise<void> {
    const { waiters, leases, wait } = this.keys;
    await client.eval(
      luaScript('slot-taken'),
      3,
      waiters,
      leases,
      wait,
      this.gatewayName,
      took ? 1 : 0,
      WAITER_LEASE_MS,
    );
  }

  /** A job ended here: while jobs wait, blocked workers (every gateway's while some wait) look at once. */
  async freed(): Promise<void> {
    const { waiters, wait, marker, gateways } = this.keys;
    await this.client.eval(luaScript('slot-freed'), 4, waiters, wait, marker, gateways);
  }

  /** This gateway stops asking (paused, closing): it leaves the waiters rather than hold them up. */
  async leave(): Promise<void> {
    await this.taken(true, this.quick);
  }
}

/**
 * BullMQ's worker, asking {@link SlotTurns} before each take. BullMQ grants a slot inside its own scripts
 * (`moveToActive`, and `moveToFinished`, which hands the worker that just freed a slot the next job in the
 * same step), so a gateway that frees slots with a deep queue kept them while another's worker slept on
 * the marker. Here every take goes through `moveToActive` (no fetch-next on completion), which asks first,
 * and a completion wakes the waiters. Overrides BullMQ's protected `moveToActive` and public `processJob`.
 */
export class FairWorker extends Worker {
  private turns: SlotTurns | undefined;

  constructor(name: string, processor: Processor, opts: WorkerOptions, turns: SlotTurns) {
    // Started below, once `turns` is set (autorun would start the loop inside `super`).
    super(name, processor, { ...opts, autorun: false, drainDelay: DRAIN_DELAY_S });
    this.turns = turns;
    this.run().catch((error: unknown) => this.emit('error', error as Error));
  }

  protected override async moveToActive(token: string, name?: string): Promise<Job> {
    const turns = this.turns as SlotTurns;
    // Refused: no job, as when the queue is empty; the worker blocks on the marker until woken or its
    // drain delay passes, and asks again.
    const { granted, waiting } = await turns.ask();
    if (!granted) return this.nextJobFromJobData(undefined, undefined, token);
    const job = await super.moveToActive(token, name);
    // Served and not a waiter: nothing to record (the common case costs one round trip, the ask).
    if (job !== undefined && !waiting) return job;
    // The job is this worker's now: a failure to record it must not make BullMQ fetch again (the place
    // then lapses with its lease).
    await turns.taken(job !== undefined).catch((error: unknown) => this.emit('error', error as Error));
    return job;
  }

  override async processJob(job: Job, token: string, _fetchNext?: () => boolean): Promise<Job | undefined> {
    // Never fetch-next: the next take asks its turn like any other.
    const next = (await super.processJob(job, token, () => false)) ?? undefined;
    await this.turns?.freed().catch((error: unknown) => this.emit('error', error as Error));
    return next;
  }
}
