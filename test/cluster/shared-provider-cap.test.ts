import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import {
  type CapCell,
  capView,
  decodeCapState,
  encodeCapState,
  MAX_SWAP_ATTEMPTS,
  SharedProviderCap,
} from '../../src/cluster/shared-provider-cap.js';
import { onRateLimited } from '../../src/core/provider-cap.js';

/**
 * The in-memory cell behaves as the Redis one does: one stored string, a compare-and-set, and what the
 * queue was last told (concurrency, hold end). `beforeSwap` lets a test slip another gateway's write in
 * between a read and its swap.
 */
class MemoryCell implements CapCell {
  raw: string | null = null;
  running = 0;
  concurrency: number | undefined;
  heldUntil = 0;
  swaps = 0;
  beforeSwap: (() => void) | undefined;
  constructor(private readonly clock: FakeClock) {}
  async read() {
    return { raw: this.raw, running: this.running, now: this.clock.now() };
  }
  async swap(expected: string | null, next: string, apply: { cap: number; holdMs: number }) {
    const interfere = this.beforeSwap;
    this.beforeSwap = undefined;
    interfere?.();
    this.swaps++;
    if (this.raw !== expected) return false;
    this.raw = next;
    this.concurrency = apply.cap;
    this.heldUntil = Math.max(this.heldUntil, this.clock.now() + apply.holdMs);
    return true;
  }
}

describe('the shared provider cap (cluster mode)', () => {
  it('a 429 on one gateway cuts the cap both apply, once per window, and holds starts until retry-after', async () => {
    const clock = new FakeClock();
    const cell = new MemoryCell(clock);
    const a = new SharedProviderCap(cell, 10, 'adaptive');
    const b = new SharedProviderCap(cell, 10, 'adaptive');
    await a.ensure();
    await b.ensure();
    expect(cell.concurrency).toBe(10);
    cell.running = 10;

    const cut = await a.rateLimited(2000);
    expect(cut).toMatchObject({ cap: 7, holdUntil: clock.now() + 2000 });
    expect(cell.concurrency).toBe(7);
    expect(cell.heldUntil).toBe(clock.now() + 2000);
    // Gateway b reads the same state: the cap it shows is the cut one.
    b.observe(cell.raw);
    expect(capView(b, clock.now())).toMatchObject({
      provider_cap: 7,
      provider_cap_source: 'adaptive',
      provider_cap_ceiling: 10,
      hold_until: new Date(clock.now() + 2000).toISOString(),
    });

    // A 429 on b within the window (the same burst) extends the hold but does not cut again.
    await clock.advance(500);
    expect(await b.rateLimited(3000)).toMatchObject({ cap: 7, holdUntil: clock.now() + 3000 });
    expect(cell.concurrency).toBe(7);

    // After the window (10 s at least) the next 429 cuts again, from what is in use.
    await clock.advance(10_000);
    cell.running = 6;
    expect(await b.rateLimited(1000)).toMatchObject({ cap: 4 });
    expect(cell.concurrency).toBe(4);
    expect(capView(b, clock.now() + 60_000).hold_until).toBeNull();
  });

  it('clean completions raise it by one while it is in use and no hold lasts, never above the ceiling', async () => {
    const clock = new FakeClock();
    const cell = new MemoryCell(clock);
    const cap = new SharedProviderCap(cell, 4, 'adaptive');
    await cap.ensure();
    cell.running = 4;
    await cap.rateLimited(1000);
    expect(cell.concurrency).toBe(2);
    cell.running = 2;
    // During the hold: no climb.
    await cap.cleanCompletion();
    expect(cell.concurrency).toBe(2);
    await clock.advance(1000);
    await cap.cleanCompletion();
    expect(cell.concurrency).toBe(3);
    // Not in use (1 × 2 < 3): no climb, and nothing written.
    cell.running = 1;
    const swaps = cell.swaps;
    await cap.cleanCompletion();
    expect(cell.concurrency).toBe(3);
    expect(cell.swaps).toBe(swaps);
    cell.running = 3;
    await cap.cleanCompletion();
    await cap.cleanCompletion();
    await cap.cleanCompletion();
    expect(cell.concurrency).toBe(4);
    expect(cap.state.cap).toBe(4);
  });

  it('a configured cap holds starts on a 429 but never moves', async () => {
    const clock = new FakeClock();
    const cell = new MemoryCell(clock);
    const cap = new SharedProviderCap(cell, 6, 'configured');
    await cap.ensure();
    cell.running = 6;
    expect(await cap.rateLimited(1500)).toMatchObject({ cap: 6, holdUntil: clock.now() + 1500 });
    expect(cell.concurrency).toBe(6);
    expect(cell.heldUntil).toBe(clock.now() + 1500);
    expect(capView(cap, clock.now()).provider_cap_source).toBe('configured');
  });

  it('a lost race is read again and recomputed: two gateways cut once, not twice', async () => {
    const clock = new FakeClock();
    const cell = new MemoryCell(clock);
    const a = new SharedProviderCap(cell, 10, 'adaptive');
    const b = new SharedProviderCap(cell, 10, 'adaptive');
    await a.ensure();
    cell.running = 10;
    // Another gateway's cut (4 running then: 10 → 2) lands between a's read (10 running) and a's swap: a's
    // swap fails, it reads that cut and only holds (the same window). A blind write would put back 7.
    cell.beforeSwap = () => {
      cell.running = 4;
      const other = onRateLimited(decodeCapState(cell.raw)!, b.policy, {
        now: clock.now(),
        running: 4,
        retryAfterMs: 2000,
      });
      cell.raw = encodeCapState(other);
      cell.concurrency = other.cap;
    };
    await a.rateLimited(3000);
    expect(decodeCapState(cell.raw)).toMatchObject({ cap: 2, streak: 1, holdUntil: clock.now() + 3000 });
    expect(cell.concurrency).toBe(2);
    expect(a.state.cap).toBe(2);
  });

  it('gives up after a bounded number of lost races instead of spinning', async () => {
    const clock = new FakeClock();
    const cell = new MemoryCell(clock);
    const cap = new SharedProviderCap(cell, 10, 'adaptive');
    await cap.ensure();
    let writes = 0;
    const spoil = () => {
      cell.raw = encodeCapState({ ...cap.state, streak: 100 + writes++ });
      cell.beforeSwap = spoil;
    };
    cell.beforeSwap = spoil;
    const before = cell.swaps;
    expect(await cap.rateLimited(1000)).toBeUndefined();
    expect(cell.swaps - before).toBe(MAX_SWAP_ATTEMPTS);
  });

  it('ensure creates a missing or unreadable state and brings a stored cap under the ceiling', async () => {
    const clock = new FakeClock();
    const cell = new MemoryCell(clock);
    cell.raw = 'not json';
    const cap = new SharedProviderCap(cell, 5, 'adaptive');
    expect(await cap.ensure()).toMatchObject({ cap: 5, holdUntil: 0 });
    cell.raw = encodeCapState({ ...cap.state, cap: 9 });
    expect(await cap.ensure()).toMatchObject({ cap: 5 });
    cell.raw = encodeCapState({ ...cap.state, cap: 3 });
    expect(await cap.ensure()).toMatchObject({ cap: 3 });
    expect(cell.concurrency).toBe(3);
    // A configured cap is the operator's number whatever was stored.
    expect(await new SharedProviderCap(cell, 5, 'configured').ensure()).toMatchObject({ cap: 5 });
  });

  it('decodes only what it encoded', () => {
    const state = {
      cap: 3,
      holdUntil: 5,
      dropWindowUntil: 6,
      streak: 1,
      lastDropAt: 4,
      lastRateLimitedAt: 4,
    };
    expect(decodeCapState(encodeCapState(state))).toEqual(state);
    expect(decodeCapState('{"cap":0,"holdUntil":0,"dropWindowUntil":0,"streak":0}')).toBeUndefined();
    expect(decodeCapState('[1]')).toBeUndefined();
    expect(decodeCapState(null)).toBeUndefined();
  });
});
