import {
  capSourceOf,
  initialProviderCap,
  onCleanCompletion,
  onRateLimited,
  type ProviderCapState,
  policyFor,
  providerStartsAllowed,
} from '../provider-cap.js';
import type { SchedulerEvent, SchedulerLimits } from '../scheduler-types.js';
import type { Run, RunId, TerminalStatus } from '../types.js';

/** One provider's cap as the scheduler holds it (`resource_status`'s `providers`). */
export interface ProviderStatus {
  cap: number;
  /** `configured` (`providers.NAME.cap`) or `adaptive`. */
  source: 'configured' | 'adaptive';
  holdUntil: number;
  running: number;
  lastRateLimitedAt?: number;
}

/**
 * The provider gate (DESIGN §5, the provider cap): each provider's cap and hold, the provider of each
 * permit, and the live roots that met a 429. It answers how many of the next runs their providers let
 * start, and learns from 429s and clean completions.
 */
export class ProviderGate {
  /** Each provider's adaptive cap, from its first run on (`limits.provider` set). */
  private readonly caps = new Map<string, ProviderCapState>();
  /** The provider of each permit's run (a root may end before its permit returns). */
  private readonly permitProvider = new Map<RunId, string>();
  /** Live runs that met a 429: their completion is not a clean one. */
  private readonly limitedRuns = new Set<RunId>();

  constructor(private readonly limits: SchedulerLimits) {}

  /** Whether any provider has a cap yet (until then the gate lets everything through). */
  isActive(): boolean {
    return this.caps.size > 0;
  }

  /** A permit was granted to `rootId`: it counts against its provider until it returns. */
  bind(rootId: RunId, provider: string | undefined): void {
    if (provider !== undefined) this.permitProvider.set(rootId, provider);
  }

  /** `rootId`'s permit returned (a second call is a no-op). */
  unbind(rootId: RunId): void {
    this.permitProvider.delete(rootId);
  }

  /** The earliest end of a hold still to come after `now`, if any. */
  nextHoldEnd(now: number): number | undefined {
    let wake: number | undefined;
    for (const state of this.caps.values()) {
      if (state.holdUntil > now && (wake === undefined || state.holdUntil < wake)) wake = state.holdUntil;
    }
    return wake;
  }

  /**
   * How many of `next`, from the front, each provider's cap and hold let start now. The first that may not
   * stops the count: the queue is FIFO across providers (one provider's hold keeps the runs behind it
   * waiting too; most hosts call one provider).
   */
  room(next: readonly { provider?: string | undefined }[], now: number): number {
    const policy = this.limits.provider;
    if (!policy) return next.length;
    const starting = new Map<string, number>();
    let room = 0;
    for (const run of next) {
      if (run.provider !== undefined && capSourceOf(policy, run.provider) !== undefined) {
        const state = this.capOf(run.provider);
        const extra = starting.get(run.provider) ?? 0;
        if (providerStartsAllowed(state, now, this.running(run.provider) + extra) <= 0) break;
        starting.set(run.provider, extra + 1);
      }
      room++;
    }
    return room;
  }

  private capOf(provider: string): ProviderCapState {
    let state = this.caps.get(provider);
    if (!state) {
      const policy = this.limits.provider ?? { initialCap: this.limits.cap, maxCap: this.limits.cap };
      state = initialProviderCap(policyFor(policy, provider));
      this.caps.set(provider, state);
    }
    return state;
  }

  /** Top-level runs holding a permit against `provider` (their trees run under it). */
  private running(provider: string): number {
    let running = 0;
    for (const p of this.permitProvider.values()) if (p === provider) running++;
    return running;
  }

  /** A 429 / 529 / 503 from `event.provider`; `liveRootId` is the live root of the run that met it. */
  limited(
    event: Extract<SchedulerEvent, { type: 'provider_limited' }>,
    liveRootId: RunId | undefined,
    now: number,
  ): void {
    const policy = this.limits.provider;
    // Only a live root: an entry for one that ended would never be removed.
    if (liveRootId !== undefined) this.limitedRuns.add(liveRootId);
    if (!policy) return;
    const source = capSourceOf(policy, event.provider);
    if (source === undefined) return;
    const before = this.capOf(event.provider);
    const after = onRateLimited(before, policyFor(policy, event.provider), {
      now,
      ...(event.retryAfterMs !== undefined ? { retryAfterMs: event.retryAfterMs } : {}),
      running: this.running(event.provider),
    });
    // A configured cap is the operator's: the 429 holds starts, but the cap stays.
    this.caps.set(event.provider, source === 'configured' ? { ...after, cap: before.cap } : after);
  }

  /** A top-level run ended: a clean completion (no 429 in its tree) lets its provider's cap climb. */
  runEnded(run: Run, status: TerminalStatus, now: number): void {
    const limited = this.limitedRuns.delete(run.id);
    const policy = this.limits.provider;
    if (!policy || run.provider === undefined || run.depth !== 1 || status !== 'completed' || limited) return;
    this.caps.set(
      run.provider,
      onCleanCompletion(this.capOf(run.provider), policyFor(policy, run.provider), {
        running: this.running(run.provider),
        now,
      }),
    );
  }

  /** Each provider's cap, hold and running count, for `resource_status`. */
  status(): Record<string, ProviderStatus> {
    const out: Record<string, ProviderStatus> = {};
    const policy = this.limits.provider;
    for (const [provider, state] of this.caps) {
      const source = policy && capSourceOf(policy, provider);
      if (source === undefined) continue;
      out[provider] = {
        cap: state.cap,
        source,
        holdUntil: state.holdUntil,
        running: this.running(provider),
        ...(state.lastRateLimitedAt !== undefined ? { lastRateLimitedAt: state.lastRateLimitedAt } : {}),
      };
    }
    return out;
  }

  /** Whether a queued run waits for its provider (cap reached or starts held) rather than for a permit. */
  waitsFor(run: Run, now: number): { holdUntil?: number } | undefined {
    if (!this.limits.provider || run.status !== 'queued' || run.provider === undefined) return undefined;
    if (capSourceOf(this.limits.provider, run.provider) === undefined) return undefined;
    const state = this.caps.get(run.provider);
    if (!state) return undefined;
    if (now < state.holdUntil) return { holdUntil: state.holdUntil };
    return this.running(run.provider) >= state.cap ? {} : undefined;
  }
}
