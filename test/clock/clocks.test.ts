import { createHook } from 'node:async_hooks';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { realClock } from '../../src/clock/real-clock.js';
import type { Clock } from '../../src/core/clock.js';
import { describeClock } from './clock-conformance.js';

describeClock('FakeClock', async () => {
  const clock = new FakeClock();
  return {
    clock,
    pass: (ms) => clock.advance(ms),
    timersNow: () => clock.pendingTimers(),
    pendingTimers: async () => clock.pendingTimers(),
    earlyMs: 0,
    dispose: () => undefined,
  };
});

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
/** Ref'd Node timers alive now: what keeps the process up (unref'd ones are not listed). */
const liveTimeouts = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;

// The one place real time passes in unit tests: tiny delays (at most 20 ms per case).
describeClock('realClock', async () => {
  // Start on a fresh turn, so the event loop's cached time that Node dates timers from is current.
  await nextTurn();
  // Node destroys a timer (and drops its hold on the process) when it fires or is cleared. The settled
  // count follows only the timers realClock sets: process.getActiveResourcesInfo() also counts the test
  // runner's own, which come and go across a case's awaits.
  const live = new Set<number>();
  let setting = false;
  const hook = createHook({
    init: (asyncId, type) => {
      if (setting && type === 'Timeout') live.add(asyncId);
    },
    destroy: (asyncId) => live.delete(asyncId),
  }).enable();
  const clock: Clock = {
    now: () => realClock.now(),
    setTimer: (fn, delayMs) => {
      setting = true;
      try {
        return realClock.setTimer(fn, delayMs);
      } finally {
        setting = false;
      }
    },
    clearTimer: (handle) => realClock.clearTimer(handle),
  };
  return {
    clock,
    pass: (ms) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
    timersNow: liveTimeouts,
    pendingTimers: async () => {
      await nextTurn(); // destroy hooks run on the next turn
      return live.size;
    },
    earlyMs: 2,
    dispose: () => hook.disable(),
  };
});
