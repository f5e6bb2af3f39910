import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisServer, redisSkipReason, startRedisServer } from '../helpers/redis-server.js';

const skip = redisSkipReason();

describe.skipIf(skip !== undefined)(`the test Redis${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await redis?.close();
  });

  it('answers on its loopback port, keeps nothing across a restart, and comes back on the same port', async () => {
    const client = new Redis(redis.url, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
    });
    client.on('error', () => undefined); // it is meant to lose its server below
    try {
      await client.connect();
      await client.set('k', 'v');
      expect(await client.get('k')).toBe('v');
      await redis.stop();
      expect(redis.isRunning()).toBe(false);
      await expect(client.get('k')).rejects.toThrow();
      await redis.start();
      const again = new Redis(redis.url);
      try {
        expect(await again.ping()).toBe('PONG');
        // No persistence: a restarted Redis is empty (the cluster tests rely on it being a real loss).
        expect(await again.get('k')).toBeNull();
      } finally {
        again.disconnect();
      }
    } finally {
      client.disconnect();
    }
  });
});
