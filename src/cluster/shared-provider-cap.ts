import {
  initialProviderCap,
  onCleanCompletion,
  onRateLimited,
  type ProviderCapPolicy,
  type ProviderCapState,
} from '../core/provider-cap.js';

/**
 * Where the cluster's provider cap lives (one Redis key beside BullMQ's queue): one consistent read, and a
 * compare-and-set that also applies the cap (BullMQ's global concurrency) and the hold (BullMQ's rate
 * limit) in the same atomic step, so what the queue enforces is always what the state says.
 *
 * Left out: the arithmetic (this file's {@link SharedProviderCap} does it with `provider-cap.ts`, the same
 * functions single-host mode uses) and who reports what (the executing gateway reports its runs' 429s).
 */
export interface CapCell {
  /** The stored state (`null` when none), the runs executing across the cluster, and the cluster's time (ms). */
  read(): Promise<{ raw: string | null; running: number; now: number }>;
  /**
   * Stores `next` only if the stored state is still `expected`, and then sets the queue's concurrency to
   * `apply.cap` and holds its starts for `apply.holdMs` (never shortening a longer hold). False = the state
   * changed meanwhile (nothing written).
   */
  swap(expected: string | null, next: string, apply: { cap: number; holdMs: number }): Promise<boolean>;
}

/** `configured`: `cluster.provider_cap` as is (a 429 still holds starts); `adaptive`: AIMD under it. */
export type ClusterCapSource = 'configured' | 'adaptive';

/** A compare-and-set that lost this many times in a row gives up (the next signal tries again). */
export const MAX_SWAP_ATTEMPTS = 16;

/**
 * The cluster's one provider cap, shared by every gateway through a {@link CapCell}: a 429 / 529 on any
 * gateway cuts it as on one host (at most once per retry-after window, cluster-wide, because the window is
 * part of the shared state) and holds every gateway's starts; a clean completion anywhere raises it by one,
 * never above `cluster.provider_cap`. Each change is read → the pure function of `provider-cap.ts` →
 * compare-and-set, retried when another gateway changed it meanwhile.
 */
export class SharedProviderCap {
  readonly policy: ProviderCapPolicy;
  /** The state as this gateway last read or wrote it (`resource_status`). */
  private last: ProviderCapState;

  constructor(
    private readonly cell: CapCell,
    /** `cluster.provider_cap`: the start value and ceiling of the adaptive cap; the cap itself when configured. */
    readonly ceiling: number,
    readonly source: ClusterCapSource,
  ) {
    this.policy = { initialCap: ceiling, maxCap: ceiling };
    this.last = initialProviderCap(this.policy);
  }

  /** The state as this gateway last saw it. */
  get state(): ProviderCapState {
    return this.last;
  }

  /**
   * Creates the shared state when there is none (a new cluster, or a Redis that restarted empty) and
   * applies it to the queue; a configured cap is set to `cluster.provider_cap`, an adaptive one brought
   * under it. Every gateway does this when Redis answers (again).
   */
  ensure(): Promise<ProviderCapState | undefined> {
    return this.change((state) => {
      if (state === undefined) return initialProviderCap(this.policy);
      const cap = this.source === 'configured' ? this.ceiling : Math.min(state.cap, this.ceiling);
      return { ...state, cap: Math.max(1, cap) };
    }, true);
  }

  /** A run executing here was answered 429 / 529 / 503: cut the cap (once per window) and hold starts. */
  rateLimited(retryAfterMs?: number): Promise<ProviderCapState | undefined> {
    return this.change((state, running, now) => {
      const after = onRateLimited(state ?? initialProviderCap(this.policy), this.policy, {
        now,
        running,
        ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      });
      // A configured cap is the operator's: the 429 holds starts, the cap stays (as on one host).
      return this.source === 'configured' ? { ...after, cap: this.ceiling } : after;
    });
  }

  /** A run executed here completed with no 429 in its life: the cap climbs by one (same rule as one host). */
  cleanCompletion(): Promise<ProviderCapState | undefined> {
    return this.change((state, running, now) =>
      onCleanCompletion(state ?? initialProviderCap(this.policy), this.policy, { running, now }),
    );
  }

  /** Takes the state another gateway wrote (the periodic refresh) so `resource_status` shows it. */
  observe(raw: string | null): void {
    const state = decodeCapState(raw);
    if (state) this.last = state;
  }

  /**
   * One read → compute → compare-and-set, retried on a lost race. Writes only when the state changes
   * (`always`: also when not, to apply it to the queue). Undefined when every attempt lost.
   */
  private async change(
    next: (state: ProviderCapState | undefined, running: number, now: number) => ProviderCapState,
    always = false,
  ): Promise<ProviderCapState | undefined> {
    for (let attempt = 0; attempt < MAX_SWAP_ATTEMPTS; attempt++) {
      const { raw, running, now } = await this.cell.read();
      const before = decodeCapState(raw);
      const after = next(before, running, now);
      const encoded = encodeCapState(after);
      if (!always && before !== undefined && encoded === raw) {
        this.last = before;
        return before;
      }
      const holdMs = Math.max(0, after.holdUntil - now);
      if (await this.cell.swap(raw, encoded, { cap: after.cap, holdMs })) {
        this.last = after;
        return after;
      }
    }
    return undefined;
  }
}

/** The state as stored: a JSON object of numbers (absent optional fields left out). */
export function encodeCapState(state: ProviderCapState): string {
  return JSON.stringify({
    cap: state.cap,
    holdUntil: state.holdUntil,
    dropWindowUntil: state.dropWindowUntil,
    streak: state.streak,
    ...(state.lastDropAt !== undefined ? { lastDropAt: state.lastDropAt } : {}),
    ...(state.lastRateLimitedAt !== undefined ? { lastRateLimitedAt: state.lastRateLimitedAt } : {}),
  });
}

/** The stored state, or undefined when there is none or it is not one (it is then created afresh). */
export function decodeCapState(raw: string | null): ProviderCapState | undefined {
  if (!raw) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const num = (x: unknown) => typeof x === 'number' && Number.isFinite(x);
  if (!num(v.cap) || (v.cap as number) < 1 || !num(v.holdUntil) || !num(v.dropWindowUntil) || !num(v.streak))
    return undefined;
  return {
    cap: Math.floor(v.cap as number),
    holdUntil: v.holdUntil as number,
    dropWindowUntil: v.dropWindowUntil as number,
    streak: v.streak as number,
    lastDropAt: num(v.lastDropAt) ? (v.lastDropAt as number) : undefined,
    lastRateLimitedAt: num(v.lastRateLimitedAt) ? (v.lastRateLimitedAt as number) : undefined,
  };
}

/** `resource_status`'s `cluster` fields for the cap, at `now`. */
export function capView(
  cap: Pick<SharedProviderCap, 'state' | 'source' | 'ceiling'>,
  now: number,
): {
  provider_cap: number;
  provider_cap_source: ClusterCapSource;
  provider_cap_ceiling: number;
  hold_until: string | null;
  last_rate_limited_at: string | null;
} {
  const { state } = cap;
  return {
    provider_cap: state.cap,
    provider_cap_source: cap.source,
    provider_cap_ceiling: cap.ceiling,
    hold_until: state.holdUntil > now ? new Date(state.holdUntil).toISOString() : null,
    last_rate_limited_at:
      state.lastRateLimitedAt !== undefined ? new Date(state.lastRateLimitedAt).toISOString() : null,
  };
}
