import type { Gateway } from '../gateway/gateway.js';
import type { CapacityReading } from './capacity-history.js';

/**
 * What the capacity chart samples, from counters the gateway keeps anyway (no store read, no `/proc`):
 * runs holding a permit (starting or running), queued runs, the host cap, and the provider with the
 * most running beside its cap (the one nearest its limit; null without a provider).
 */
export function capacityReadingOf(gateway: Pick<Gateway, 'counts' | 'providerCaps'>): () => CapacityReading {
  return () => {
    const counts = gateway.counts();
    let provider: { cap: number; running: number } | undefined;
    for (const view of Object.values(gateway.providerCaps())) {
      if (!provider || view.running > provider.running) provider = view;
    }
    return {
      running: counts.running + counts.starting,
      queued: counts.queued,
      cap: counts.cap,
      provider_cap: provider?.cap ?? null,
      provider_running: provider?.running ?? null,
    };
  };
}
