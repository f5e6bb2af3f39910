import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { startClusterMode } from '../cluster/cluster-mode.js';
import type { CapResult } from '../core/cap.js';
import type { CrewConfig } from '../core/config-schema.js';
import type { MemoryGate } from '../host/memory-gate.js';
import type { DaemonBase } from './daemon-parts.js';

/**
 * In cluster mode the host cap that binds is the worker's concurrency: `cluster.host_cap`, or the cap
 * sized at start. The gateway and `resource_status` use it, so the figures say what binds.
 */
export function hostCapOf(config: CrewConfig, sizedAtStart: CapResult): CapResult {
  return config['cluster.redis_url'] !== '' && config['cluster.host_cap'] > 0
    ? { ...sizedAtStart, cap: config['cluster.host_cap'], capSource: 'pinned' }
    : sizedAtStart;
}

/**
 * Cluster mode (issue 18): only with `cluster.redis_url` set; imported only then, so a single-host
 * daemon loads no Redis client and makes no connection. Closed after the gateway (cleanups run in
 * reverse), so the outcomes of runs the gateway's close ended still reach their origins.
 */
export async function openCluster(base: DaemonBase, hostCap: CapResult, gate: MemoryGate) {
  const cluster = await startClusterMode(base.config, {
    gatewayName: base.config['cluster.gateway_name'] || defaultGatewayName(base.crewHome),
    hostCap: hostCap.cap,
    clock: base.clock,
    log: base.log,
    memoryCritical: () => gate.check().isBelowMin,
  });
  if (cluster) base.cleanups.add(() => cluster.close());
  return cluster;
}

/** A gateway's cluster name when `cluster.gateway_name` is empty: the host name and a hash of its home. */
function defaultGatewayName(crewHome: string): string {
  const host =
    hostname()
      .toLowerCase()
      .replace(/[^a-z0-9_.-]/g, '-')
      .slice(0, 40) || 'host';
  return `${host}-${createHash('sha256').update(crewHome).digest('hex').slice(0, 8)}`;
}
