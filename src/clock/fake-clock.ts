import type { Clock, TimerHandle } from '../core/clock.js';

interface PendingTimer {
  id: number;
  at: number;
  fn: () => void;
}

/**
 * A clock that moves only when a test says so. `advance(ms)` fires due timers in time order (ties in
 * the order they were set), letting each timer's microtasks settle before the next fires.
 */
export class FakeClock implements Clock {
  private current: number;
  private nextId = 1;
  private readonly timers = new Map<number, PendingTimer>();

  constructor(startMs = 1_700_000_000_000) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  setTimer(fn: () => void, delayMs: number): TimerHandle {
    const id = this.nextId++;
    this.timers.set(id, { id, at: this.current + Math.max(0, delayMs), fn });
    return { id };
  }

  clearTimer(handle: TimerHandle): void {
    const id = (handle as { id?: number }).id;
    if (id !== undefined) this.timers.delete(id);
  }

  /** How many timers are pending: a closed component must leave none. */
  pendingTimers(): number {
    return this.timers.size;
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way. */
  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    for (;;) {
      await flushMicrotasks();
      const due = this.nextDue(target);
      if (!due) break;
      this.timers.delete(due.id);
      this.current = Math.max(this.current, due.at);
      due.fn();
    }
    this.current = target;
    await flushMicrotasks();
  }

  private nextDue(limit: number): PendingTimer | undefined {
    let best: PendingTimer | undefined;
    for (const timer of this.timers.values()) {
      if (timer.at > limit) continue;
      if (!best || timer.at < best.at || (timer.at === best.at && timer.id < best.id)) best = timer;
    }
    return best;
  }
}

/** Lets pending promise callbacks run (several rounds, for chains of awaits). */
export async function flushMicrotasks(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await Promise.resolve();
}
