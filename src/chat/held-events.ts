import type { Clock, TimerHandle } from '../core/clock.js';
import type { DeliveredEvent } from '../gateway/sink.js';

/**
 * A hosted chat's side of delivery: the completion events the relay handed over and the chat has not
 * injected yet, each with the `deliver` calls (attempts) waiting on it.
 *
 * - An attempt resolves when its event was injected (the parent accepted the turn), rejects when the
 *   injection failed, and rejects on its own after `attemptTimeoutMs` (the relay's bound too). An event
 *   nobody waits for any more while it is still only held is withdrawn, so an event the relay gave up on
 *   (`undeliverable`) is never injected afterwards.
 * - Injected ids are remembered (the last {@link REMEMBERED_IDS}): an event handed over again is
 *   acknowledged at once.
 */

/** One `deliver` call waiting for its event's injection. */
interface Attempt {
  resolve: () => void;
  reject: (error: Error) => void;
  timer: TimerHandle;
}

export interface HeldEvent {
  id: string;
  /** When it was first handed over (clock milliseconds). */
  at: number;
  event: DeliveredEvent;
  /** `sending`: in an injection turn the parent has not accepted yet (it is no longer withdrawn). */
  state: 'held' | 'sending';
  attempts: Set<Attempt>;
}

const REMEMBERED_IDS = 10_000;

export class HeldEvents {
  private readonly held = new Map<string, HeldEvent>();
  private readonly injected = new Set<string>();

  /** @param onWithdrawn an event was withdrawn (take it out of the turn queue). */
  constructor(
    private readonly clock: Clock,
    private readonly attemptTimeoutMs: number,
    private readonly onWithdrawn: (held: HeldEvent) => void,
  ) {}

  get size(): number {
    return this.held.size;
  }

  /** Events injected before (a chat continued after a restart): handed over again, they are acknowledged. */
  seedInjected(ids: readonly string[]): void {
    for (const id of ids) this.remember(id);
  }

  /** The last `limit` injected event ids, oldest first. */
  recentInjected(limit: number): string[] {
    const all = [...this.injected];
    return all.slice(Math.max(0, all.length - limit));
  }

  /**
   * A `deliver` attempt for `event`: `done` settles as the class comment says; `added` is the new held
   * event when the event was not held yet (the chat queues it for an injection turn).
   */
  attempt(event: DeliveredEvent): { done: Promise<void>; added?: HeldEvent } {
    if (this.injected.has(event.id)) return { done: Promise.resolve() };
    let held = this.held.get(event.id);
    const isNew = held === undefined;
    if (!held) {
      held = { id: event.id, at: this.clock.now(), event, state: 'held', attempts: new Set() };
      this.held.set(event.id, held);
    }
    const entry = held;
    const done = new Promise<void>((resolve, reject) => {
      const attempt: Attempt = {
        resolve,
        reject,
        timer: this.clock.setTimer(() => this.timedOut(entry, attempt), this.attemptTimeoutMs),
      };
      entry.attempts.add(attempt);
    });
    return isNew ? { done, added: entry } : { done };
  }

  /**
   * Of `items` taken for an injection turn, those still awaited (now `sending`); the rest are let go.
   */
  takeForSending(items: readonly HeldEvent[]): HeldEvent[] {
    const sending: HeldEvent[] = [];
    for (const held of items) {
      if (this.held.get(held.id) === held && held.attempts.size > 0) {
        held.state = 'sending';
        sending.push(held);
      } else {
        this.forget(held);
      }
    }
    return sending;
  }

  /** Every attempt on `held` resolves (injected: the id is remembered) or rejects with `error`. */
  settle(held: HeldEvent, error?: Error): void {
    this.forget(held);
    if (!error) this.remember(held.id);
    for (const attempt of held.attempts) {
      this.clock.clearTimer(attempt.timer);
      if (error) attempt.reject(error);
      else attempt.resolve();
    }
    held.attempts.clear();
  }

  /** Rejects every attempt on every held event (the chat closes). */
  settleAll(error: Error): void {
    for (const held of [...this.held.values()]) this.settle(held, error);
  }

  private timedOut(held: HeldEvent, attempt: Attempt): void {
    if (!held.attempts.delete(attempt)) return;
    attempt.reject(new Error(`event ${held.id} was not injected within ${this.attemptTimeoutMs} ms`));
    if (held.state === 'held' && held.attempts.size === 0) {
      this.forget(held);
      this.onWithdrawn(held);
    }
  }

  private forget(held: HeldEvent): void {
    if (this.held.get(held.id) === held) this.held.delete(held.id);
  }

  private remember(id: string): void {
    this.injected.add(id);
    if (this.injected.size > REMEMBERED_IDS) {
      const oldest = this.injected.values().next().value;
      if (oldest !== undefined) this.injected.delete(oldest);
    }
  }
}
