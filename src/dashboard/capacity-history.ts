import type { Clock } from '../core/clock.js';

/** One point of the capacity chart: the peaks of a bucket (running, queued) and its last caps. */
export interface CapacitySample {
  /** The bucket's start (ISO). */
  t: string;
  running: number;
  queued: number;
  cap: number;
  /** The tightest provider's cap (the one with the most running), or null without providers. */
  provider_cap: number | null;
  provider_running: number | null;
}

export type CapacityReading = Omit<CapacitySample, 't'>;

interface Bucket extends CapacityReading {
  start: number;
}

/**
 * The capacity over the last hour (issue 32), which the daemon keeps nowhere else: a ring of fixed-width
 * buckets, each the peak running and queued seen in it and the caps last seen. Bounded: `buckets` full
 * buckets plus the current one, whatever the uptime or the sample rate.
 */
export class CapacityHistory {
  private readonly ring: Bucket[] = [];
  private readonly bucketMs: number;
  private readonly max: number;

  constructor(
    private readonly clock: Clock,
    options: { bucketMs?: number; buckets?: number } = {},
  ) {
    this.bucketMs = options.bucketMs ?? 60_000;
    this.max = (options.buckets ?? 60) + 1;
  }

  get size(): number {
    return this.ring.length;
  }

  get bucketSecs(): number {
    return this.bucketMs / 1000;
  }

  record(reading: CapacityReading): void {
    const start = Math.floor(this.clock.now() / this.bucketMs) * this.bucketMs;
    const last = this.ring.at(-1);
    if (last && last.start === start) {
      last.running = Math.max(last.running, reading.running);
      last.queued = Math.max(last.queued, reading.queued);
      last.cap = reading.cap;
      last.provider_cap = reading.provider_cap;
      last.provider_running =
        reading.provider_running === null
          ? null
          : Math.max(last.provider_running ?? 0, reading.provider_running);
      return;
    }
    this.ring.push({ start, ...reading });
    // Buckets older than the window go, however the clock jumped.
    const oldest = start - (this.max - 1) * this.bucketMs;
    while (this.ring.length > this.max || (this.ring[0] && this.ring[0].start < oldest)) this.ring.shift();
  }

  /** Oldest first. */
  samples(): CapacitySample[] {
    return this.ring.map(({ start, ...rest }) => ({ t: new Date(start).toISOString(), ...rest }));
  }
}
