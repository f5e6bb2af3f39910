import { afterEach, describe, expect, it } from 'vitest';
import type { ClusterStatus } from '../../src/cluster/cluster-status.js';
import { Dashboard } from '../../src/dashboard/dashboard.js';
import type { LiveMessage } from '../../src/dashboard/live-feed.js';
import { toRunView } from '../../src/gateway/run-view.js';
import { type FakeWorld, fakeWorld } from '../helpers/fake-gateway.js';

/**
 * The cluster panel's data: the page renders `capacity.cluster` (snapshot, then each `capacity` message),
 * so the read model must carry it whole and publish a change to it on the capacity cadence even when
 * nothing on this host changed (a run executing on another gateway moves only the cluster's numbers).
 */

const HOST_RESOURCES = { cap: 2, cap_source: 'pinned', posture: 'ok', running: 0, queued: 0 };

const cluster = (running: number, g1Running: number): ClusterStatus => ({
  name: 'test',
  gateway: 'g0',
  available: true,
  provider_cap: 3,
  running,
  queued: 0,
  this_gateway_running: running - g1Running,
  gateways: [
    { name: 'g0', cap: 2, running: running - g1Running },
    { name: 'g1', cap: 2, running: g1Running },
  ],
});

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function rig(resources: () => Record<string, unknown>): { world: FakeWorld; dashboard: Dashboard } {
  const world = fakeWorld();
  const dashboard = new Dashboard({
    gateway: world.gateway,
    viewsOf: (ids) => world.store.runs({ ids: [...ids], limit: ids.length }).map(toRunView),
    resources,
    selPath: '/nonexistent/security_events.jsonl',
    clock: world.clock,
    readOnly: false,
    historyMax: 100,
    queueBounds: { singles: 32, waveMembers: 5000 },
    capacityIntervalMs: 1000,
  });
  cleanups.push(async () => {
    dashboard.close();
    await world.gateway.close();
  });
  return { world, dashboard };
}

describe('the dashboard carries the cluster', () => {
  it('the snapshot and the capacity read carry resource_status’s cluster whole; single-host mode has none', () => {
    let status: ClusterStatus | undefined = cluster(1, 1);
    const { dashboard } = rig(() => ({ ...HOST_RESOURCES, ...(status ? { cluster: status } : {}) }));
    expect(dashboard.snapshot().capacity.cluster).toEqual(cluster(1, 1));
    expect(dashboard.capacity().cluster).toEqual(cluster(1, 1));
    status = undefined;
    expect('cluster' in dashboard.capacity()).toBe(false);
  });

  it('a change in the cluster alone is one capacity message on the next compare; no change, no message', async () => {
    let status = cluster(0, 0);
    const { world, dashboard } = rig(() => ({ ...HOST_RESOURCES, cluster: status }));
    dashboard.activate();
    const seen: LiveMessage[] = [];
    cleanups.push(dashboard.feed.subscribe((m) => seen.push(m)));

    await world.clock.advance(1000);
    expect(seen).toEqual([]);

    // Two runs start on g1: this host's numbers are the same, the cluster's are not.
    status = cluster(2, 2);
    await world.clock.advance(999);
    expect(seen).toEqual([]);
    await world.clock.advance(1);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ type: 'capacity', capacity: { cluster: cluster(2, 2) } });

    await world.clock.advance(3000);
    expect(seen).toHaveLength(1);

    // Redis goes away: the figures stay as last seen, the availability changes, and that is news too.
    status = { ...status, available: false };
    await world.clock.advance(1000);
    expect(seen).toHaveLength(2);
    expect(seen[1]).toMatchObject({
      type: 'capacity',
      capacity: { cluster: { available: false, running: 2 } },
    });
  });

  it('the header says what binds the next start: the provider’s hold, the provider cap, every host cap, or nothing', () => {
    let status: ClusterStatus = cluster(1, 1);
    const { world, dashboard } = rig(() => ({ ...HOST_RESOURCES, cluster: status }));
    const now = world.clock.now();
    // One of three running, both gateways have room: nothing binds.
    expect(dashboard.capacity().binds).toBeNull();
    // Three of three: the provider cap binds, whatever room the gateways have.
    status = cluster(3, 1);
    expect(dashboard.capacity().binds).toBe('provider_cap');
    // Every gateway at its host cap under a larger provider cap: the host caps bind.
    status = { ...cluster(4, 2), provider_cap: 6 };
    expect(dashboard.capacity().binds).toBe('host_caps');
    // One gateway full and the other short of memory (it takes no job): the host caps bind too.
    status = { ...cluster(2, 2), provider_cap: 6 };
    expect(dashboard.capacity().binds).toBeNull();
    status.gateways = [
      { name: 'g0', cap: 2, running: 0, memory_short: true },
      { name: 'g1', cap: 2, running: 2 },
    ];
    expect(dashboard.capacity().binds).toBe('host_caps');
    // A 429's hold binds while it lasts, then no longer.
    status = { ...cluster(1, 1), hold_until: new Date(now + 5000).toISOString() };
    expect(dashboard.capacity().binds).toBe('provider_hold');
    status = { ...cluster(1, 1), hold_until: new Date(now - 1).toISOString() };
    expect(dashboard.capacity().binds).toBeNull();
  });

  it('single-host mode has no binds figure (the cap cell says it)', () => {
    const { dashboard } = rig(() => ({ ...HOST_RESOURCES }));
    expect('binds' in dashboard.capacity()).toBe(false);
  });
});
