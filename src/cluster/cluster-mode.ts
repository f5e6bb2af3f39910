import type { Clock } from '../core/clock.js';
import type { CrewConfig } from '../core/config-schema.js';
import type { Gateway } from '../gateway/gateway.js';
import { ClusterExecutor } from './cluster-executor.js';
import { isClusterCopyParent } from './cluster-link.js';
import { ClusterPlacement } from './cluster-placement.js';
import type { ClusterStatus } from './cluster-status.js';

/** Cluster mode as the daemon holds it: the placement its gateway is built with, then joining and leaving. */
export interface ClusterMode {
  readonly placement: ClusterPlacement;
  /**
   * Starts executing cluster jobs on `gateway` (the executing side, {@link ClusterExecutor}); `pending` are
   * the parents its outbox still owes events to (those of copies run here go to their origins).
   */
  bind(gateway: Gateway, pending: readonly string[]): void;
  /** `resource_status`'s `cluster`. */
  status(): ClusterStatus;
  /** The worker takes no new job (the gateway is closing). */
  stopTaking(): Promise<void>;
  close(): Promise<void>;
}

/** What the daemon knows that the config does not say. */
export interface ClusterModeDeps {
  gatewayName: string;
  /** The cap that binds this host in cluster mode (the worker's concurrency). */
  hostCap: number;
  clock: Clock;
  log: (line: string) => void;
  /** Whether this host's memory is below the per-spawn minimum (the worker pauses meanwhile). */
  memoryCritical: () => boolean;
}

/**
 * Composes cluster mode (issue 18, issue 30) when `cluster.redis_url` is set; undefined otherwise. The
 * Redis link is imported only then, so a single-host daemon loads no Redis client and makes no connection.
 */
export async function startClusterMode(
  config: CrewConfig,
  deps: ClusterModeDeps,
): Promise<ClusterMode | undefined> {
  if (config['cluster.redis_url'] === '') return undefined;
  const { RedisCluster } = await import('./redis/redis-cluster.js');
  const link = new RedisCluster({
    url: config['cluster.redis_url'],
    name: config['cluster.name'],
    gatewayName: deps.gatewayName,
    hostCap: deps.hostCap,
    providerCap: config['cluster.provider_cap'],
    // The provider gateway's adaptive cap, cluster-wide: one shared value under `cluster.provider_cap`.
    adaptiveCap: config['providers.enabled'] && config['providers.adaptive_cap'],
    stalledIntervalMs: config['cluster.stalled_interval_ms'],
    maxQueued: config['agent.subagent_max_queued'],
    maxQueuedWaveMembers: config['agent.subagent_max_queued_wave_members'],
    clock: deps.clock,
    log: deps.log,
    memoryCritical: deps.memoryCritical,
  });
  return {
    placement: new ClusterPlacement(link),
    bind: (gateway, pending) =>
      link.bind(new ClusterExecutor(gateway, deps.log), pending.filter(isClusterCopyParent)),
    status: () => link.status(),
    stopTaking: () => link.stopTaking(),
    close: () => link.close(),
  };
}
