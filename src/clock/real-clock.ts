import type { Clock, TimerHandle } from '../core/clock.js';

/**
 * Wall time and Node timers. Timers keep the process alive (a gateway with work pending should), so an
 * owner must `close()` what it started; tests check that nothing is left.
 */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimer(fn, delayMs) {
    return setTimeout(fn, Math.max(0, delayMs));
  },
  clearTimer(handle: TimerHandle) {
    clearTimeout(handle as ReturnType<typeof setTimeout>);
  },
};
