import type { Clock, TimerHandle } from '../core/clock.js';

/**
 * Wall time and Node timers. Timers keep the process alive (a gateway with work pending should), so an
 * owner must `close()` what it started; tests check that nothing is left. Timers with the same delay set
 * in order fire in that order (Node keeps one list per delay).
 */
export const realClock: Clock = {
  now: neverBackwards(() => Date.now()),
  setTimer(fn, delayMs) {
    return setTimeout(fn, Math.max(0, delayMs));
  },
  clearTimer(handle: TimerHandle) {
    clearTimeout(handle as ReturnType<typeof setTimeout>);
  },
};

/**
 * `read`, held at the highest value it has returned: when the wall clock is stepped back (NTP, a user),
 * time stands still until it catches up, so no duration comes out negative.
 */
export function neverBackwards(read: () => number): () => number {
  let highest = Number.NEGATIVE_INFINITY;
  return () => {
    const value = read();
    if (value > highest) highest = value;
    return highest;
  };
}
