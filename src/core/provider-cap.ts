/**
 * The adaptive provider cap (issue 17): how many runs may start against one model provider, beside the
 * host cap (the tighter binds). Loss-based AIMD on run starts, as the anchors do it (Netflix
 * concurrency-limits' AIMD limit, LiteLLM's cooldown, OpenClaw's stepped cooldown):
 *
 * - a 429 / 529 cuts the cap to `max(1, floor(cap × decrease))`, at most once per retry-after window, and
 *   holds every start until `now + retry-after` (queued runs wait; nothing is refused);
 * - repeated drops hold longer: the n-th drop within `streakWindowMs` of the one before holds
 *   retry-after × 2^(n−1), at most `maxHoldMs`;
 * - each clean completion while the cap is in use (`running × 2 ≥ cap`) adds one, up to `maxCap`.
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
  signal: { now: number; retryAfterMs?: number },
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
    cap: clampCap(Math.floor(state.cap * (policy.decrease ?? DEFAULT_DECREASE)), policy),
    holdUntil: Math.max(state.holdUntil, now + holdMs),
    lastDropAt: now,
    dropWindowUntil: now + Math.max(retryAfterMs, policy.defaultHoldMs ?? DEFAULT_HOLD_MS),
    streak,
    lastRateLimitedAt: now,
  };
}

/** A run against this provider ended `completed` with no 429 in its life; `running` = still running. */
export function onCleanCompletion(
  state: ProviderCapState,
  policy: ProviderCapPolicy,
  load: { running: number },
): ProviderCapState {
  if (load.running * 2 < state.cap) return state;
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
