import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { PausableTimers } from '../../src/core/pausable-timers.js';

describe('PausableTimers', () => {
  it('fires after its delay when never paused', async () => {
    const clock = new FakeClock();
    const timers = new PausableTimers(clock);
    let fired = 0;
    timers.setTimer(() => fired++, 1000);
    await clock.advance(999);
    expect(fired).toBe(0);
    await clock.advance(1);
    expect(fired).toBe(1);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('does not count the time paused: fires after its delay of running time', async () => {
    const clock = new FakeClock();
    const timers = new PausableTimers(clock);
    let fired = 0;
    timers.setTimer(() => fired++, 1000);
    await clock.advance(400);
    timers.pause(true);
    // Stopped far longer than the delay: nothing fires, nothing is pending on the clock.
    await clock.advance(60_000);
    expect(fired).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
    timers.pause(false);
    await clock.advance(599);
    expect(fired).toBe(0);
    await clock.advance(1);
    expect(fired).toBe(1);
  });

  it('counts several pauses, and a repeated pause or resume changes nothing', async () => {
    const clock = new FakeClock();
    const timers = new PausableTimers(clock);
    let fired = 0;
    timers.setTimer(() => fired++, 1000);
    for (let i = 0; i < 3; i++) {
      await clock.advance(300);
      timers.pause(true);
      timers.pause(true);
      await clock.advance(5000);
      timers.pause(false);
      timers.pause(false);
    }
    // 900 ms of running time so far.
    await clock.advance(99);
    expect(fired).toBe(0);
    await clock.advance(1);
    expect(fired).toBe(1);
  });

  it('a timer set while paused starts counting at the resume', async () => {
    const clock = new FakeClock();
    const timers = new PausableTimers(clock);
    timers.pause(true);
    expect(timers.isPaused).toBe(true);
    let fired = 0;
    timers.setTimer(() => fired++, 500);
    await clock.advance(10_000);
    expect(fired).toBe(0);
    timers.pause(false);
    await clock.advance(500);
    expect(fired).toBe(1);
  });

  it('a timer cleared (running or paused) never fires and leaves nothing on the clock', async () => {
    const clock = new FakeClock();
    const timers = new PausableTimers(clock);
    let fired = 0;
    const a = timers.setTimer(() => fired++, 100);
    const b = timers.setTimer(() => fired++, 200);
    timers.clearTimer(a);
    timers.pause(true);
    timers.clearTimer(b);
    timers.pause(false);
    await clock.advance(1000);
    expect(fired).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
    expect(timers.size).toBe(0);
    // Clearing twice, or a handle it never gave, is a no-op.
    timers.clearTimer(a);
    timers.clearTimer({});
  });

  it('forgets a timer once it fired (bounded by the timers pending)', async () => {
    const clock = new FakeClock();
    const timers = new PausableTimers(clock);
    for (let i = 0; i < 1000; i++) timers.setTimer(() => {}, i);
    await clock.advance(1000);
    expect(timers.size).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });
});
