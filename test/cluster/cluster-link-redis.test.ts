import { Redis } from 'ioredis';
import { afterAll, describe } from 'vitest';
import { realClock } from '../../src/clock/real-clock.js';
import { RedisCluster } from '../../src/cluster/redis/redis-cluster.js';
import { pollFor } from '../helpers/daemon-process.js';
import { type RedisServer, redisSkipReason, startRedisServer } from '../helpers/redis-server.js';
import { BOUNDS, clusterLinkConformance } from './cluster-link-conformance.js';

const skip = redisSkipReason();

/** The Redis cluster link passes the suite the in-memory link passes (issue 30), on a real redis-server. */
describe.skipIf(skip !== undefined)(`the Redis link${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let redis: RedisServer | undefined;
  let client: Redis | undefined;
  let clusters = 0;
  afterAll(async () => {
    client?.disconnect();
    await redis?.close();
  });
  clusterLinkConformance('the Redis cluster link', async () => {
    redis ??= await startRedisServer();
    const url = redis.url;
    client ??= new Redis(url);
    const looker = client;
    // A namespace per case: nothing one leaves in Redis reaches the next.
    const name = `conformance${clusters++}`;
    const links: RedisCluster[] = [];
    return {
      link: async (gatewayName, hostCap = 1) => {
        const link = new RedisCluster({
          url,
          name,
          gatewayName,
          hostCap,
          ...BOUNDS,
          stalledIntervalMs: 4000,
          clock: realClock,
          log: () => undefined,
        });
        links.push(link);
        await pollFor(`${gatewayName} connected`, () => (link.status().available ? true : undefined), 10_000);
        return link;
      },
      // BullMQ names its worker's connections `<prefix>:<base64 queue>:w:<worker>`; the one blocked in
      // BZPOPMIN on the queue's marker is a worker that asked for a job, got none, and waits for one.
      asking: async (gatewayName) => {
        const worker = `name=crew:${Buffer.from(name).toString('base64')}:w:${gatewayName} `;
        const clients = (await looker.client('LIST')) as string;
        return clients
          .split('\n')
          .some(
            (line) => line.includes(worker) && / flags=\S*b/.test(line) && line.includes(' cmd=bzpopmin'),
          );
      },
      eventually: (what, probe) => pollFor(what, probe, 15_000),
      now: () => Date.now(),
      close: async () => {
        await Promise.all(links.map((link) => link.close()));
      },
    };
  });
});
