import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { type GateRefusal, RequestGate } from '../../src/provider/request-gate.js';

/** The per-provider bound on requests in flight: excess requests wait in order, briefly and boundedly. */
describe('the request gate', () => {
  const setup = (options: { maxInFlight: number; maxQueued?: number; maxWaitMs?: number }) => {
    const clock = new FakeClock();
    const gate = new RequestGate({ ...options, clock });
    const log: string[] = [];
    const ask = (name: string) =>
      gate.acquire(
        () => log.push(`go ${name}`),
        (why: GateRefusal) => log.push(`refused ${name} ${why}`),
      );
    return { clock, gate, log, ask };
  };

  it('lets up to the bound through at once; the rest wait and go in order as requests end', () => {
    const { gate, log, ask } = setup({ maxInFlight: 2 });
    for (const name of ['a', 'b', 'c', 'd']) ask(name);
    expect(log).toEqual(['go a', 'go b']);
    expect(gate.snapshot()).toEqual({ in_flight: 2, queued: 2, limit: 2 });
    gate.release(200);
    expect(log).toEqual(['go a', 'go b', 'go c']);
    gate.release(200);
    gate.release(200);
    expect(log.at(-1)).toBe('go d');
    expect(gate.snapshot()).toEqual({ in_flight: 1, queued: 0, limit: 2 });
  });

  it('refuses at once past the queue bound, and a waiter past the wait bound; nothing hangs', async () => {
    const { clock, gate, log, ask } = setup({ maxInFlight: 1, maxQueued: 2, maxWaitMs: 500 });
    for (const name of ['a', 'b', 'c', 'd']) ask(name);
    expect(log).toEqual(['go a', 'refused d queue_full']);
    await clock.advance(499);
    expect(log).toHaveLength(2);
    await clock.advance(1);
    expect(log).toEqual(['go a', 'refused d queue_full', 'refused b wait_expired', 'refused c wait_expired']);
    expect(gate.snapshot().queued).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a waiter withdrawn (the agent went away) never goes and leaves no timer', () => {
    const { clock, gate, log, ask } = setup({ maxInFlight: 1 });
    ask('a');
    const withdraw = ask('b');
    withdraw();
    gate.release(200);
    expect(log).toEqual(['go a']);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a 429 lowers the bound below the configured one; successes bring it back, never above', () => {
    const { gate, ask } = setup({ maxInFlight: 4 });
    for (const name of ['a', 'b', 'c', 'd']) ask(name);
    gate.release(429);
    expect(gate.snapshot().limit).toBe(2);
    for (let i = 0; i < 20; i++) {
      ask(`x${i}`);
      gate.release(200);
    }
    expect(gate.snapshot().limit).toBeLessThanOrEqual(4);
    expect(gate.snapshot().limit).toBeGreaterThan(2);
  });

  it('close refuses every waiter and clears their timers', () => {
    const { clock, gate, log, ask } = setup({ maxInFlight: 1 });
    ask('a');
    ask('b');
    gate.close();
    expect(log).toEqual(['go a', 'refused b wait_expired']);
    expect(clock.pendingTimers()).toBe(0);
  });
});
