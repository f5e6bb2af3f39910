/**
 * The adaptive provider cap (issue 17): how many runs may start against one model provider, beside the
 * host cap (the tighter binds). Loss-based AIMD on run starts, as the anchors do it (Netflix
 * concurrency-limits' AIMD limit, LiteLLM's cooldown, OpenClaw's stepped cooldown):
 *
 * - a 429 / 529 cuts the cap to `max(1, floor(cap × decrease))`, at most once per retry-after window, and
 *   holds every start until `now + retry-after` (queued runs wait; nothing is refused);
 * - repeated drops hold longer: the n-th drop within `streakWindowMs` of the one before holds
 *   retry-after × 2^(n−1), at most `maxHoldMs`;
 * - each clean completion while the cap is in use (`running × 2 ≥ cap`) and no hold lasts adds one, up to
 *   `maxCap`.
 *
 * Pure: state in, state out, time passed in. The constants and why are in docs/decisions.md.
 */

export interface ProviderCapPolicy {
  /** The cap before any signal from the provider. */
  initialCap: number;
  /** The ceiling a clean run of completions climbs to (`agent.subagent_auto_max`). */
  maxCap: number;
  /** Multiplicative decrease on a drop. @default 0.7 */
  decrease?: number;
  /** Hold when a 429 carries no `retry-after`. @default 1000 */
  defaultHoldMs?: number;
  /** The longest one hold lasts, whatever `retry-after` or the streak says. @default 60000 */
  maxHoldMs?: number;
  /** A drop this long after the previous one starts a new streak. @default 60000 */
  streakWindowMs?: number;
  /**
   * The shortest gap between two cuts, whatever `retry-after` says: a cut acts only as runs end, so
   * the 429s that follow it at once say nothing new. @default 10000
   */
  minDropIntervalMs?: number;
  /**
   * Providers whose cap the operator fixed (`providers.NAME.cap`): it never moves, though their 429s
   * still hold starts for the retry-after. @default {}
   */
  fixed?: Readonly<Record<string, number>>;
  /** Whether providers with no fixed cap get the adaptive one; false = they are bound by the host cap alone. @default true */
  adaptive?: boolean;
}

/** Whether the provider's starts are capped at all, and how. */
export function capSourceOf(
  policy: ProviderCapPolicy,
  provider: string,
): 'configured' | 'adaptive' | undefined {
  if ((policy.fixed?.[provider] ?? 0) > 0) return 'configured';
  return policy.adaptive === false ? undefined : 'adaptive';
}

/** The policy one provider's cap follows: a fixed cap starts and stays at its number. */
export function policyFor(policy: ProviderCapPolicy, provider: string): ProviderCapPolicy {
  const fixed = policy.fixed?.[provider] ?? 0;
  return fixed > 0 ? { ...policy, initialCap: fixed, maxCap: fixed } : policy;
}

export interface ProviderCapState {
  cap: number;
  /** Starts wait until this instant (ms); 0 = no hold. Never moves backwards. */
  holdUntil: number;
  /** When the cap was last cut; undefined before the first drop. */
  lastDropAt: number | undefined;
  /** A further 429 before this instant is part of the same drop (the retry-after window). */
  dropWindowUntil: number;
  /** Drops in the current streak (0 before the first). */
  streak: number;
  /** When the last 429 / 529 arrived, cut or not; `resource_status` shows it. */
  lastRateLimitedAt: number | undefined;
}

const DEFAULT_DECREASE = 0.7;
const DEFAULT_HOLD_MS = 1_000;
const DEFAULT_MAX_HOLD_MS = 60_000;
const DEFAULT_STREAK_WINDOW_MS = 60_000;
const DEFAULT_MIN_DROP_INTERVAL_MS = 10_000;

export function initialProviderCap(policy: ProviderCapPolicy): ProviderCapState {
  return {
    cap: clampCap(policy.initialCap, policy),
    holdUntil: 0,
    lastDropAt: undefined,
    dropWindowUntil: 0,
    streak: 0,
    lastRateLimitedAt: undefined,
  };
}

/** A 429 / 529 (or 503 with retry-after) from the provider, seen at `now`. */
export function onRateLimited(
  state: ProviderCapState,
  policy: ProviderCapPolicy,
  signal: { now: number; retryAfterMs?: number; running?: number },
): ProviderCapState {
  const { now } = signal;
  const retryAfterMs = Math.max(0, signal.retryAfterMs ?? policy.defaultHoldMs ?? DEFAULT_HOLD_MS);
  const maxHoldMs = policy.maxHoldMs ?? DEFAULT_MAX_HOLD_MS;
  if (now < state.dropWindowUntil) {
    // The same drop: the hold covers this 429's retry-after too, the cap is not cut again.
    return {
      ...state,
      holdUntil: Math.max(state.holdUntil, now + Math.min(retryAfterMs, maxHoldMs)),
      lastRateLimitedAt: now,
    };
  }
  const window = policy.streakWindowMs ?? DEFAULT_STREAK_WINDOW_MS;
  const streak = state.lastDropAt !== undefined && now - state.lastDropAt <= window ? state.streak + 1 : 1;
  const holdMs = Math.min(maxHoldMs, retryAfterMs * 2 ** (streak - 1));
  return {
    // Cut from what is in use when that is less than the cap: a cap far above the runs it admits
    // would otherwise take several cuts to bite.
    cap: clampCap(
      Math.floor(
        Math.min(state.cap, signal.running ? signal.running : state.cap) *
          (policy.decrease ?? DEFAULT_DECREASE),
      ),
      policy,
    ),
    holdUntil: Math.max(state.holdUntil, now + holdMs),
    lastDropAt: now,
    dropWindowUntil: now + Math.max(retryAfterMs, policy.minDropIntervalMs ?? DEFAULT_MIN_DROP_INTERVAL_MS),
    streak,
    lastRateLimitedAt: now,
  };
}

/** A run against this provider ended `completed` with no 429 in its life; `running` = still running. */
export function onCleanCompletion(
  state: ProviderCapState,
  policy: ProviderCapPolicy,
  load: { running: number; now: number },
): ProviderCapState {
  // While starts are held the provider has just said "slow down": no climb until the hold ends.
  if (load.now < state.holdUntil || load.running * 2 < state.cap) return state;
  return { ...state, cap: clampCap(state.cap + 1, policy) };
}

/** How many more runs may start against the provider now, with `running` already running. */
export function providerStartsAllowed(state: ProviderCapState, now: number, running: number): number {
  if (now < state.holdUntil) return 0;
  return Math.max(0, state.cap - running);
}

function clampCap(cap: number, policy: ProviderCapPolicy): number {
  return Math.max(1, Math.min(policy.maxCap, cap));
}

/**
 * The gateway's bound on model requests in flight to one provider (`providers.NAME.max_in_flight_requests`,
 * or adaptive when that is 0): a request over it waits at the gateway, in order, instead of being sent for
 * the provider to refuse. Adaptive, AIMD on requests as Netflix's concurrency-limits does it: a 429 / 529
 * sets the limit to `max(1, floor(in flight × decrease))` (once per `minDropIntervalMs`); each success
 * while the limit is in use (`in flight × 2 ≥ limit`) adds `1 / limit`, so about one per round trip.
 */
export interface RequestLimitState {
  /** Fractional while it climbs; `Math.floor` of it is the bound. */
  limit: number;
  dropWindowUntil: number;
}

export interface RequestLimitPolicy {
  initialLimit: number;
  maxLimit: number;
  /** @default 0.7 */
  decrease?: number;
  /** @default 1000 */
  minDropIntervalMs?: number;
}

export function initialRequestLimit(policy: RequestLimitPolicy): RequestLimitState {
  return { limit: Math.max(1, Math.min(policy.maxLimit, policy.initialLimit)), dropWindowUntil: 0 };
}

export function onRequestLimited(
  state: RequestLimitState,
  policy: RequestLimitPolicy,
  signal: { now: number; inFlight: number },
): RequestLimitState {
  if (signal.now < state.dropWindowUntil) return state;
  const from = Math.min(state.limit, Math.max(1, signal.inFlight));
  return {
    limit: Math.max(1, Math.floor(from * (policy.decrease ?? DEFAULT_DECREASE))),
    dropWindowUntil: signal.now + (policy.minDropIntervalMs ?? DEFAULT_HOLD_MS),
  };
}

export function onRequestSucceeded(
  state: RequestLimitState,
  policy: RequestLimitPolicy,
  load: { inFlight: number },
): RequestLimitState {
  if (load.inFlight * 2 < state.limit) return state;
  return { ...state, limit: Math.min(policy.maxLimit, state.limit + 1 / Math.floor(state.limit)) };
}

/** Whether one more request may be sent now, with `inFlight` already sent. */
export function mayRequest(state: RequestLimitState, inFlight: number): boolean {
  return inFlight < Math.floor(state.limit);
}
