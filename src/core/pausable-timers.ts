import type { Clock, TimerHandle } from './clock.js';

interface Entry {
  fn: () => void;
  /** Running time left, ms, as of the last pause (or the start). */
  leftMs: number;
  /** When it last started counting; undefined while paused. */
  since: number | undefined;
  /** The clock's timer while it counts. */
  timer: TimerHandle | undefined;
}

/**
 * Timers that count only running time: while {@link pause}d they stand still and resume with what was left.
 * A process the memory pause stops (SIGSTOP, a frozen cgroup) cannot answer; a timeout that kept counting
 * would declare it hung for being held (issue 28, item 7). Each timer is forgotten once it fired or was
 * cleared, so the set is bounded by the timers pending.
 */
export class PausableTimers {
  private readonly entries = new Map<object, Entry>();
  private paused = false;

  constructor(private readonly clock: Clock) {}

  get isPaused(): boolean {
    return this.paused;
  }

  /** Timers pending. */
  get size(): number {
    return this.entries.size;
  }

  /** Calls `fn` once after `delayMs` of running time. */
  setTimer(fn: () => void, delayMs: number): TimerHandle {
    const handle = {};
    const entry: Entry = { fn, leftMs: Math.max(0, delayMs), since: undefined, timer: undefined };
    this.entries.set(handle, entry);
    if (!this.paused) this.run(handle, entry);
    return handle;
  }

  clearTimer(handle: TimerHandle): void {
    const entry = typeof handle === 'object' && handle !== null ? this.entries.get(handle) : undefined;
    if (entry === undefined) return;
    if (entry.timer !== undefined) this.clock.clearTimer(entry.timer);
    this.entries.delete(handle as object);
  }

  /** Stops (`true`) or restarts (`false`) every timer's count; repeating either is a no-op. */
  pause(isPaused: boolean): void {
    if (isPaused === this.paused) return;
    this.paused = isPaused;
    const now = this.clock.now();
    for (const [handle, entry] of this.entries) {
      if (!isPaused) {
        this.run(handle, entry);
        continue;
      }
      if (entry.timer !== undefined) this.clock.clearTimer(entry.timer);
      entry.leftMs = Math.max(0, entry.leftMs - (now - (entry.since ?? now)));
      entry.since = undefined;
      entry.timer = undefined;
    }
  }

  private run(handle: object, entry: Entry): void {
    entry.since = this.clock.now();
    entry.timer = this.clock.setTimer(() => {
      this.entries.delete(handle);
      entry.fn();
    }, entry.leftMs);
  }
}
