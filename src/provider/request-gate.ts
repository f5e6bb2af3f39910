import type { Clock, TimerHandle } from '../core/clock.js';
import {
  initialRequestLimit,
  mayRequest,
  onRequestLimited,
  onRequestSucceeded,
  type RequestLimitPolicy,
  type RequestLimitState,
} from '../core/provider-cap.js';

/**
 * The bound on model requests in flight to one provider at the gateway
 * (`providers.NAME.max_in_flight_requests`): a request over it waits here, in order, instead of being
 * sent for the provider to refuse. The bound is the configured number, lowered by a 429 / 529 / 503 and
 * climbing back on successes (the request limiter of `provider-cap.ts`). The wait is bounded both ways:
 * at most `maxQueued` requests wait, each at most `maxWaitMs`; past either the request is refused at once
 * (the proxy answers it 429 with `retry-after`), so an agent never hangs on the gateway.
 */
export interface RequestGateOptions {
  /** The configured bound (> 0). */
  maxInFlight: number;
  clock: Clock;
  /** @default 64 */
  maxQueued?: number;
  /** @default 10000 */
  maxWaitMs?: number;
}

/** Why a request was not let through. */
export type GateRefusal = 'queue_full' | 'wait_expired';

interface Waiter {
  grant: () => void;
  refuse: (why: GateRefusal) => void;
  timer: TimerHandle;
}

export const DEFAULT_MAX_QUEUED_REQUESTS = 64;
export const DEFAULT_MAX_REQUEST_WAIT_MS = 10_000;

export class RequestGate {
  private state: RequestLimitState;
  private readonly policy: RequestLimitPolicy;
  private inFlight = 0;
  private readonly waiting: Waiter[] = [];
  private readonly maxQueued: number;
  private readonly maxWaitMs: number;

  constructor(private readonly options: RequestGateOptions) {
    this.policy = { initialLimit: options.maxInFlight, maxLimit: options.maxInFlight };
    this.state = initialRequestLimit(this.policy);
    this.maxQueued = options.maxQueued ?? DEFAULT_MAX_QUEUED_REQUESTS;
    this.maxWaitMs = options.maxWaitMs ?? DEFAULT_MAX_REQUEST_WAIT_MS;
  }

  /**
   * Calls `grant` once the request may be sent (at once when there is room and nobody waits), or
   * `refuse` when it may not wait. Returns a function that withdraws a request still waiting (the agent
   * went away); once granted, the caller must call `release` exactly once.
   */
  acquire(grant: () => void, refuse: (why: GateRefusal) => void): () => void {
    if (this.waiting.length === 0 && mayRequest(this.state, this.inFlight)) {
      this.inFlight++;
      grant();
      return () => undefined;
    }
    if (this.waiting.length >= this.maxQueued) {
      refuse('queue_full');
      return () => undefined;
    }
    const waiter: Waiter = {
      grant,
      refuse,
      timer: this.options.clock.setTimer(() => {
        this.remove(waiter);
        refuse('wait_expired');
      }, this.maxWaitMs),
    };
    this.waiting.push(waiter);
    return () => {
      if (this.remove(waiter)) this.options.clock.clearTimer(waiter.timer);
    };
  }

  /** A granted request ended with `status` (0 = never answered): its place goes to the next waiter. */
  release(status: number): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    const now = this.options.clock.now();
    if (status === 429 || status === 529 || status === 503) {
      this.state = onRequestLimited(this.state, this.policy, { now, inFlight: this.inFlight + 1 });
    } else if (status > 0 && status < 400) {
      this.state = onRequestSucceeded(this.state, this.policy, { inFlight: this.inFlight + 1 });
    }
    this.drain();
  }

  /** Requests in flight, waiting, and the bound now. */
  snapshot(): { in_flight: number; queued: number; limit: number } {
    return { in_flight: this.inFlight, queued: this.waiting.length, limit: Math.floor(this.state.limit) };
  }

  /** Refuses every waiter (the gateway is closing). */
  close(): void {
    for (const waiter of this.waiting.splice(0)) {
      this.options.clock.clearTimer(waiter.timer);
      waiter.refuse('wait_expired');
    }
  }

  private drain(): void {
    while (this.waiting.length > 0 && mayRequest(this.state, this.inFlight)) {
      const waiter = this.waiting.shift() as Waiter;
      this.options.clock.clearTimer(waiter.timer);
      this.inFlight++;
      waiter.grant();
    }
  }

  private remove(waiter: Waiter): boolean {
    const at = this.waiting.indexOf(waiter);
    if (at < 0) return false;
    this.waiting.splice(at, 1);
    return true;
  }
}
