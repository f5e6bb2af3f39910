import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';

const RESOLUTION_MS = 20;

/**
 * The daemon's event-loop delay (Node's `monitorEventLoopDelay`, sampled every 20 ms by libuv, no JS
 * timer): quantiles since the previous scrape, then reset, so each scrape says how the loop did lately.
 * Node records the whole interval between samples, so the resolution is taken off: 0 is a loop that
 * was never late. `close()` stops the sampling.
 */
export class EventLoopDelay {
  private readonly histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });

  constructor() {
    this.histogram.enable();
  }

  /** Seconds at each quantile (0..1) and the maximum, since the last call; then starts afresh. */
  takeSeconds(quantiles: readonly number[]): {
    quantiles: Map<number, number>;
    maxSeconds: number;
    samples: number;
  } {
    const h = this.histogram;
    const late = (ns: number) => Math.max(0, ns / 1e6 - RESOLUTION_MS) / 1000;
    const out = new Map<number, number>();
    // An empty histogram reports its bounds (1e-9 s and 9.2e9 s); say 0 until it saw a sample.
    for (const q of quantiles) out.set(q, h.count > 0 ? late(h.percentile(q * 100)) : 0);
    const result = { quantiles: out, maxSeconds: h.count > 0 ? late(h.max) : 0, samples: h.count };
    h.reset();
    return result;
  }

  close(): void {
    this.histogram.disable();
  }
}
