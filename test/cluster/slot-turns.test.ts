import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type SlotTurnKeys, SlotTurns, WAITER_LEASE_MS } from '../../src/cluster/redis/fair-worker.js';
import { type RedisServer, redisSkipReason, startRedisServer } from '../helpers/redis-server.js';

const skip = redisSkipReason();

/**
 * The fair provider slots' scripts (slot-ask / slot-taken / slot-freed.lua) on a real redis-server, on the
 * keys BullMQ keeps (an active and a wait list, the meta hash's concurrency, the marker set) set by hand.
 */
describe.skipIf(skip !== undefined)(
  `whose turn a freed provider slot is${skip ? ` (skipped: ${skip})` : ''}`,
  () => {
    let redis: RedisServer;
    let client: Redis;
    let n = 0;
    let keys: SlotTurnKeys;
    const turns = (gateway: string) => {
      const slot = new SlotTurns(client, keys, gateway);
      return {
        ask: async () => (await slot.ask()).granted,
        asked: () => slot.ask(),
        taken: (took: boolean) => slot.taken(took),
        freed: () => slot.freed(),
        leave: () => slot.leave(),
      };
    };
    const waiters = () => client.zrange(keys.waiters, '0', '-1');
    /** `cap` slots, `active` of them taken, `waiting` jobs queued. */
    const queue = async (cap: number, active: number, waiting: number) => {
      await client.hset(keys.meta, 'concurrency', cap);
      await client.del(keys.active, keys.wait);
      for (let k = 0; k < active; k++) await client.lpush(keys.active, `a${k}`);
      for (let k = 0; k < waiting; k++) await client.lpush(keys.wait, `w${k}`);
    };

    beforeAll(async () => {
      redis = await startRedisServer();
      client = new Redis(redis.url);
    });
    afterAll(async () => {
      client?.disconnect();
      await redis?.close();
    });
    beforeEach(() => {
      const ns = `crew:turns${n++}`;
      keys = {
        waiters: `${ns}:slot-waiters`,
        leases: `${ns}:slot-leases`,
        active: `${ns}:active`,
        wait: `${ns}:wait`,
        meta: `${ns}:meta`,
        marker: `${ns}:marker`,
        gateways: `${ns}:gateways`,
      };
    });

    it('a gateway that finds every slot taken waits, in the order it first asked, and keeps its place', async () => {
      await queue(2, 2, 3);
      expect(await turns('b').ask()).toBe(false);
      expect(await turns('c').ask()).toBe(false);
      expect(await turns('b').ask()).toBe(false); // asking again keeps b first
      expect(await waiters()).toEqual(['b', 'c']);
      // One slot frees: it is b's. a (the gateway that freed it, not waiting) and c are refused.
      await client.rpop(keys.active);
      expect(await turns('a').ask()).toBe(false);
      expect(await turns('c').ask()).toBe(false);
      expect(await turns('b').asked()).toEqual({ granted: true, waiting: true });
      await turns('b').taken(true);
      expect(await waiters()).toEqual(['c', 'a']);
      // b took it: the next freed slot is c's, then a's.
      await client.lpush(keys.active, 'b1');
      await client.rpop(keys.active);
      expect(await turns('a').ask()).toBe(false);
      expect(await turns('c').ask()).toBe(true);
    });

    it('more free slots than waiters ahead: a gateway takes one without waiting its turn', async () => {
      await queue(4, 1, 5);
      await client.zadd(keys.waiters, 1, 'b', 2, 'c');
      await client.zadd(keys.leases, Date.now() + 60_000, 'b', Date.now() + 60_000, 'c');
      expect(await turns('a').ask()).toBe(true); // 3 free, 2 ahead
      await client.lpush(keys.active, 'x');
      expect(await turns('a').ask()).toBe(false); // 2 free, 2 ahead
      expect(await turns('c').ask()).toBe(true); // 2 free, 1 ahead
    });

    it("a waiter whose lease lapsed (a gateway that died waiting) is dropped and holds no one's slot", async () => {
      await queue(1, 0, 2);
      await client.zadd(keys.waiters, 1, 'ghost');
      await client.zadd(keys.leases, Date.now() - 1, 'ghost');
      expect(await turns('a').ask()).toBe(true);
      expect(await waiters()).toEqual([]);
      // While the lease runs, the ghost's place holds.
      await client.zadd(keys.waiters, 1, 'ghost');
      await client.zadd(keys.leases, Date.now() + 60_000, 'ghost');
      expect(await turns('a').ask()).toBe(false);
    });

    it('without a cap set every ask is granted', async () => {
      await queue(1, 5, 5);
      await client.hdel(keys.meta, 'concurrency');
      expect(await turns('a').asked()).toEqual({ granted: true, waiting: false });
      expect(await waiters()).toEqual([]);
    });

    it('after asking BullMQ: served leaves; unserved with jobs queued waits; with none queued leaves', async () => {
      await queue(2, 0, 1);
      await turns('a').taken(false);
      const first = await client.zscore(keys.waiters, 'a');
      expect(first).not.toBeNull();
      await turns('a').taken(false);
      expect(await client.zscore(keys.waiters, 'a')).toBe(first); // keeps its first-wait time
      // The sets expire with the last lease: an idle cluster leaves nothing behind.
      expect(await client.pttl(keys.waiters)).toBeGreaterThan(0);
      expect(await client.pttl(keys.waiters)).toBeLessThanOrEqual(WAITER_LEASE_MS);
      await turns('a').taken(true);
      expect(await waiters()).toEqual([]);
      await turns('b').taken(false);
      await client.del(keys.wait);
      await turns('b').taken(false);
      expect(await waiters()).toEqual([]);
      await turns('c').ask();
      await turns('c').leave();
      expect(await waiters()).toEqual([]);
    });

    it("a freed slot wakes a worker while jobs are queued, every gateway's while some wait, and nothing grows", async () => {
      await queue(1, 1, 2);
      await turns('a').freed();
      expect(await client.zrange(keys.marker, '0', '-1')).toEqual(['0']);
      await client.hset(keys.gateways, 'a', '{}', 'b', '{}', 'c', '{}');
      await turns('b').ask();
      await turns('d').ask(); // waiting, not yet in the registry
      await turns('a').freed();
      await turns('a').freed();
      expect(await client.zrange(keys.marker, '0', '-1', 'WITHSCORES')).toEqual([
        '0',
        '0',
        'slot:a',
        '0',
        'slot:b',
        '0',
        'slot:c',
        '0',
        'slot:d',
        '0',
      ]);
      await client.del(keys.marker, keys.wait);
      await turns('a').freed();
      expect(await client.exists(keys.marker)).toBe(0);
    });
  },
);
