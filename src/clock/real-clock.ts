import type { Clock, TimerHandle } from '../core/clock.js';

/** Wall time and Node timers. Timers are unref'd: a pending timer never keeps the process alive. */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimer(fn, delayMs) {
    const timer = setTimeout(fn, Math.max(0, delayMs));
    timer.unref();
    return timer;
  },
  clearTimer(handle: TimerHandle) {
    clearTimeout(handle as ReturnType<typeof setTimeout>);
  },
};
