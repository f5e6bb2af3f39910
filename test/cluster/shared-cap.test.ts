import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realClock } from '../../src/clock/real-clock.js';
import type { ClusterJob } from '../../src/cluster/cluster-link.js';
import { type ClusterGateway, RedisCluster } from '../../src/cluster/redis/redis-cluster.js';
import type { SchedulerReply } from '../../src/core/scheduler-types.js';
import { pollFor } from '../helpers/daemon-process.js';
import { type RedisServer, redisSkipReason, startRedisServer } from '../helpers/redis-server.js';

/**
 * The shared provider cap against a real `redis-server`, with two cluster links (two gateways) whose
 * "runs" the test ends by hand: a 429 reported on one lowers BullMQ's global concurrency for both, holds
 * every start until the retry-after passes, and clean completions raise it back to `cluster.provider_cap`.
 */

const skip = redisSkipReason();
/** The retry-after the provider's 429 carries. */
const HOLD_MS = 4000;

/** A gateway whose runs last until the test completes them; it knows which jobs it executes. */
class HandGateway implements ClusterGateway {
  readonly running = new Map<string, () => void>();
  private readonly completed = new Set<string>();
  executeForCluster(job: ClusterJob): Promise<SchedulerReply> {
    return new Promise((resolve) => {
      this.running.set(job.runId, () => {
        this.running.delete(job.runId);
        this.completed.add(`x${job.runId}`);
        resolve({ kind: 'admitted', ok: true, runs: [], existing: false });
      });
    });
  }
  attachSink() {
    return () => undefined;
  }
  cancel() {
    return { ok: true };
  }
  steer() {
    return { ok: true };
  }
  statusOf(id: string) {
    return this.completed.has(id) ? 'completed' : 'running';
  }
  async outcomeOf() {
    return undefined;
  }
  async pageOf() {
    return { text: '' };
  }
  releaseForCluster() {}
  releasedElsewhere() {}
  /** Completes `n` of its runs (the oldest first). */
  complete(n: number): void {
    for (const done of [...this.running.values()].slice(0, n)) done();
  }
}

describe.skipIf(skip !== undefined)(`the shared provider cap${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let redis: RedisServer;
  let client: Redis;
  beforeAll(async () => {
    redis = await startRedisServer();
    client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    client.on('error', () => undefined);
  });
  afterAll(async () => {
    client?.disconnect();
    await redis?.close();
  });

  const link = (gatewayName: string, name: string) =>
    new RedisCluster({
      url: redis.url,
      name,
      gatewayName,
      hostCap: 5,
      providerCap: 6,
      adaptiveCap: true,
      // Long enough that a loaded machine's late lock renewal does not make a held job stall.
      stalledIntervalMs: 10_000,
      maxQueued: 100,
      maxQueuedWaveMembers: 100,
      clock: realClock,
      log: () => undefined,
    });

  it('a 429 on one gateway lowers the cap both apply, holds every start until retry-after, and clean completions raise it back', async () => {
    const name = 'shared';
    const a = link('a', name);
    const b = link('b', name);
    const ga = new HandGateway();
    const gb = new HandGateway();
    const active = async () => client.llen(`crew:${name}:active`);
    const concurrency = async () => Number(await client.hget(`crew:${name}:meta`, 'concurrency'));
    /** Samples the active count for `ms` and answers the most seen at once. */
    const most = async (ms: number) => {
      let max = 0;
      const end = Date.now() + ms;
      while (Date.now() < end) {
        max = Math.max(max, await active());
        await new Promise((r) => setTimeout(r, 25));
      }
      return max;
    };
    try {
      a.bind(ga);
      b.bind(gb);
      await pollFor('both links connected', () =>
        a.status().available && b.status().available ? true : undefined,
      );
      let n = 0;
      const admitted = await a.admit('single', 16, () => {
        for (let k = 0; k < 16; k++)
          a.dispatch(
            { runId: `r${n++}`, kind: 'single', origin: 'a', spec: { task: 'x', agent: 'sim' } },
            () => undefined,
          );
        return { ok: true as const };
      });
      expect(admitted).toEqual({ ok: true });
      // The configured ceiling binds first: 6 across both hosts, though each could run 5.
      await pollFor('6 running', async () => ((await active()) === 6 ? true : undefined));
      expect(await concurrency()).toBe(6);
      expect(a.status()).toMatchObject({
        provider_cap: 6,
        provider_cap_source: 'adaptive',
        hold_until: null,
      });

      // The provider answers 429 (retry-after 4 s) to a run one gateway executes.
      const [reporter, executing] = gb.running.size > 0 ? [b, gb] : [a, ga];
      const reportedAt = Date.now();
      reporter.providerLimited([...executing.running.keys()][0] as string, HOLD_MS);
      // Cut from the 6 in use: floor(6 × 0.7) = 4, in Redis at once, and both gateways show it.
      await pollFor('the cut in Redis', async () => ((await concurrency()) === 4 ? true : undefined));
      await pollFor(
        'both gateways to show the cut and the hold',
        () =>
          [a, b].every((l) => l.status().provider_cap === 4 && l.status().hold_until !== null)
            ? true
            : undefined,
        5000,
      );
      // Every run ends now; during the hold nothing starts, on either gateway, though 10 wait.
      ga.complete(6);
      gb.complete(6);
      await pollFor('the running runs to finish', async () => ((await active()) === 0 ? true : undefined));
      // (4 s leaves room for the polls above on a loaded machine.)
      const heldFor = HOLD_MS - (Date.now() - reportedAt) - 300;
      expect(heldFor).toBeGreaterThan(500);
      expect(await most(heldFor)).toBe(0);
      // Completions during a hold raise nothing.
      expect(await concurrency()).toBe(4);
      // After the hold, at most the lowered number runs at once: 4, not 6 (nobody completes meanwhile).
      await pollFor('starts to resume after the hold', async () =>
        (await active()) === 4 ? true : undefined,
      );
      expect(Date.now() - reportedAt).toBeGreaterThanOrEqual(HOLD_MS - 100);
      expect(await most(600)).toBe(4);

      // Clean completions while the cap is in use raise it by one each, up to the ceiling 6.
      for (const expected of [5, 6]) {
        const gateway = ga.running.size > 0 ? ga : gb;
        gateway.complete(1);
        await pollFor(`the cap to climb to ${expected}`, async () =>
          (await concurrency()) === expected ? true : undefined,
        );
      }
      await pollFor('6 running again', async () => ((await active()) === 6 ? true : undefined));
      // At the ceiling a clean completion raises nothing.
      ga.complete(6);
      gb.complete(6);
      await pollFor('the last two to start', async () => ((await active()) === 2 ? true : undefined));
      expect(await concurrency()).toBe(6);
      await pollFor(
        'both gateways to show the climb',
        () => ([a, b].every((l) => l.status().provider_cap === 6) ? true : undefined),
        5000,
      );
      // Bounded: the shared cap is one key, whatever happened.
      expect(await client.keys(`crew:${name}:provider-cap*`)).toEqual([`crew:${name}:provider-cap`]);
    } finally {
      await a.close();
      await b.close();
    }
  }, 60_000);

  it('a Redis that restarts empty gets the cap again from the gateways, at the ceiling; a configured gateway sets its number', async () => {
    const name = 'restart';
    const a = link('a', name);
    try {
      a.bind(new HandGateway());
      const concurrency = async () => Number(await client.hget(`crew:${name}:meta`, 'concurrency'));
      await pollFor('the cap applied', async () => ((await concurrency()) === 6 ? true : undefined));
      await redis.stop();
      await redis.start();
      // Nothing survived (no persistence); the link's reconnect creates the state and applies it again.
      await pollFor('the cap applied again', async () =>
        (await concurrency().catch(() => 0)) === 6 ? true : undefined,
      );
      expect(await client.get(`crew:${name}:provider-cap`)).toContain('"cap":6');
      // A gateway whose cap is configured sets the cap to its own number (a cut of the adaptive cap included).
      await client.set(
        `crew:${name}:provider-cap`,
        JSON.stringify({ cap: 2, holdUntil: 0, dropWindowUntil: 0, streak: 1 }),
      );
      const fixed = new RedisCluster({
        url: redis.url,
        name,
        gatewayName: 'f',
        hostCap: 1,
        providerCap: 5,
        stalledIntervalMs: 2000,
        maxQueued: 10,
        maxQueuedWaveMembers: 10,
        clock: realClock,
        log: () => undefined,
      });
      try {
        await pollFor('the configured cap applied', async () =>
          (await concurrency()) === 5 ? true : undefined,
        );
        expect(fixed.status()).toMatchObject({ provider_cap: 5, provider_cap_source: 'configured' });
      } finally {
        await fixed.close();
      }
    } finally {
      await a.close();
    }
  }, 60_000);
});
