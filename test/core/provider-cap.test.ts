import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  initialProviderCap,
  onCleanCompletion,
  onRateLimited,
  type ProviderCapPolicy,
  providerStartsAllowed,
} from '../../src/core/provider-cap.js';
import { numRuns } from '../helpers/fc-runs.js';

const policy: ProviderCapPolicy = { initialCap: 10, maxCap: 32 };

describe('the adaptive provider cap (AIMD on run starts)', () => {
  it('starts at the initial cap, with nothing held', () => {
    const state = initialProviderCap(policy);
    expect(state).toMatchObject({ cap: 10, holdUntil: 0, streak: 0 });
    expect(providerStartsAllowed(state, 0, 4)).toBe(6);
    expect(providerStartsAllowed(state, 0, 12)).toBe(0);
  });

  it('a 429 cuts the cap to floor(cap × 0.7) and holds every start until now + retry-after', () => {
    const state = onRateLimited(initialProviderCap(policy), policy, { now: 1_000, retryAfterMs: 2_000 });
    expect(state.cap).toBe(7);
    expect(state.holdUntil).toBe(3_000);
    expect(providerStartsAllowed(state, 2_999, 0)).toBe(0);
    expect(providerStartsAllowed(state, 3_000, 0)).toBe(7);
  });

  it('cuts at most once per window (retry-after, at least 10 s): a burst of 429s is one drop', () => {
    let state = initialProviderCap(policy);
    for (let t = 0; t < 10_000; t += 100)
      state = onRateLimited(state, policy, { now: t, retryAfterMs: 2_000 });
    expect(state.cap).toBe(7);
    // The hold still covers the last 429's retry-after.
    expect(state.holdUntil).toBe(9_900 + 2_000);
    // After the window a further 429 is a second drop.
    state = onRateLimited(state, policy, { now: 10_000, retryAfterMs: 2_000 });
    expect(state.cap).toBe(4);
  });

  it('cuts from the runs in use when they are fewer than the cap', () => {
    const state = onRateLimited(initialProviderCap(policy), policy, { now: 0, running: 4 });
    expect(state.cap).toBe(2);
  });

  it('never goes below 1', () => {
    let state = initialProviderCap({ ...policy, initialCap: 2 });
    for (let i = 0; i < 10; i++)
      state = onRateLimited(state, policy, { now: i * 100_000, retryAfterMs: 1_000 });
    expect(state.cap).toBe(1);
    expect(providerStartsAllowed(state, 10_000_000, 0)).toBe(1);
  });

  it('holds repeated drops longer (stepped cooldown), and forgets the streak after a quiet minute', () => {
    let state = initialProviderCap(policy);
    state = onRateLimited(state, policy, { now: 0, retryAfterMs: 1_000 });
    expect(state.holdUntil).toBe(1_000);
    state = onRateLimited(state, policy, { now: 10_000, retryAfterMs: 1_000 });
    expect(state.holdUntil).toBe(10_000 + 2_000);
    state = onRateLimited(state, policy, { now: 20_000, retryAfterMs: 1_000 });
    expect(state.holdUntil).toBe(20_000 + 4_000);
    expect(state.streak).toBe(3);
    // A quiet minute after the last drop: the next one is a first drop again.
    state = onRateLimited(state, policy, { now: 20_000 + 60_001, retryAfterMs: 1_000 });
    expect(state.streak).toBe(1);
    expect(state.holdUntil).toBe(20_000 + 60_001 + 1_000);
  });

  it('does not climb while starts are held', () => {
    let state = onRateLimited({ ...initialProviderCap(policy), cap: 4 }, policy, {
      now: 0,
      retryAfterMs: 5_000,
    });
    expect(state.cap).toBe(2);
    state = onCleanCompletion(state, policy, { running: 2, now: 4_999 });
    expect(state.cap).toBe(2);
    state = onCleanCompletion(state, policy, { running: 2, now: 5_000 });
    expect(state.cap).toBe(3);
  });

  it('a 429 without retry-after holds for the default second', () => {
    const state = onRateLimited(initialProviderCap(policy), policy, { now: 0 });
    expect(state.holdUntil).toBe(1_000);
  });

  it('caps the hold at the policy maximum however long retry-after or the streak', () => {
    const state = onRateLimited(initialProviderCap(policy), policy, { now: 0, retryAfterMs: 3_600_000 });
    expect(state.holdUntil).toBe(60_000);
  });

  it('climbs by one per clean completion while the cap is in use (running × 2 ≥ cap), up to the max', () => {
    let state = { ...initialProviderCap(policy), cap: 4 };
    state = onCleanCompletion(state, policy, { running: 1, now: 0 });
    expect(state.cap).toBe(4);
    state = onCleanCompletion(state, policy, { running: 2, now: 0 });
    expect(state.cap).toBe(5);
    for (let i = 0; i < 100; i++) state = onCleanCompletion(state, policy, { running: 32, now: 0 });
    expect(state.cap).toBe(32);
  });

  it('property: the cap stays within [1, max] and a hold never shortens, over any history', () => {
    const step = fc.oneof(
      fc.record({
        kind: fc.constant('limited' as const),
        dt: fc.nat(5_000),
        retry: fc.option(fc.nat(10_000)),
      }),
      fc.record({ kind: fc.constant('clean' as const), dt: fc.nat(5_000), running: fc.nat(40) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 32 }), fc.array(step, { maxLength: 60 }), (initialCap, steps) => {
        let state = initialProviderCap({ ...policy, initialCap });
        let now = 0;
        for (const s of steps) {
          now += s.dt;
          const before = state.holdUntil;
          state =
            s.kind === 'limited'
              ? onRateLimited(state, policy, s.retry === null ? { now } : { now, retryAfterMs: s.retry })
              : onCleanCompletion(state, policy, { running: s.running, now });
          expect(state.cap).toBeGreaterThanOrEqual(1);
          expect(state.cap).toBeLessThanOrEqual(32);
          expect(state.holdUntil).toBeGreaterThanOrEqual(before);
        }
      }),
      { numRuns: numRuns(1_000) },
    );
  });
});
