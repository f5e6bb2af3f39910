/** What each gateway publishes about itself in the cluster's registry. */
export interface GatewayEntry {
  /** Its host cap (the worker's concurrency). */
  cap: number;
  /** Runs it executes for the cluster now. */
  running: number;
  /** Their (origin) run ids: a stalled check asks whether a job's holder still executes it. */
  runs: string[];
  /** When it published this (ms since the epoch). */
  at: number;
  /** Its host's memory is below the per-spawn minimum: it takes no cluster job until it recovers. */
  memoryShort?: boolean;
}

/** `resource_status`'s `cluster` (cluster mode only). */
export interface ClusterStatus {
  name: string;
  /** This gateway's name. */
  gateway: string;
  /** Whether Redis answers now. */
  available: boolean;
  /** The cluster's provider cap now: BullMQ's global concurrency. */
  provider_cap: number;
  /**
   * `configured` (`cluster.provider_cap` as is) or `adaptive` (the shared AIMD value under it, with
   * `providers.adaptive_cap`).
   */
  provider_cap_source?: 'configured' | 'adaptive';
  /** `cluster.provider_cap`: the start value and ceiling of the adaptive cap. */
  provider_cap_ceiling?: number;
  /** Until when the provider's 429 holds every gateway's starts (queued runs wait); null = no hold. */
  hold_until?: string | null;
  /** When a gateway last reported a 429 / 529 / 503 to the shared cap; null = never. */
  last_rate_limited_at?: string | null;
  /** Runs executing across the cluster (BullMQ's active jobs). */
  running: number;
  /** Runs waiting in the cluster queue. */
  queued: number;
  /** Runs this gateway executes for the cluster now. */
  this_gateway_running?: number;
  /**
   * Gateways that published within three stalled intervals; `memory_short` marks one whose host is below
   * `agent.spawn_min_memory_gb`, which takes no cluster job until its memory recovers.
   */
  gateways: { name: string; cap: number; running: number; memory_short?: true }[];
}

/** The cluster status from the registry's entries; stale and unreadable entries are left out. */
export function clusterStatusOf(input: {
  name: string;
  gateway: string;
  providerCap: number;
  running: number;
  queued: number;
  entries: Record<string, string>;
  now: number;
  staleMs: number;
}): ClusterStatus {
  const gateways: ClusterStatus['gateways'] = [];
  for (const [name, raw] of Object.entries(input.entries)) {
    const entry = parseEntry(raw);
    if (!entry || typeof entry.at !== 'number' || input.now - entry.at > input.staleMs) continue;
    gateways.push({
      name,
      cap: Number(entry.cap ?? 0),
      running: Number(entry.running ?? 0),
      ...(entry.memoryShort === true ? { memory_short: true as const } : {}),
    });
  }
  gateways.sort((a, b) => a.name.localeCompare(b.name));
  return {
    name: input.name,
    gateway: input.gateway,
    available: true,
    provider_cap: input.providerCap,
    running: input.running,
    queued: input.queued,
    gateways,
  };
}

/** A registry entry as published; undefined when it is not JSON. */
export function parseEntry(raw: string): Partial<GatewayEntry> | undefined {
  try {
    return JSON.parse(raw) as Partial<GatewayEntry>;
  } catch {
    return undefined;
  }
}
