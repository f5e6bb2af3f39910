import { describe, expect, it } from 'vitest';
import { type Exchange, ProviderMetrics } from '../../src/provider/provider-metrics.js';

const exchange = (over: Partial<Exchange>): Exchange => ({
  provider: 'anthropic',
  runId: 'r1',
  status: 200,
  startedAt: 0,
  firstByteAt: 100,
  endedAt: 400,
  usage: { inputTokens: 10, outputTokens: 5 },
  ...over,
});

describe('ProviderMetrics', () => {
  it('sums a run’s usage over its requests and counts its rate-limited ones', () => {
    const m = new ProviderMetrics();
    m.started('anthropic');
    m.ended(exchange({}));
    m.started('anthropic');
    const usage = m.ended(
      exchange({ status: 429, retryAfterMs: 2000, usage: { inputTokens: 0, outputTokens: 0 } }),
    );
    expect(usage).toEqual({ input_tokens: 10, output_tokens: 5, requests: 2, rate_limited: 1 });
    expect(m.forgetRun('r1')).toEqual(usage);
    expect(m.runUsage('r1')).toBeUndefined();
  });

  it('reports per provider: in flight, statuses, error rate, latency percentiles, tokens in the last minute', () => {
    const m = new ProviderMetrics();
    m.started('openai');
    m.started('openai');
    m.ended(exchange({ provider: 'openai', endedAt: 1_000 }));
    m.ended(exchange({ provider: 'openai', status: 529, endedAt: 2_000 }));
    const t = m.traffic(2_000).openai;
    expect(t).toMatchObject({
      in_flight_requests: 0,
      requests: 2,
      rate_limited: 1,
      statuses: { '200': 1, '529': 1 },
      recent_error_rate: 0.5,
      tokens_per_minute: 30,
      ttfb_ms_p50: 100,
      last_429_at: new Date(2_000).toISOString(),
    });
    // A minute later the tokens have left the window.
    expect(m.traffic(61_500).openai?.tokens_per_minute).toBe(15);
    expect(m.traffic(63_000).openai?.tokens_per_minute).toBe(0);
  });

  it('remembers at most 10,000 runs (oldest forgotten first) and a ring of latencies, however many exchanges', () => {
    const m = new ProviderMetrics();
    for (let i = 0; i < 12_000; i++) {
      m.started('anthropic');
      m.ended(exchange({ runId: `r${i}`, endedAt: i }));
    }
    expect(m.runCount).toBe(10_000);
    expect(m.runUsage('r0')).toBeUndefined();
    expect(m.runUsage('r11999')).toBeDefined();
    expect(m.traffic(12_000).anthropic?.requests).toBe(12_000);
  });
});
