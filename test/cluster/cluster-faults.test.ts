import { afterEach, describe, expect, it } from 'vitest';
import { pollFor } from '../helpers/daemon-process.js';
import { redisSkipReason } from '../helpers/redis-server.js';
import {
  type ClusterRig,
  collect,
  eventsOf,
  holders,
  runsOf,
  SHARED_SIM_CONFIG,
  spawnVia,
  startCluster,
} from './cluster-rig.js';

const skip = redisSkipReason();
const CONFIG = SHARED_SIM_CONFIG;
const STALLED_MS = 2000;

describe.skipIf(skip !== undefined)(`cluster mode faults${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let rig: ClusterRig | undefined;
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });

  it("a SIGKILLed gateway's active runs end lost once (the digest on another gateway names them); its queued work runs elsewhere; nothing else is killed", async () => {
    rig = await startCluster({
      hostCaps: [2, 2, 2],
      providerCap: 6,
      stalledIntervalMs: STALLED_MS,
      config: CONFIG,
    });
    const parent = 'cli:wave-parent';
    // 12 members: 6 run at once (two on each gateway), 6 wait in the queue.
    const wave = await spawnVia(rig.gateways[0]!, parent, {
      tasks: Array.from({ length: 12 }, (_, k) => `#sim sleep=2500ms bytes=16 member ${k}`),
    });
    expect(wave.ok, JSON.stringify(wave)).toBe(true);
    const victims = await pollFor('two runs active on g2', async () => {
      const on2 = [...(await holders(rig!))].filter(([, g]) => g === 'g2').map(([id]) => id);
      return on2.length === 2 ? on2 : undefined;
    });
    const killedAt = Date.now();
    await rig.gateways[2]!.stop('SIGKILL');

    // The origin (g0) records both victims lost (how soon is asserted below).
    await pollFor(
      'the victims lost on their origin',
      // The list, not spawn_status: until they end, their transcripts are not_here (g2 is gone).
      async () => {
        const runs = await runsOf(rig!.gateways[0]!);
        return victims.every((id) => runs.find((r) => r.id === id)?.status === 'lost') ? true : undefined;
      },
      30_000,
    );
    const lostAfterMs = Date.now() - killedAt;
    const events = await collect(rig, 0, parent, (e) => e.some((x) => x.batch_id === wave.batch_id));
    const digests = events.filter((e) => e.batch_id === wave.batch_id);
    expect(digests).toHaveLength(1);
    const digest = digests[0]!;
    expect(digest.run_ids).toHaveLength(12);
    expect(digest.text).toMatch(/members=12/);
    expect(digest.text).toMatch(/completed=10/);
    expect(digest.text).toMatch(/lost=2/);
    for (const id of victims) expect(digest.text).toMatch(new RegExp(`id=${id} .*status=lost`));
    // Nothing more: the lost runs were announced once, inside the one digest.
    expect(await eventsOf(rig.gateways[0]!, parent, 1)).toEqual([]);
    // When (Redis time, on this machine) and by whom (the claim: `<gateway> silent` = the registry's detector,
    // `stalled` = BullMQ's check) each report was made: where the time went, should it run late.
    const reports = [];
    for (const [id, fields] of await rig.client.xrange(`crew:${rig.name}:gw:g0:out`, '-', '+')) {
      const runId = fields[fields.indexOf('runId') + 1];
      if (fields[1] !== 'ended' || !victims.includes(runId!)) continue;
      const by = await rig.client.get(`crew:${rig.name}:lost:${runId}`);
      reports.push(`${Number(id.split('-')[0]) - killedAt} ms by ${by}`);
    }
    expect(reports).toHaveLength(2);
    console.log(
      `cluster-faults: SIGKILL → runs lost on their origin after ${lostAfterMs} ms (stalled interval ${STALLED_MS} ms; reported ${reports.join(', ')})`,
    );
    // Issue 18's target: declared lost within twice the stalled interval (the registry's failure detector
    // finds them about one interval after the kill; the poll above adds up to 100 ms).
    expect(lostAfterMs).toBeLessThanOrEqual(2 * STALLED_MS);
  }, 120_000);
});
