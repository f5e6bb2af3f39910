import { FakeClock } from '../../src/clock/fake-clock.js';
import { MemoryCluster } from '../../src/cluster/memory-cluster.js';
import { fakeWorld } from '../helpers/fake-gateway.js';
import { placementConformance } from './placement-conformance.js';

/**
 * The cluster placement on the in-memory cluster link keeps the contract the local placement keeps: one
 * gateway is the whole cluster, so every top-level run is a job its own worker takes and runs as a copy.
 */
placementConformance('the cluster placement (in-memory link)', async () => {
  const cluster = new MemoryCluster({
    providerCap: 2,
    maxQueued: 100,
    maxQueuedWaveMembers: 100,
    clock: new FakeClock(),
  });
  const link = cluster.link('g0', 2);
  const world = fakeWorld({ cap: 2, cluster: link });
  link.bind(world.executor);
  return {
    world,
    // Each turn lets the cluster pump, its copy start or end, and the outcome reach the origin.
    settle: async (ms = 0) => {
      for (let turn = 0; turn < 10; turn++) await world.clock.advance(ms / 10);
    },
    close: async () => {
      await world.gateway.close();
      await link.close();
    },
  };
});
