import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisSkipReason } from '../helpers/redis-server.js';
import {
  type ClusterRig,
  type EventSeen,
  eventsOf,
  runsOf,
  SHARED_SIM_CONFIG,
  sampleCaps,
  spawnVia,
  startCluster,
} from './cluster-rig.js';

const skip = redisSkipReason();
const HOST_CAPS = [2, 3, 3];
const PROVIDER_CAP = 5;

describe.skipIf(skip !== undefined)(
  `cluster mode: three gateways, one Redis${skip ? ` (skipped: ${skip})` : ''}`,
  () => {
    let rig: ClusterRig;
    beforeAll(async () => {
      rig = await startCluster({
        hostCaps: HOST_CAPS,
        providerCap: PROVIDER_CAP,
        config: SHARED_SIM_CONFIG,
      });
    }, 60_000);
    afterAll(async () => {
      await rig?.close();
    });

    it('200 runs through three gateways: never more than the provider cap at once, no gateway past its own cap, every completion to its parent once', async () => {
      const stopSampling = sampleCaps(rig, HOST_CAPS.length);

      // 150 single spawns and two waves of 25, spread over the gateways; each gateway's parent is its own.
      const expected = new Map<string, string>(); // run id → parent
      const parentOf = (i: number) => `cli:parent-g${i}`;
      const waves = new Map<string, number>(); // batch id → gateway
      const spawns: Promise<void>[] = [];
      for (let n = 0; n < 150; n++) {
        const i = n % 3;
        spawns.push(
          spawnVia(rig.gateways[i]!, parentOf(i), {
            task: `#sim sleep=${40 + (n % 4) * 20}ms bytes=64 run ${n}`,
          }).then((answer) => {
            expect(answer.ok, JSON.stringify(answer)).toBe(true);
            expected.set(answer.runs![0]!.id, parentOf(i));
          }),
        );
      }
      for (const i of [1, 2]) {
        spawns.push(
          spawnVia(rig.gateways[i]!, parentOf(i), {
            tasks: Array.from({ length: 25 }, (_, k) => `#sim sleep=50ms bytes=32 wave ${i} member ${k}`),
          }).then((answer) => {
            expect(answer.ok, JSON.stringify(answer)).toBe(true);
            waves.set(answer.batch_id!, i);
            for (const r of answer.runs!) expected.set(r.id, parentOf(i));
          }),
        );
      }
      await Promise.all(spawns).catch((error: unknown) => {
        for (const g of rig.gateways) console.log(g.stderr().slice(-3000));
        throw error;
      });
      expect(expected.size).toBe(200);

      // Each parent reads its events on its own gateway until every one of its runs was announced.
      const seen: EventSeen[][] = HOST_CAPS.map(() => []);
      const announced = (i: number) => new Set(seen[i]!.flatMap((e) => e.run_ids));
      const wanted = (i: number) => [...expected].filter(([, p]) => p === parentOf(i)).map(([id]) => id);
      const deadline = Date.now() + 150_000;
      await Promise.all(
        HOST_CAPS.map(async (_, i) => {
          while (wanted(i).some((id) => !announced(i).has(id)) && Date.now() < deadline) {
            seen[i]!.push(...(await eventsOf(rig.gateways[i]!, parentOf(i), 5)));
          }
        }),
      );
      const samples = await stopSampling();

      for (const [i] of HOST_CAPS.entries()) {
        const events = seen[i]!;
        // Exactly once: no event id twice, no run in two events, every run of this parent announced.
        expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
        const runIds = events.flatMap((e) => e.run_ids);
        expect(new Set(runIds).size).toBe(runIds.length);
        expect(new Set(runIds)).toEqual(new Set(wanted(i)));
        for (const e of events) expect(e.text).toMatch(/status=completed/);
        // A wave came back as one digest.
        for (const [batch, g] of waves)
          if (g === i) expect(events.filter((e) => e.batch_id === batch)).toHaveLength(1);
      }
      // Nothing more arrives for anyone.
      for (const [i] of HOST_CAPS.entries())
        expect(await eventsOf(rig.gateways[i]!, parentOf(i), 1)).toEqual([]);

      console.log(
        `cluster-caps: ${samples.count} samples, cluster max ${samples.clusterMax}, per gateway max ${samples.perGateway.join('/')}, executing max ${samples.executingMax.join('/')}`,
      );
      expect(samples.errors).toEqual([]);
      expect(samples.count).toBeGreaterThan(20);
      expect(samples.clusterMax).toBeLessThanOrEqual(PROVIDER_CAP);
      expect(samples.clusterMax).toBeGreaterThanOrEqual(3); // the cluster was actually busy
      for (const [i, max] of samples.perGateway.entries()) expect(max).toBeLessThanOrEqual(HOST_CAPS[i]!);
      for (const [i, max] of samples.executingMax.entries()) expect(max).toBeLessThanOrEqual(HOST_CAPS[i]!);
      // Work spread: every gateway executed some of it.
      const executedBy = await Promise.all(
        rig.gateways.map(
          async (g) => (await runsOf(g)).filter((r) => r.parent.startsWith('cluster:')).length,
        ),
      );
      console.log(`cluster-caps: executed per gateway ${executedBy.join('/')}`);
      expect(executedBy.reduce((a, b) => a + b, 0)).toBe(200);
      for (const n of executedBy) expect(n).toBeGreaterThan(0);
    }, 240_000);
  },
);

const STAGGER_SECS = 1.5;

/** When each copy this gateway executed for the cluster was launched (ms), read from its store, in order. */
function copyLaunches(home: string): number[] {
  const db = new Database(join(home, 'crew.db'), { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare("SELECT record FROM runs WHERE parent LIKE 'cluster:%'").all() as {
      record: string;
    }[];
    return rows
      .map((row) => (JSON.parse(row.record) as { launchedAt?: number }).launchedAt)
      .filter((at): at is number => at !== undefined)
      .sort((a, b) => a - b);
  } finally {
    db.close();
  }
}

describe.skipIf(skip !== undefined)(
  `cluster mode with agent.subagent_spawn_stagger_secs: two gateways${skip ? ` (skipped: ${skip})` : ''}`,
  () => {
    let rig: ClusterRig;
    beforeAll(async () => {
      rig = await startCluster({
        hostCaps: [3, 3],
        providerCap: 6,
        config: { ...SHARED_SIM_CONFIG, 'agent.subagent_spawn_stagger_secs': STAGGER_SECS },
      });
    }, 60_000);
    afterAll(async () => {
      await rig?.close();
    });

    it('the origin adds a whole wave at once; each executing gateway launches one copy per stagger interval', async () => {
      const parent = 'cli:staggered';
      const answer = await spawnVia(rig.gateways[0]!, parent, {
        tasks: Array.from({ length: 6 }, (_, k) => `#sim sleep=1s member ${k}`),
      });
      expect(answer.ok, JSON.stringify(answer)).toBe(true);
      // Answered once its jobs are in the queue: all six, not one per stagger.
      const [waiting, active] = await Promise.all([
        rig.client.lrange(`crew:${rig.name}:wait`, 0, -1),
        rig.client.lrange(`crew:${rig.name}:active`, 0, -1),
      ]);
      const queued = new Set([...waiting, ...active]);
      expect(answer.runs!.filter((r) => queued.has(r.id))).toHaveLength(6);

      const seen: EventSeen[] = [];
      const deadline = Date.now() + 60_000;
      while (seen.length === 0 && Date.now() < deadline)
        seen.push(...(await eventsOf(rig.gateways[0]!, parent, 5)));
      expect(seen).toHaveLength(1);
      expect(seen[0]!.text).toMatch(/completed=6/);

      const launches = rig.gateways.map((g) => copyLaunches(g.home));
      expect(launches.flat()).toHaveLength(6);
      for (const times of launches) {
        for (let k = 1; k < times.length; k++)
          expect(times[k]! - times[k - 1]!).toBeGreaterThanOrEqual(STAGGER_SECS * 1000);
      }
      console.log(`cluster stagger: launches per gateway ${launches.map((t) => t.length).join('/')}`);
    }, 120_000);
  },
);
