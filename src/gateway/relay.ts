import type { Clock, TimerHandle } from '../core/clock.js';
import { MinHeap } from '../core/min-heap.js';
import type { ParentKey } from '../core/types.js';
import type { OutboxEvent, Store, StoreTx } from '../store/store.js';
import type { DeliveredEvent, Sink } from './sink.js';

export type { DeliveredEvent, Sink } from './sink.js';

export interface RelayOptions {
  clock: Clock;
  store: Store;
  epoch: number;
  render: (event: OutboxEvent) => Promise<string>;
  /** From the event's creation to `undeliverable`. */
  deliveryTimeoutMs: number;
  /** One push attempt's bound (`CREW_INJECTION_TIMEOUT`, clamped to the delivery timeout). */
  attemptTimeoutMs: number;
  onUndeliverable?: (event: OutboxEvent) => void;
  /** An event settled (delivered or undeliverable): the reaper's clock for its transcripts starts. */
  onSettled?: (runIds: string[], at: number) => void;
  /**
   * At `close`, how long a push already handed to its sink may still finish and be settled; past it the
   * event stays pending for the next start (sinks deduplicate by event id). @default 2000
   */
  closeGraceMs?: number;
}

interface Waiter {
  parent: ParentKey;
  resolve: (events: DeliveredEvent[]) => void;
  timer: TimerHandle;
  /** Events are claimed and being rendered for this waiter: it answers with them, even past its timeout. */
  busy: boolean;
  done: boolean;
}

const MAX_BACKOFF_MS = 60_000;
const DEFAULT_CLOSE_GRACE_MS = 2000;
const SETTLE_RETRY_MS = 1000;

/**
 * The outbox relay: every event the store holds as `pending` is handed to its parent exactly once —
 * taken by a waiting `spawn_wait`, or pushed to an attached sink with retries and backoff — or, when
 * the delivery timeout passes first, marked `undeliverable` (logged, visible, never dropped).
 */
export class Relay {
  private readonly sinks = new Map<ParentKey, Sink>();
  private readonly waiters = new Map<ParentKey, Set<Waiter>>();
  /** Events claimed by an attempt in progress: nobody else may take them meanwhile. */
  private readonly inFlight = new Set<string>();
  /**
   * Settles the store refused (a full disk): the events were handed over, so they count as settled
   * here and are never handed over again; the writes are retried until the store takes them.
   */
  private unsettled: NonNullable<StoreTx['settle']> = [];
  private settleRetry: TimerHandle | undefined;
  private readonly retries = new Map<string, TimerHandle>();
  private readonly deadlines = new MinHeap<string>();
  private sweepTimer: TimerHandle | undefined;
  private sweepAt: number | undefined;
  private closed = false;
  /** Serves and pushes in progress; `close` waits for them so none writes to a closed store. */
  private readonly working = new Set<Promise<void>>();
  private markAbandoned: () => void = () => undefined;
  /**
   * Resolves once `close`'s grace has passed: a push still in its sink then gives up, and its event stays
   * pending for the next start. A push that finishes within the grace is settled, so a sink that did
   * deliver is not handed the event again.
   */
  private readonly abandoned = new Promise<void>((resolve) => {
    this.markAbandoned = resolve;
  });

  constructor(private readonly options: RelayOptions) {}

  private track(work: Promise<void>): void {
    this.working.add(work);
    void work.finally(() => this.working.delete(work));
  }

  /** After a restart: every pending event is owed to someone. */
  start(): void {
    for (const event of this.options.store.outbox({ state: 'pending' })) this.trackDeadline(event);
    this.rearmSweep();
  }

  announced(event: OutboxEvent): void {
    this.trackDeadline(event);
    this.rearmSweep();
    // A parent blocked in spawn_wait asked for its events now: it gets them before any pushed sink (a
    // hosted chat would hold them until the parent's turn ends, which the wait itself prevents).
    this.wakeWaiters(event.parent);
    if (this.sinks.has(event.parent) && !this.inFlight.has(event.id)) this.push(event.id);
  }

  attach(parent: ParentKey, sink: Sink): () => void {
    this.sinks.set(parent, sink);
    for (const event of this.options.store.outbox({ state: 'pending', parent })) this.push(event.id);
    return () => {
      if (this.sinks.get(parent) === sink) this.sinks.delete(parent);
    };
  }

  /** Resolves with this parent's pending events as soon as there is one, or `[]` after `timeoutMs`. */
  waitFor(parent: ParentKey, timeoutMs: number): Promise<DeliveredEvent[]> {
    return new Promise((resolve) => {
      const waiter: Waiter = {
        parent,
        busy: false,
        done: false,
        resolve: (events) => {
          if (waiter.done) return;
          waiter.done = true;
          this.options.clock.clearTimer(waiter.timer);
          this.waiters.get(parent)?.delete(waiter);
          resolve(events);
        },
        // A waiter whose events are being rendered answers with them when that is done, never with [].
        timer: this.options.clock.setTimer(
          () => {
            if (!waiter.busy) waiter.resolve([]);
          },
          this.closed ? 0 : timeoutMs,
        ),
      };
      let set = this.waiters.get(parent);
      if (!set) {
        set = new Set();
        this.waiters.set(parent, set);
      }
      set.add(waiter);
      this.serve(waiter);
      // A zero timeout is a poll: answer now when nothing is pending.
      if (!waiter.busy && (timeoutMs <= 0 || this.closed)) waiter.resolve([]);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.retries.values()) this.options.clock.clearTimer(timer);
    this.retries.clear();
    const grace = this.options.clock.setTimer(
      () => this.markAbandoned(),
      this.options.closeGraceMs ?? DEFAULT_CLOSE_GRACE_MS,
    );
    await Promise.allSettled([...this.working]);
    this.options.clock.clearTimer(grace);
    this.markAbandoned();
    for (const set of this.waiters.values())
      for (const waiter of [...set]) if (!waiter.busy) waiter.resolve([]);
    for (const timer of this.retries.values()) this.options.clock.clearTimer(timer);
    this.retries.clear();
    if (this.sweepTimer !== undefined) this.options.clock.clearTimer(this.sweepTimer);
    this.sweepTimer = undefined;
    if (this.settleRetry !== undefined) this.options.clock.clearTimer(this.settleRetry);
    this.settleRetry = undefined;
    if (this.unsettled.length > 0) this.settle([]);
  }

  private trackDeadline(event: OutboxEvent): void {
    this.deadlines.push(event.createdAt + this.options.deliveryTimeoutMs, event.id);
  }

  private wakeWaiters(parent: ParentKey): void {
    const set = this.waiters.get(parent);
    if (!set) return;
    for (const waiter of set) {
      if (!waiter.busy) {
        this.serve(waiter);
        return;
      }
    }
  }

  /** Claims every pending event of the waiter's parent, renders them and delivers by returning them. */
  private serve(waiter: Waiter): void {
    const events = this.options.store
      .outbox({ state: 'pending', parent: waiter.parent })
      .filter((e) => !this.inFlight.has(e.id) && !this.isUnsettled(e.id));
    if (events.length === 0) return;
    waiter.busy = true;
    for (const event of events) this.inFlight.add(event.id);
    this.track(
      (async () => {
        const delivered: DeliveredEvent[] = [];
        for (const event of events) delivered.push(await this.toDelivered(event));
        const at = this.options.clock.now();
        this.settle(events.map((e) => ({ eventId: e.id, state: 'delivered' as const, at })));
        for (const event of events) this.options.onSettled?.(event.runIds, at);
        for (const event of events) this.inFlight.delete(event.id);
        waiter.resolve(delivered);
      })(),
    );
  }

  private push(eventId: string): void {
    if (this.closed || this.inFlight.has(eventId)) return;
    const event = this.options.store.outboxEvent(eventId);
    const sink = event ? this.sinks.get(event.parent) : undefined;
    if (event?.state !== 'pending' || !sink || this.isUnsettled(eventId)) return;
    this.inFlight.add(eventId);
    const { clock, store, epoch } = this.options;
    this.track(
      (async () => {
        let ok = false;
        try {
          const delivered = await this.toDelivered(event);
          // Closed while rendering: nothing was handed over, so the event waits for the next start.
          if (this.closed) {
            this.inFlight.delete(eventId);
            return;
          }
          ok = await withTimeout(
            sink.deliver(delivered),
            this.options.attemptTimeoutMs,
            clock,
            this.abandoned,
          );
        } catch {
          ok = false;
        }
        this.inFlight.delete(eventId);
        if (ok) {
          const at = clock.now();
          this.settle([{ eventId, state: 'delivered', at }]);
          this.options.onSettled?.(event.runIds, at);
          return;
        }
        if (this.closed) return;
        // Only a failed attempt is recorded (a delivered one is settled instead): one write per push.
        try {
          store.apply({ epoch, attempts: [{ eventId }] });
        } catch {
          // The count only paces retries; a store that refuses writes loses nothing here.
        }
        const attempts = event.attempts + 1;
        const backoff = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** Math.min(attempts - 1, 16));
        const deadline = event.createdAt + this.options.deliveryTimeoutMs;
        if (clock.now() + backoff >= deadline) return; // the sweep marks it undeliverable
        this.retries.set(
          eventId,
          clock.setTimer(() => {
            this.retries.delete(eventId);
            this.push(eventId);
          }, backoff),
        );
      })(),
    );
  }

  private async toDelivered(event: OutboxEvent): Promise<DeliveredEvent> {
    let text: string;
    try {
      text = await this.options.render(event);
    } catch (error) {
      text = `[Subagent completion event] runs=${event.runIds.join(',')} (preview unavailable: ${String(error)})`;
    }
    return {
      id: event.id,
      parent: event.parent,
      kind: event.kind,
      run_ids: event.runIds,
      ...(event.batchId !== undefined ? { batch_id: event.batchId } : {}),
      text,
    };
  }

  private rearmSweep(): void {
    if (this.closed) return;
    const at = this.deadlines.peekKey();
    if (
      at === undefined ||
      (this.sweepAt !== undefined && this.sweepAt <= at && this.sweepTimer !== undefined)
    )
      return;
    if (this.sweepTimer !== undefined) this.options.clock.clearTimer(this.sweepTimer);
    this.sweepAt = at;
    this.sweepTimer = this.options.clock.setTimer(
      () => this.sweep(),
      Math.max(0, at - this.options.clock.now()),
    );
  }

  private sweep(): void {
    this.sweepTimer = undefined;
    this.sweepAt = undefined;
    const now = this.options.clock.now();
    const expired: OutboxEvent[] = [];
    for (let at = this.deadlines.peekKey(); at !== undefined && at <= now; at = this.deadlines.peekKey()) {
      const id = this.deadlines.pop() as string;
      const event = this.options.store.outboxEvent(id);
      if (event?.state !== 'pending') continue;
      if (this.inFlight.has(id)) {
        this.deadlines.push(now + 1000, id); // an attempt is in progress; judge it when it settles
        continue;
      }
      expired.push(event);
    }
    if (expired.length > 0) {
      this.settle(expired.map((e) => ({ eventId: e.id, state: 'undeliverable' as const, at: now })));
      for (const event of expired) {
        const retry = this.retries.get(event.id);
        if (retry !== undefined) this.options.clock.clearTimer(retry);
        this.retries.delete(event.id);
        this.options.onUndeliverable?.(event);
        this.options.onSettled?.(event.runIds, now);
      }
    }
    this.rearmSweep();
  }

  /** Records settles, or keeps them (the events count as settled here) until the store takes them. */
  private settle(settles: NonNullable<StoreTx['settle']>): void {
    const { store, epoch, clock } = this.options;
    try {
      store.apply({ epoch, settle: [...this.unsettled, ...settles] });
      this.unsettled = [];
    } catch {
      this.unsettled.push(...settles);
      if (this.settleRetry === undefined && !this.closed) {
        this.settleRetry = clock.setTimer(() => {
          this.settleRetry = undefined;
          if (this.unsettled.length > 0) this.settle([]);
        }, SETTLE_RETRY_MS);
      }
    }
  }

  private isUnsettled(eventId: string): boolean {
    return this.unsettled.some((s) => s.eventId === eventId);
  }
}

/** Resolves true when `work` settles first, false when the timer does (the work is not cancelled). */
function withTimeout(
  work: Promise<void>,
  timeoutMs: number,
  clock: Clock,
  abandoned: Promise<void>,
): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = clock.setTimer(() => resolve(false), timeoutMs);
    void abandoned.then(() => {
      clock.clearTimer(timer);
      resolve(false);
    });
    work.then(
      () => {
        clock.clearTimer(timer);
        resolve(true);
      },
      () => {
        clock.clearTimer(timer);
        resolve(false);
      },
    );
  });
}
