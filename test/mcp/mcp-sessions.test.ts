import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { McpSessions } from '../../src/mcp/mcp-sessions.js';

/** A transport stand-in: counts its closes. */
function transport(): { closes: number; close: () => Promise<void> } {
  const t = {
    closes: 0,
    close: async () => {
      t.closes++;
    },
  };
  return t;
}

describe('McpSessions: idle expiry and a bound, least recently used first', () => {
  it('closes a session nobody used for idleMs, and only then', async () => {
    const clock = new FakeClock();
    const sessions = new McpSessions<ReturnType<typeof transport>>({ clock, idleMs: 60_000, max: 10 });
    const a = transport();
    sessions.add('a', a);
    await clock.advance(59_999);
    expect(sessions.get('a')).toBe(a); // used: the idle time starts again
    await clock.advance(59_999);
    expect(a.closes).toBe(0);
    expect(sessions.size).toBe(1);
    await clock.advance(1);
    expect(a.closes).toBe(1);
    expect(sessions.size).toBe(0);
    expect(sessions.get('a')).toBeUndefined();
    expect(clock.pendingTimers()).toBe(0);
  });

  it('expires each session at its own idle deadline, whatever order they were used in', async () => {
    const clock = new FakeClock();
    const sessions = new McpSessions<ReturnType<typeof transport>>({ clock, idleMs: 1000, max: 10 });
    const [a, b, c] = [transport(), transport(), transport()];
    sessions.add('a', a);
    await clock.advance(300);
    sessions.add('b', b);
    await clock.advance(300);
    sessions.add('c', c);
    sessions.get('a'); // a is now the most recently used
    await clock.advance(400); // t=1000: b was last used at 300, c at 600, a at 600
    expect([a.closes, b.closes, c.closes]).toEqual([0, 0, 0]);
    await clock.advance(300); // t=1300: b's deadline
    expect([a.closes, b.closes, c.closes]).toEqual([0, 1, 0]);
    await clock.advance(300); // t=1600: a and c
    expect([a.closes, b.closes, c.closes]).toEqual([1, 1, 1]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('beyond max, evicts and closes the least recently used session', async () => {
    const clock = new FakeClock();
    const sessions = new McpSessions<ReturnType<typeof transport>>({ clock, idleMs: 3_600_000, max: 3 });
    const all = ['a', 'b', 'c', 'd', 'e'].map((id) => ({ id, t: transport() }));
    for (const { id, t } of all.slice(0, 3)) sessions.add(id, t);
    sessions.get('a'); // b is now the least recently used
    sessions.add('d', all[3]!.t);
    expect(all.map(({ t }) => t.closes)).toEqual([0, 1, 0, 0, 0]);
    sessions.add('e', all[4]!.t);
    expect(all.map(({ t }) => t.closes)).toEqual([0, 1, 1, 0, 0]);
    expect(sessions.size).toBe(3);
    expect(sessions.get('b')).toBeUndefined();
    expect(sessions.get('a')).toBe(all[0]!.t);
    expect(sessions.stats()).toEqual({ open: 3, expired: 0, evicted: 2 });
  });

  it('a session that closed by itself leaves the table without a second close', async () => {
    const clock = new FakeClock();
    const sessions = new McpSessions<ReturnType<typeof transport>>({ clock, idleMs: 1000, max: 2 });
    const a = transport();
    sessions.add('a', a);
    sessions.delete('a');
    await clock.advance(5000);
    expect(a.closes).toBe(0);
    expect(sessions.size).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a session with a request open never idles out, and is evicted only after idle ones', async () => {
    const clock = new FakeClock();
    const sessions = new McpSessions<ReturnType<typeof transport>>({ clock, idleMs: 1000, max: 2 });
    const [a, b, c] = [transport(), transport(), transport()];
    sessions.add('a', a);
    sessions.add('b', b);
    expect(sessions.begin('a')).toBe(a); // a long tool call (or a notification stream) on a
    sessions.get('b'); // b is the most recently used
    sessions.add('c', c); // a is the least recently used, but in use: b goes
    expect([a.closes, b.closes, c.closes]).toEqual([0, 1, 0]);
    await clock.advance(5000);
    expect(a.closes).toBe(0); // still in use
    expect(c.closes).toBe(1);
    sessions.end('a');
    await clock.advance(999);
    expect(a.closes).toBe(0);
    await clock.advance(1);
    expect(a.closes).toBe(1);
    expect(sessions.stats()).toEqual({ open: 0, expired: 2, evicted: 1 });
  });

  it('never evicts the session being added, even when every other one is in use', () => {
    const clock = new FakeClock();
    const sessions = new McpSessions<ReturnType<typeof transport>>({ clock, idleMs: 1000, max: 2 });
    const [a, b, c] = [transport(), transport(), transport()];
    sessions.add('a', a);
    sessions.begin('a');
    sessions.add('b', b);
    sessions.begin('b');
    sessions.add('c', c);
    expect([a.closes, b.closes, c.closes]).toEqual([1, 0, 0]);
    expect(sessions.get('c')).toBe(c);
  });

  it('close() closes every session and leaves no timer', async () => {
    const clock = new FakeClock();
    const sessions = new McpSessions<ReturnType<typeof transport>>({ clock, idleMs: 1000, max: 5 });
    const [a, b] = [transport(), transport()];
    sessions.add('a', a);
    sessions.add('b', b);
    await sessions.close();
    expect([a.closes, b.closes]).toEqual([1, 1]);
    expect(sessions.size).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
    await clock.advance(5000);
    expect([a.closes, b.closes]).toEqual([1, 1]);
  });

  it('holds 10,000 sessions added past a bound of 100 at 100, touching only a few timers', async () => {
    const clock = new FakeClock();
    const sessions = new McpSessions<ReturnType<typeof transport>>({ clock, idleMs: 1000, max: 100 });
    const made = Array.from({ length: 10_000 }, () => transport());
    made.forEach((t, i) => {
      sessions.add(`s${i}`, t);
    });
    expect(sessions.size).toBe(100);
    expect(made.filter((t) => t.closes === 1)).toHaveLength(9_900);
    expect(clock.pendingTimers()).toBe(1);
    await clock.advance(1000);
    expect(sessions.size).toBe(0);
  });
});
