import type { ProviderUsage } from '../store/store.js';
import type { TokenUsage } from './usage-meter.js';

/**
 * What the provider gateway saw, per provider and per run (issue 17): requests in flight, latency, status
 * codes, rate limits with their `retry-after`, and tokens. Everything here is bounded: status codes are a
 * small set, latencies and outcomes are rings, tokens per minute a window of at most one entry per
 * exchange in the last minute (pruned, and capped), runs are forgotten when they end (and capped, oldest
 * first, in case a caller forgets).
 */

/** A run's usage as the run shape shows it (`usage` on DESIGN §6's run). */
export interface RunUsage {
  input_tokens: number;
  output_tokens: number;
  requests: number;
  rate_limited: number;
}

/** The run shape's usage as the store keeps it. */
export function toProviderUsage(usage: RunUsage): ProviderUsage {
  return {
    inputTokens: usage.input_tokens,
    outputTokens: usage.output_tokens,
    requests: usage.requests,
    rateLimited: usage.rate_limited,
  };
}

/** One request through the gateway, once its response has ended (or failed). */
export interface Exchange {
  provider: string;
  runId: string;
  /** HTTP status from the upstream; 502 when it could not be reached. */
  status: number;
  /** `retry-after` in ms, when the response carried one. */
  retryAfterMs?: number;
  startedAt: number;
  /** When the first body byte arrived; undefined if none did. */
  firstByteAt?: number;
  endedAt: number;
  usage: TokenUsage;
}

/** The statuses that mean "slow down": rate limited, overloaded, unavailable. */
export function isRateLimited(status: number): boolean {
  return status === 429 || status === 529 || status === 503;
}

const LATENCY_RING = 256;
const OUTCOME_RING = 100;
const TOKEN_WINDOW_MS = 60_000;
const TOKEN_WINDOW_MAX = 10_000;
const MAX_RUNS = 10_000;

class Ring {
  private readonly values: number[] = [];
  private next = 0;
  constructor(private readonly size: number) {}
  push(value: number): void {
    if (this.values.length < this.size) this.values.push(value);
    else this.values[this.next] = value;
    this.next = (this.next + 1) % this.size;
  }
  all(): readonly number[] {
    return this.values;
  }
}

function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? null;
}

class ProviderStats {
  inFlight = 0;
  requests = 0;
  rateLimited = 0;
  readonly statuses = new Map<number, number>();
  lastRateLimitedAt: number | undefined;
  lastRetryAfterSecs: number | undefined;
  readonly ttfbMs = new Ring(LATENCY_RING);
  readonly totalMs = new Ring(LATENCY_RING);
  /** 1 = the exchange failed (status ≥ 400 or unreachable). */
  readonly outcomes = new Ring(OUTCOME_RING);
  readonly tokens: { at: number; tokens: number }[] = [];
}

/** The `providers` section of `resource_status`, one entry per provider (the cap fields come from the scheduler). */
export interface ProviderTraffic {
  in_flight_requests: number;
  requests: number;
  rate_limited: number;
  statuses: Record<string, number>;
  last_429_at: string | null;
  last_retry_after_secs: number | null;
  /** Failed share of the last 100 exchanges, 0..1. */
  recent_error_rate: number;
  tokens_per_minute: number;
  ttfb_ms_p50: number | null;
  ttfb_ms_p90: number | null;
  total_ms_p50: number | null;
  total_ms_p90: number | null;
}

export class ProviderMetrics {
  private readonly providers = new Map<string, ProviderStats>();
  private readonly runs = new Map<string, RunUsage>();

  started(provider: string): void {
    this.stats(provider).inFlight++;
  }

  /** Records one finished exchange; returns the run's usage so far. */
  ended(exchange: Exchange): RunUsage {
    const stats = this.stats(exchange.provider);
    stats.inFlight = Math.max(0, stats.inFlight - 1);
    stats.requests++;
    stats.statuses.set(exchange.status, (stats.statuses.get(exchange.status) ?? 0) + 1);
    const limited = isRateLimited(exchange.status);
    if (limited) {
      stats.rateLimited++;
      stats.lastRateLimitedAt = exchange.endedAt;
      stats.lastRetryAfterSecs =
        exchange.retryAfterMs === undefined ? undefined : exchange.retryAfterMs / 1000;
    }
    if (exchange.firstByteAt !== undefined) stats.ttfbMs.push(exchange.firstByteAt - exchange.startedAt);
    stats.totalMs.push(exchange.endedAt - exchange.startedAt);
    stats.outcomes.push(exchange.status >= 400 ? 1 : 0);
    const tokens = exchange.usage.inputTokens + exchange.usage.outputTokens;
    if (tokens > 0) {
      stats.tokens.push({ at: exchange.endedAt, tokens });
      if (stats.tokens.length > TOKEN_WINDOW_MAX) stats.tokens.shift();
    }

    const run = this.runs.get(exchange.runId) ?? {
      input_tokens: 0,
      output_tokens: 0,
      requests: 0,
      rate_limited: 0,
    };
    this.runs.delete(exchange.runId);
    const next: RunUsage = {
      input_tokens: run.input_tokens + exchange.usage.inputTokens,
      output_tokens: run.output_tokens + exchange.usage.outputTokens,
      requests: run.requests + 1,
      rate_limited: run.rate_limited + (limited ? 1 : 0),
    };
    this.runs.set(exchange.runId, next);
    if (this.runs.size > MAX_RUNS) {
      const oldest = this.runs.keys().next().value;
      if (oldest !== undefined) this.runs.delete(oldest);
    }
    return next;
  }

  /** The run's usage so far, if it made any request. */
  runUsage(runId: string): RunUsage | undefined {
    return this.runs.get(runId);
  }

  /** Forgets an ended run (its usage is on its record by then); returns what it had. */
  forgetRun(runId: string): RunUsage | undefined {
    const usage = this.runs.get(runId);
    this.runs.delete(runId);
    return usage;
  }

  /** Runs currently remembered (for the bound's test). */
  get runCount(): number {
    return this.runs.size;
  }

  traffic(now: number): Record<string, ProviderTraffic> {
    const out: Record<string, ProviderTraffic> = {};
    for (const [name, stats] of this.providers) {
      while (stats.tokens.length > 0 && (stats.tokens[0]?.at ?? now) < now - TOKEN_WINDOW_MS)
        stats.tokens.shift();
      const outcomes = stats.outcomes.all();
      out[name] = {
        in_flight_requests: stats.inFlight,
        requests: stats.requests,
        rate_limited: stats.rateLimited,
        statuses: Object.fromEntries([...stats.statuses].map(([code, n]) => [String(code), n])),
        last_429_at:
          stats.lastRateLimitedAt === undefined ? null : new Date(stats.lastRateLimitedAt).toISOString(),
        last_retry_after_secs: stats.lastRetryAfterSecs ?? null,
        recent_error_rate: outcomes.length === 0 ? 0 : outcomes.reduce((a, b) => a + b, 0) / outcomes.length,
        tokens_per_minute: stats.tokens.reduce((sum, entry) => sum + entry.tokens, 0),
        ttfb_ms_p50: percentile(stats.ttfbMs.all(), 50),
        ttfb_ms_p90: percentile(stats.ttfbMs.all(), 90),
        total_ms_p50: percentile(stats.totalMs.all(), 50),
        total_ms_p90: percentile(stats.totalMs.all(), 90),
      };
    }
    return out;
  }

  private stats(provider: string): ProviderStats {
    let stats = this.providers.get(provider);
    if (!stats) {
      stats = new ProviderStats();
      this.providers.set(provider, stats);
    }
    return stats;
  }
}
