import { describe, expect, it } from 'vitest';
import type { Clock } from '../../src/core/clock.js';

/**
 * The Clock contract (src/core/clock.ts, docs/decisions.md on timer order), run against the fake clock
 * the unit tests drive and the real one users run: what the gateway's timeouts, reaper and flushes rely
 * on must hold for both.
 */
export interface ClockFixture {
  clock: Clock;
  /**
   * Lets `ms` pass: the fake clock advances; the real one sleeps on a Node timer set after the case's own,
   * so a case's timer due by then has fired when it resolves.
   */
  pass(ms: number): Promise<void>;
  /**
   * Timers holding the process open right now, the case's and any others (the test runner's): only the
   * difference between two readings in one synchronous stretch means something.
   */
  timersNow(): number;
  /** Timers the case set that have neither fired nor been cleared, once the event loop has caught up. */
  pendingTimers(): Promise<number>;
  /**
   * How much earlier than its delay a timer may fire, as `now()` measures it: 0 for the fake clock. Node
   * dates a timer from the event loop's cached time, which lags `Date.now()` by up to a millisecond or so.
   */
  earlyMs: number;
  dispose(): void;
}

export function describeClock(name: string, make: () => Promise<ClockFixture>): void {
  describe(`Clock conformance: ${name}`, () => {
    /** Runs a case on a fresh fixture. */
    function clockCase(title: string, body: (fixture: ClockFixture) => Promise<void>): void {
      it(title, async () => {
        const fixture = await make();
        try {
          await body(fixture);
        } finally {
          fixture.dispose();
        }
      });
    }

    clockCase(
      'never goes backwards, and moves on by at least the time passed',
      async ({ clock, pass, earlyMs }) => {
        const readings = [clock.now()];
        for (let i = 0; i < 5; i++) {
          readings.push(clock.now());
          await pass(2);
          readings.push(clock.now());
        }
        expect(readings).toEqual([...readings].sort((a, b) => a - b));
        expect((readings.at(-1) ?? 0) - (readings[0] ?? 0)).toBeGreaterThanOrEqual(10 - earlyMs);
      },
    );

    clockCase('fires a timer once, and not before its delay', async ({ clock, pass, earlyMs }) => {
      const firedAt: number[] = [];
      const setAt = clock.now();
      clock.setTimer(() => firedAt.push(clock.now()), 10);
      await pass(9);
      // Nothing fired before its delay, as now() measures it. (Judged by the time it fired, not by what
      // `pass` saw: on a loaded machine the real clock's 9 ms sleep can overrun the case's 10 ms timer.)
      expect(firedAt.filter((at) => at - setAt < 10 - earlyMs)).toEqual([]);
      await pass(5);
      expect(firedAt).toHaveLength(1);
      expect((firedAt[0] ?? 0) - setAt).toBeGreaterThanOrEqual(10 - earlyMs);
      await pass(15);
      expect(firedAt).toHaveLength(1);
    });

    clockCase(
      'fires a timer of delay 0 (or below) on a later turn, never inside setTimer',
      async ({ clock, pass }) => {
        const fired: string[] = [];
        clock.setTimer(() => fired.push('zero'), 0);
        clock.setTimer(() => fired.push('negative'), -5);
        expect(fired).toEqual([]);
        await pass(1);
        expect(fired).toEqual(['zero', 'negative']);
      },
    );

    clockCase('never fires a cleared timer', async ({ clock, pass, pendingTimers }) => {
      let fired = false;
      const handle = clock.setTimer(() => {
        fired = true;
      }, 5);
      clock.clearTimer(handle);
      await pass(10);
      expect(fired).toBe(false);
      expect(await pendingTimers()).toBe(0);
    });

    clockCase(
      'clears a timer twice, or after it fired, as a no-op that cancels nothing else',
      async ({ clock, pass }) => {
        const fired: string[] = [];
        const first = clock.setTimer(() => fired.push('first'), 5);
        await pass(10);
        clock.clearTimer(first);
        clock.clearTimer(first);
        clock.setTimer(() => fired.push('second'), 5);
        const third = clock.setTimer(() => fired.push('third'), 5);
        clock.clearTimer(third);
        clock.clearTimer(third);
        clock.clearTimer(first);
        await pass(10);
        expect(fired).toEqual(['first', 'second']);
      },
    );

    clockCase(
      'fires a timer set inside a callback after its own delay, on a later turn',
      async ({ clock, pass, earlyMs }) => {
        const events: Array<[string, number]> = [];
        clock.setTimer(() => {
          events.push(['outer', clock.now()]);
          clock.setTimer(() => events.push(['inner', clock.now()]), 5);
          events.push(['outer done', clock.now()]);
        }, 5);
        await pass(5);
        expect(events.map(([what]) => what)).toEqual(['outer', 'outer done']);
        await pass(5);
        expect(events.map(([what]) => what)).toEqual(['outer', 'outer done', 'inner']);
        const [, outerAt] = events[0] ?? ['', 0];
        const [, innerAt] = events[2] ?? ['', 0];
        expect(innerAt - outerAt).toBeGreaterThanOrEqual(5 - earlyMs);
      },
    );

    clockCase(
      're-arms from inside its own callback, as a poll loop does',
      async ({ clock, pass, pendingTimers }) => {
        let ticks = 0;
        const tick = () => {
          ticks++;
          if (ticks < 3) clock.setTimer(tick, 4);
        };
        clock.setTimer(tick, 4);
        for (let i = 0; i < 4; i++) await pass(4);
        expect(ticks).toBe(3);
        expect(await pendingTimers()).toBe(0);
      },
    );

    clockCase(
      'fires timers with equal deadlines in the order they were set, after any earlier deadline',
      async ({ clock, pass }) => {
        const order: string[] = [];
        for (const name of ['a', 'b', 'c', 'd', 'e']) clock.setTimer(() => order.push(name), 8);
        // 6 ms earlier: the real clock dates each timer when it is set, so a pause between the two calls
        // (a loaded machine) moves this deadline later; it would take a 6 ms pause to pass a to e.
        clock.setTimer(() => order.push('earlier'), 2);
        await pass(9);
        expect(order).toEqual(['earlier', 'a', 'b', 'c', 'd', 'e']);
      },
    );

    clockCase(
      'leaves no timer behind once each has fired or been cleared',
      async ({ clock, pass, pendingTimers, timersNow }) => {
        const before = timersNow();
        const handles = Array.from({ length: 5 }, () => clock.setTimer(() => undefined, 5));
        expect(timersNow() - before).toBe(5);
        for (const handle of handles.slice(0, 2)) clock.clearTimer(handle);
        expect(timersNow() - before).toBe(3);
        await pass(10);
        expect(await pendingTimers()).toBe(0);
      },
    );
  });
}
