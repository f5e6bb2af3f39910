/**
 * A provider with a hidden concurrency limit, and the policies that start runs against it (issue 17's
 * benchmark). The model, stepped every 50 ms of simulated time:
 *
 * - a run is a sequence of model requests (6–14, uniform) with tool work between them: request latency
 *   lognormal, median 3 s (σ 0.5); tool work lognormal, median 1.5 s (σ 0.5). So a run holds a request
 *   in flight about two thirds of its life.
 * - the provider answers 429 (`retry-after: 2`) to a request that arrives while N requests are already in
 *   flight; N is unknown to the policies.
 * - an agent that gets a 429 waits retry-after × 2^(k−1) (k = the 429s for this request so far) and tries
 *   again; after 4 such 429s on one request it gives up and the run fails (its work lost), as CLIs do.
 * - the backlog never runs dry: goodput is the completed runs per minute over 30 simulated minutes.
 * - policies: **fixed C** (at most C runs at once, starts as soon as one ends); **adaptive**: the host cap
 *   (32 = `agent.subagent_auto_max`) and the provider cap of `src/core/provider-cap.ts`, fed every 429
 *   and every clean completion (a run that completed with no 429), exactly as the gateway feeds it.
 */
import {
  initialProviderCap,
  initialRequestLimit,
  mayRequest,
  onCleanCompletion,
  onRateLimited,
  onRequestLimited,
  onRequestSucceeded,
  type ProviderCapPolicy,
  providerStartsAllowed,
  type RequestLimitPolicy,
} from '../../src/core/provider-cap.js';
import { normal, prng } from '../random.js';

export const STEP_MS = 50;
export const HORIZON_MS = 30 * 60_000;
export const RETRY_AFTER_MS = 2_000;
export const MAX_429_PER_REQUEST = 4;
export const HOST_CAP = 32;
export const ADAPTIVE_POLICY: ProviderCapPolicy = { initialCap: 8, maxCap: HOST_CAP };
export const REQUEST_POLICY: RequestLimitPolicy = { initialLimit: 8, maxLimit: 256 };

/**
 * `adaptive`: the provider cap on starts and the gateway's adaptive request bound (Crew's default);
 * `adaptive-starts`: the provider cap on starts alone, for comparison.
 */
export type Policy = { kind: 'fixed'; cap: number } | { kind: 'adaptive' } | { kind: 'adaptive-starts' };

export interface Outcome {
  completed: number;
  failed: number;
  requests: number;
  rateLimited: number;
  /** Completed runs per simulated minute. */
  goodputPerMin: number;
  /** 429s over every request sent, 0..1. */
  rateLimitedShare: number;
  /** The adaptive cap's range over the run (fixed: the cap). */
  capMin: number;
  capMax: number;
}

interface Live {
  requestsLeft: number;
  phase: 'request' | 'tool' | 'backoff' | 'waiting';
  until: number;
  limitedThisRequest: number;
  limitedEver: boolean;
}

export function simulate(hiddenLimit: number, policy: Policy, seed: number): Outcome {
  const random = prng(seed);
  const lognormal = (median: number) => median * Math.exp(0.5 * normal(random));
  const adaptive = policy.kind !== 'fixed';
  const limitsRequests = policy.kind === 'adaptive';
  let requestLimit = initialRequestLimit(REQUEST_POLICY);
  const waiting: Live[] = [];
  let cap =
    policy.kind === 'fixed'
      ? { ...initialProviderCap({ initialCap: policy.cap, maxCap: policy.cap }) }
      : initialProviderCap(ADAPTIVE_POLICY);
  let capMin = cap.cap;
  let capMax = cap.cap;
  const live: Live[] = [];
  let inFlight = 0;
  let completed = 0;
  let failed = 0;
  let requests = 0;
  let rateLimited = 0;

  const sendRequest = (run: Live, now: number): void => {
    if (limitsRequests && !mayRequest(requestLimit, inFlight)) {
      run.phase = 'waiting';
      waiting.push(run);
      return;
    }
    requests++;
    if (inFlight >= hiddenLimit) {
      rateLimited++;
      run.limitedEver = true;
      run.limitedThisRequest++;
      if (limitsRequests) requestLimit = onRequestLimited(requestLimit, REQUEST_POLICY, { now, inFlight });
      if (adaptive)
        cap = onRateLimited(cap, ADAPTIVE_POLICY, {
          now,
          retryAfterMs: RETRY_AFTER_MS,
          running: live.length,
        });
      run.phase = 'backoff';
      run.until = now + RETRY_AFTER_MS * 2 ** (run.limitedThisRequest - 1);
      return;
    }
    inFlight++;
    run.phase = 'request';
    run.until = now + lognormal(3_000);
  };

  for (let now = 0; now < HORIZON_MS; now += STEP_MS) {
    for (let i = live.length - 1; i >= 0; i--) {
      const run = live[i] as Live;
      if (run.until > now) continue;
      if (run.phase === 'backoff') {
        if (run.limitedThisRequest > MAX_429_PER_REQUEST) {
          live.splice(i, 1);
          failed++;
          continue;
        }
        sendRequest(run, now);
      } else if (run.phase === 'waiting') {
      } else if (run.phase === 'request') {
        if (limitsRequests) requestLimit = onRequestSucceeded(requestLimit, REQUEST_POLICY, { inFlight });
        inFlight--;
        run.requestsLeft--;
        run.limitedThisRequest = 0;
        if (run.requestsLeft === 0) {
          live.splice(i, 1);
          completed++;
          if (adaptive && !run.limitedEver) {
            cap = onCleanCompletion(cap, ADAPTIVE_POLICY, { running: live.length + 1, now });
          }
        } else {
          run.phase = 'tool';
          run.until = now + lognormal(1_500);
        }
      } else {
        sendRequest(run, now);
      }
    }
    while (waiting.length > 0 && mayRequest(requestLimit, inFlight))
      sendRequest(waiting.shift() as Live, now);
    const limit =
      policy.kind === 'fixed'
        ? policy.cap
        : Math.min(HOST_CAP, live.length + providerStartsAllowed(cap, now, live.length));
    while (live.length < limit) {
      const run: Live = {
        requestsLeft: 6 + Math.floor(random() * 9),
        phase: 'tool',
        until: now,
        limitedThisRequest: 0,
        limitedEver: false,
      };
      live.push(run);
      sendRequest(run, now);
    }
    capMin = Math.min(capMin, cap.cap);
    capMax = Math.max(capMax, cap.cap);
  }
  return {
    completed,
    failed,
    requests,
    rateLimited,
    goodputPerMin: completed / (HORIZON_MS / 60_000),
    rateLimitedShare: requests === 0 ? 0 : rateLimited / requests,
    capMin,
    capMax,
  };
}
