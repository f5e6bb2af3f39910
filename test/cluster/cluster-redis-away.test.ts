import { afterEach, describe, expect, it } from 'vitest';
import { api, pollFor } from '../helpers/daemon-process.js';
import { redisSkipReason } from '../helpers/redis-server.js';
import {
  type ClusterRig,
  collect,
  holders,
  SHARED_SIM_CONFIG,
  spawnVia,
  startCluster,
} from './cluster-rig.js';

const skip = redisSkipReason();
const CONFIG = SHARED_SIM_CONFIG;
const STALLED_MS = 2000;

describe.skipIf(skip !== undefined)(
  `cluster mode faults, Redis away${skip ? ` (skipped: ${skip})` : ''}`,
  () => {
    let rig: ClusterRig | undefined;
    afterEach(async () => {
      await rig?.close();
      rig = undefined;
    });

    it('Redis stopped: admission refuses cluster_unavailable while running runs go on; restarted: every run ends once, queued ones included, and admission works again', async () => {
      rig = await startCluster({
        hostCaps: [3, 3],
        providerCap: 2,
        stalledIntervalMs: STALLED_MS,
        config: CONFIG,
      });
      const parent = 'cli:redis-parent';
      const ids: string[] = [];
      for (let k = 0; k < 5; k++) {
        const answer = await spawnVia(rig.gateways[k % 2]!, `${parent}-${k % 2}`, {
          task: `#sim sleep=3000ms bytes=16 run ${k}`,
        });
        expect(answer.ok, JSON.stringify(answer)).toBe(true);
        ids.push(answer.runs![0]!.id);
      }
      await pollFor('two runs active', async () => ((await holders(rig!)).size === 2 ? true : undefined));
      await rig.redis.stop('SIGKILL');
      const refused = await pollFor('a refusal while Redis is down', async () => {
        const answer = await spawnVia(rig!.gateways[0]!, `${parent}-0`, { task: '#sim sleep=10ms' });
        return answer.ok ? undefined : answer;
      });
      expect(refused.refusal).toMatchObject({ code: 'cluster_unavailable', retry_after_secs: 5 });
      expect(refused.refusal?.message).toMatch(/retry/);
      await new Promise((r) => setTimeout(r, 1500));
      await rig.redis.start();

      const seen = await Promise.all(
        [0, 1].map((g) =>
          collect(
            rig!,
            g,
            `${parent}-${g}`,
            (e) => e.flatMap((x) => x.run_ids).length >= (g === 0 ? 3 : 2),
            90_000,
          ),
        ),
      );
      const all = seen.flat();
      const runIds = all.flatMap((e) => e.run_ids);
      expect(new Set(runIds)).toEqual(new Set(ids));
      expect(runIds).toHaveLength(ids.length);
      for (const e of all) expect(e.text).toMatch(/status=completed/);
      // Admission works again once Redis answers.
      const again = await pollFor('admission after Redis returned', async () => {
        const answer = await spawnVia(rig!.gateways[1]!, `${parent}-1`, { task: '#sim sleep=10ms' });
        return answer.ok ? answer : undefined;
      });
      const after = await collect(rig, 1, `${parent}-1`, (e) => e.length > 0);
      expect(after.flatMap((e) => e.run_ids)).toEqual([again.runs![0]!.id]);
    }, 150_000);

    it('a gateway shuts down promptly while Redis is away, although its runs execute on another gateway', async () => {
      rig = await startCluster({
        hostCaps: [2, 2],
        providerCap: 4,
        stalledIntervalMs: STALLED_MS,
        config: { ...CONFIG, 'agent.shutdown_grace_secs': 1 },
      });
      for (let k = 0; k < 4; k++) {
        expect((await spawnVia(rig.gateways[0]!, 'cli:leaver', { task: `#sim hang ${k}` })).ok).toBe(true);
      }
      const onG1 = await pollFor('runs executing on g1', async () => {
        const held = [...(await holders(rig!))].filter(([, g]) => g === 'g1').map(([id]) => id);
        return held.length === 2 ? held : undefined;
      });
      await pollFor('g0 to hear that g1 started them', async () => {
        const statuses = await Promise.all(
          onG1.map(async (id) => {
            const answer = await api(rig!.gateways[0]!, 'GET', `/api/runs/${id}`);
            if (!answer.body.ok) console.log(`status of ${id} on g0: ${JSON.stringify(answer.body)}`);
            return (answer.body.run as { status: string } | undefined)?.status;
          }),
        );
        return statuses.every((s) => s === 'running') ? true : undefined;
      });
      await rig.redis.stop('SIGKILL');
      const started = Date.now();
      const exited = await Promise.race([
        rig.gateways[0]!.stop('SIGTERM'),
        new Promise<'hung'>((r) => setTimeout(() => r('hung'), 20_000)),
      ]);
      if (exited === 'hung') console.log(`g0 did not exit:\n${rig.gateways[0]!.stderr().slice(-4000)}`);
      expect(exited).toBe(0);
      expect(Date.now() - started).toBeLessThan(15_000);
    }, 120_000);
  },
);
