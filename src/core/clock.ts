/**
 * The Clock port. Everything that waits reads time and sets timers through this, so unit tests drive a
 * `FakeClock` instead of sleeping. It leaves out dates and time zones: `now()` is epoch milliseconds.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `fn` once after `delayMs`; returns a handle for {@link Clock.clearTimer}. */
  setTimer(fn: () => void, delayMs: number): TimerHandle;
  /** Cancels a timer; clearing one that fired or was cleared is a no-op. */
  clearTimer(handle: TimerHandle): void;
}

export type TimerHandle = { readonly __timer: unique symbol } | number | object;
