import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prng } from '../../bench/random.js';
import { api } from '../helpers/daemon-process.js';
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
const SEED = Number(process.env.CREW_CLUSTER_SEED ?? 18);

interface Admitted {
  id: string;
  gateway: number;
  parent: string;
  batchId?: string;
}

describe.skipIf(skip !== undefined)(
  `cluster mode: DESIGN §3's invariants over a randomized 3-gateway history${skip ? ` (skipped: ${skip})` : ''}`,
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

    it(`seed ${SEED}: spawns, waves, failures and cancels at random — every run ends once with one event, caps hold, a cancelled queued run never starts`, async () => {
      const random = prng(SEED);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
      const admitted: Admitted[] = [];
      const parents = ['cli:a', 'cli:b'];
      const stopSampling = sampleCaps(rig, HOST_CAPS.length);

      const task = () => {
        const roll = random();
        const sleep = Math.floor(random() * 400);
        if (roll < 0.1) return `#sim sleep=${sleep}ms fail=error`;
        return `#sim sleep=${sleep}ms bytes=32`;
      };
      for (let step = 0; step < 80; step++) {
        const gateway = Math.floor(random() * HOST_CAPS.length);
        const parent = `${pick(parents)}-g${gateway}`;
        const roll = random();
        if (roll < 0.6) {
          const answer = await spawnVia(rig.gateways[gateway]!, parent, { task: task() });
          expect(answer.ok, JSON.stringify(answer)).toBe(true);
          admitted.push({ id: answer.runs![0]!.id, gateway, parent });
        } else if (roll < 0.8) {
          const size = 2 + Math.floor(random() * 5);
          const answer = await spawnVia(rig.gateways[gateway]!, parent, {
            tasks: Array.from({ length: size }, task),
          });
          expect(answer.ok, JSON.stringify(answer)).toBe(true);
          for (const r of answer.runs!)
            admitted.push({ id: r.id, gateway, parent, batchId: answer.batch_id! });
        } else if (admitted.length > 0) {
          const victim = pick(admitted);
          // A cancel may find the run already ended (a typed refusal): both are fine here.
          await api(rig.gateways[victim.gateway]!, 'POST', `/api/runs/${victim.id}/cancel`);
        }
        if (random() < 0.3) await new Promise((r) => setTimeout(r, Math.floor(random() * 150)));
      }

      // Every parent reads its events until each of its runs was announced.
      const byParent = new Map<string, Admitted[]>();
      for (const a of admitted) byParent.set(a.parent, [...(byParent.get(a.parent) ?? []), a]);
      const events = new Map<string, EventSeen[]>();
      const deadline = Date.now() + 120_000;
      await Promise.all(
        [...byParent].map(async ([parent, runs]) => {
          const g = runs[0]!.gateway;
          const seen: EventSeen[] = [];
          const wanted = () => runs.some((r) => !seen.some((e) => e.run_ids.includes(r.id)));
          while (wanted() && Date.now() < deadline)
            seen.push(...(await eventsOf(rig.gateways[g]!, parent, 3)));
          seen.push(...(await eventsOf(rig.gateways[g]!, parent, 1))); // nothing extra after
          events.set(parent, seen);
        }),
      );
      const caps = await stopSampling();

      const records = await Promise.all(rig.gateways.map((g) => runsOf(g)));
      const copies = new Map<string, string>();
      for (const runs of records)
        for (const r of runs) if (r.id.startsWith('x')) copies.set(r.id.slice(1), r.status);
      for (const [parent, runs] of byParent) {
        const seen = events.get(parent)!;
        // No parent receives an event twice; each run is in exactly one event.
        expect(new Set(seen.map((e) => e.id)).size).toBe(seen.length);
        const announced = seen.flatMap((e) => e.run_ids);
        expect(new Set(announced).size).toBe(announced.length);
        expect(new Set(announced)).toEqual(new Set(runs.map((r) => r.id)));
        for (const run of runs) {
          const origin = records[run.gateway]!.find((r) => r.id === run.id) as
            | { status: string; started_at?: string }
            | undefined;
          expect(['completed', 'failed', 'cancelled'], `${run.id} ${origin?.status}`).toContain(
            origin?.status,
          );
          const event = seen.find((e) => e.run_ids.includes(run.id))!;
          // A wave member has its one place in its wave's one digest.
          if (run.batchId) expect(event.batch_id).toBe(run.batchId);
          expect(event.text).toMatch(new RegExp(`id=${run.id} [^\\n]*status=${origin!.status}`));
          // A run cancelled before any gateway took it never started anywhere.
          if (origin!.status === 'cancelled' && origin!.started_at === undefined)
            expect(copies.has(run.id)).toBe(false);
        }
      }
      for (const [batch, n] of countBy(admitted.filter((a) => a.batchId).map((a) => a.batchId!))) {
        const digests = [...events.values()].flat().filter((e) => e.batch_id === batch);
        expect(digests).toHaveLength(1);
        expect(digests[0]!.run_ids).toHaveLength(n);
      }
      expect(caps.errors).toEqual([]);
      expect(caps.clusterMax).toBeLessThanOrEqual(PROVIDER_CAP);
      for (const [i, max] of caps.perGateway.entries()) expect(max).toBeLessThanOrEqual(HOST_CAPS[i]!);
      for (const [i, max] of caps.executingMax.entries()) expect(max).toBeLessThanOrEqual(HOST_CAPS[i]!);
      const statuses = countBy(
        admitted.map((a) => records[a.gateway]!.find((r) => r.id === a.id)?.status ?? '?'),
      );
      console.log(
        `cluster-random seed ${SEED}: ${admitted.length} runs (${JSON.stringify(Object.fromEntries(statuses))}), ${[...events.values()].flat().length} events, caps seen ${caps.clusterMax} / ${caps.perGateway.join('/')}`,
      );
    }, 240_000);
  },
);

function countBy(xs: readonly string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const x of xs) out.set(x, (out.get(x) ?? 0) + 1);
  return out;
}
