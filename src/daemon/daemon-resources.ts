import type { ClusterStatus } from '../cluster/cluster-status.js';
import type { CapResult } from '../core/cap.js';
import type { CrewConfig } from '../core/config-schema.js';
import { ownValue } from '../core/own.js';
import type { Gateway } from '../gateway/gateway.js';
import type { StartupCap } from '../host/cap-at-start.js';
import type { HostProbe } from '../host/host-probe.js';
import type { MemoryGate } from '../host/memory-gate.js';
import { type ResourceStatus, resourceStatus } from '../host/resource-status.js';
import type { ProviderGateway } from '../provider/provider-gateway.js';
import type { Containment } from '../runners/run-cell.js';
import type { SpawnerStatus } from '../runners/spawner.js';

/** `resource_status` as the daemon answers it: the host's figures, containment, cluster and providers. */
export type DaemonResources = ResourceStatus & {
  containment: { kind: Containment['kind']; reason: Containment['reason'] };
  /** Which helper starts command runs and why (the native one, or Node's where it cannot be built). */
  spawner: SpawnerStatus;
  cluster?: ClusterStatus;
  providers?: Record<string, object>;
};

export interface ResourceParts {
  config: CrewConfig;
  now: () => number;
  gateway: Gateway;
  probe: HostProbe;
  gate: MemoryGate;
  startup: StartupCap;
  /** The cap that binds (`cluster.host_cap` in cluster mode, else the one sized at start). */
  hostCap: CapResult;
  containment: Containment;
  spawner: { status(): SpawnerStatus };
  cluster: { status(): ClusterStatus } | undefined;
  providerGateway: ProviderGateway | undefined;
}

/** What `resource_status`, `GET /api/resources`, the dashboard and the metrics read, each time asked. */
export function daemonResources(parts: ResourceParts): () => DaemonResources {
  const { config, gateway, probe, gate, startup, hostCap, containment, spawner, cluster, providerGateway } =
    parts;
  return () => {
    const counts = gateway.counts();
    const status = resourceStatus({
      probe: {
        memory: () => gate.reading(),
        cpuCount: () => probe.cpuCount(),
        loadAverage: () => probe.loadAverage(),
      },
      minMemoryGb: config['agent.spawn_min_memory_gb'],
      cap: hostCap,
      costs: startup.costs,
      basis: hostCap === startup.cap ? startup.basis : { ...startup.basis, pinned_by: 'cluster.host_cap' },
      running: counts.running + counts.starting,
      runningTopLevel: counts.topLevel,
      queued: counts.queued,
    });
    const contained = {
      ...status,
      containment: { kind: containment.kind, reason: containment.reason },
      spawner: spawner.status(),
    };
    const withCluster = cluster ? { ...contained, cluster: cluster.status() } : contained;
    if (!providerGateway) return withCluster;
    // Each provider Crew has seen: its cap and hold (the scheduler's) beside its traffic (the gateway's).
    const caps = gateway.providerCaps();
    const traffic = providerGateway.metrics.traffic(parts.now());
    const limits = providerGateway.requestLimits();
    const providers: Record<string, object> = {};
    for (const name of new Set([...Object.keys(caps), ...Object.keys(traffic), ...Object.keys(limits)])) {
      providers[name] = {
        ...ownValue(caps, name),
        ...ownValue(traffic, name),
        ...ownValue(limits, name),
      };
    }
    return { ...withCluster, providers };
  };
}
