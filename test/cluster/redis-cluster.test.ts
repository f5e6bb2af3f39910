import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realClock } from '../../src/clock/real-clock.js';
import type { ClusterJob } from '../../src/cluster/cluster-link.js';
import { type ClusterGateway, RedisCluster } from '../../src/cluster/redis-cluster.js';
import { pollFor } from '../helpers/daemon-process.js';
import { type RedisServer, redisSkipReason, startRedisServer } from '../helpers/redis-server.js';

const skip = redisSkipReason();

/** A gateway that executes nothing (these links are never bound, or bound only to be closed). */
const idleGateway: ClusterGateway = {
  executeForCluster: () => new Promise(() => undefined),
  attachSink: () => () => undefined,
  cancel: () => ({ ok: true }),
  steer: () => ({ ok: true }),
  statusOf: () => undefined,
  outcomeOf: async () => undefined,
  pageOf: async () => ({ text: '' }),
};

describe.skipIf(skip !== undefined)(`the Redis cluster link${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await redis?.close();
  });

  const link = (gatewayName: string, name: string) =>
    new RedisCluster({
      url: redis.url,
      name,
      gatewayName,
      hostCap: 2,
      providerCap: 2,
      stalledIntervalMs: 30_000,
      maxQueued: 3,
      maxQueuedWaveMembers: 5,
      clock: realClock,
      log: () => undefined,
    });
  let n = 0;
  const job = (kind: ClusterJob['kind'], origin: string): ClusterJob => ({
    runId: `r${n++}`,
    kind,
    origin,
    spec: { task: 'x', agent: 'sim' },
  });
  /** An admission that dispatches `count` jobs of `kind`, as the gateway's step does. */
  const admitting = (l: RedisCluster, kind: ClusterJob['kind'], count: number) =>
    l.admit(kind, count, () => {
      for (let k = 0; k < count; k++) l.dispatch(job(kind, l.gatewayName), () => undefined);
      return { ok: true as const };
    });

  it('counts the queue bounds across gateways: single spawns, and waves fitted whole or refused whole', async () => {
    const a = link('a', 'bounds');
    const b = link('b', 'bounds');
    try {
      await pollFor('both links connected', () =>
        a.status().available && b.status().available ? true : undefined,
      );
      // No worker runs here, so every job stays queued: 3 singles fill the bound of 3, from two gateways.
      expect(await admitting(a, 'single', 1)).toEqual({ ok: true });
      expect(await admitting(b, 'single', 1)).toEqual({ ok: true });
      expect(await admitting(a, 'single', 1)).toEqual({ ok: true });
      const full = await admitting(b, 'single', 1);
      expect(full).toMatchObject({ refusal: { code: 'queue_full', limit: 3, current: 3 } });
      // Waves: 6 members cannot fit 5 queued places → refused whole; 5 fit; then not one more.
      expect(await admitting(a, 'wave', 6)).toMatchObject({
        refusal: { code: 'queue_full', limit: 5, current: 0 },
      });
      expect(await admitting(b, 'wave', 5)).toEqual({ ok: true });
      expect(await admitting(a, 'wave', 1)).toMatchObject({
        refusal: { code: 'queue_full', limit: 5, current: 5 },
      });
      expect(await admitting(a, 'single', 1)).toMatchObject({ refusal: { code: 'queue_full' } });
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('admissions waiting on one gateway share one turn of the admission lock; the bounds hold within it, in order', async () => {
    const a = link('a', 'batched');
    const probe = new Redis(redis.url);
    const setCalls = async () =>
      Number(/cmdstat_set:calls=(\d+)/.exec(await probe.info('commandstats'))?.[1] ?? 0);
    try {
      await pollFor('connected', () => (a.status().available ? true : undefined));
      const before = await setCalls();
      // Five singles and a wave arrive together: three singles fill the bound of 3, the next two are
      // refused, the wave (3 members, no provider room free) fits the wave bound of 5.
      const answers = await Promise.all([
        ...Array.from({ length: 5 }, () => admitting(a, 'single', 1)),
        admitting(a, 'wave', 3),
      ]);
      expect(answers.map((x) => ('refusal' in x ? x.refusal.code : 'ok'))).toEqual([
        'ok',
        'ok',
        'ok',
        'queue_full',
        'queue_full',
        'ok',
      ]);
      expect(answers[3]).toMatchObject({ refusal: { limit: 3, current: 3 } });
      // One lock for all six (each took one before, a round trip and a wait each).
      expect((await setCalls()) - before).toBe(1);
      // And every admitted job is in the queue when its admission answers.
      expect(await probe.llen('crew:batched:wait')).toBe(6);
    } finally {
      probe.disconnect();
      await a.close();
    }
  });

  it('close() leaves no socket or timer of its own behind', async () => {
    const count = () => {
      const info = process.getActiveResourcesInfo();
      return {
        sockets: info.filter((r) => r === 'TCPWrap' || r === 'TCPSocketWrap').length,
        timers: info.filter((r) => r === 'Timeout').length,
      };
    };
    // What the previous case closed finishes closing first.
    await new Promise((r) => setTimeout(r, 500));
    const before = count();
    const l = link('closer', 'closing');
    l.bind(idleGateway);
    await pollFor('connected', () => (l.status().available ? true : undefined));
    expect(count().sockets).toBeGreaterThan(before.sockets);
    await l.close();
    await pollFor(
      'sockets and timers released',
      () => {
        const after = count();
        return after.sockets <= before.sockets && after.timers <= before.timers ? true : undefined;
      },
      5000,
    );
  });
});
