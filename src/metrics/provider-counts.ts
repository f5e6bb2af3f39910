import type { ProviderCall } from '../gateway/provider-feed.js';
import { isRateLimited } from '../provider/provider-metrics.js';

/**
 * Model requests through the provider gateway since the daemon started: by provider and HTTP status,
 * the rate-limited ones (429, 529, 503: what lowers the provider cap), and their tokens. Fed by the provider gateway's `onExchange`, beside the
 * gateway's own feed. Providers are the configured ones and statuses numbers, so the label sets stay small.
 */
export class ProviderCounts {
  /** `provider\0status` → requests. */
  readonly requests = new Map<string, number>();
  readonly rateLimited = new Map<string, number>();
  readonly tokens = new Map<string, number>();

  observe(call: Pick<ProviderCall, 'provider' | 'status' | 'tokens'>): void {
    const key = `${call.provider}\0${call.status}`;
    this.requests.set(key, (this.requests.get(key) ?? 0) + 1);
    if (isRateLimited(call.status))
      this.rateLimited.set(call.provider, (this.rateLimited.get(call.provider) ?? 0) + 1);
    this.tokens.set(call.provider, (this.tokens.get(call.provider) ?? 0) + call.tokens);
  }
}
