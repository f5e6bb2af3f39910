import { FakeClock } from '../../src/clock/fake-clock.js';
import { MemoryCluster, type MemoryClusterLink } from '../../src/cluster/memory-cluster.js';
import { BOUNDS, clusterLinkConformance } from './cluster-link-conformance.js';

/** The in-memory cluster link passes the suite the Redis link passes (issue 30). */
clusterLinkConformance('the in-memory cluster link', async () => {
  const clock = new FakeClock();
  const cluster = new MemoryCluster({ ...BOUNDS, clock });
  const links: MemoryClusterLink[] = [];
  return {
    link: async (gatewayName, hostCap = 1) => {
      const link = cluster.link(gatewayName, hostCap);
      links.push(link);
      return link;
    },
    // A bound link with room takes the next job the cluster hands out: it is asking.
    asking: async (gatewayName) => cluster.links.get(gatewayName)?.hasRoom() ?? false,
    // Nothing waits on a clock here: what is due runs in the microtasks a turn of the loop lets run.
    eventually: async (what, probe) => {
      for (let turn = 0; turn < 100; turn++) {
        const value = await probe();
        if (value !== undefined) return value;
        await new Promise((resolve) => setImmediate(resolve));
      }
      throw new Error(`${what} never came`);
    },
    now: () => clock.now(),
    close: async () => {
      for (const link of links) await link.close();
    },
  };
});
