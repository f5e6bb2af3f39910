import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selPath } from '../../src/sel/sel-writer.js';
import { api, pollFor } from '../helpers/daemon-process.js';
import { redisSkipReason } from '../helpers/redis-server.js';
import {
  type CapSamples,
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
const PROVIDER_CAP = 2;

/** The gateway whose worker holds active job `id` (BullMQ's `pb`), once it is active. */
async function holderOf(rig: ClusterRig, id: string): Promise<string> {
  return pollFor(`job ${id} active`, async () => {
    const active = await rig.client.lrange(`crew:${rig.name}:active`, 0, -1);
    if (!active.includes(id)) return undefined;
    return (await rig.client.hget(`crew:${rig.name}:${id}`, 'pb')) ?? undefined;
  });
}

/** Every event of `parent` on gateway `i` until one names `runId` (and a little after, to catch a second). */
async function eventsUntil(rig: ClusterRig, i: number, parent: string, runId: string): Promise<EventSeen[]> {
  const events: EventSeen[] = [];
  const deadline = Date.now() + 60_000;
  while (!events.some((e) => e.run_ids.includes(runId)) && Date.now() < deadline)
    events.push(...(await eventsOf(rig.gateways[i]!, parent, 2)));
  events.push(...(await eventsOf(rig.gateways[i]!, parent, 1)));
  return events.filter((e) => e.run_ids.includes(runId));
}

/** The `#sim info` line of a turn's text: the agent process and the ACP session that ran it. */
function sessionOf(text: string): { pid: number; sessionId: string } {
  const line = /info: (\{.*\})/.exec(text);
  expect(line, text).not.toBeNull();
  const info = JSON.parse(line![1]!) as { pid: number; sessionId: string };
  return { pid: info.pid, sessionId: info.sessionId };
}

type Continued = {
  ok: boolean;
  runs?: { id: string; status: string }[];
  refusal?: { code: string; message: string };
};

describe.skipIf(skip !== undefined)(
  `cluster mode: kept conversations across gateways${skip ? ` (skipped: ${skip})` : ''}`,
  () => {
    let rig: ClusterRig;
    let stopSampling: (() => Promise<CapSamples>) | undefined;
    beforeAll(async () => {
      rig = await startCluster({ hostCaps: [1, 1], providerCap: PROVIDER_CAP, config: SHARED_SIM_CONFIG });
      stopSampling = sampleCaps(rig, 2);
    }, 60_000);
    afterAll(async () => {
      await stopSampling?.();
      await rig?.close();
    });

    const g0 = () => rig.gateways[0]!;
    const continueVia = async (conversation: string, task: string) =>
      (
        await api(g0(), 'POST', `/api/conversations/${conversation}/continue`, {
          parent: 'cli:keeper',
          args: { task },
        })
      ).body as Continued;

    it('a kept run admitted on g0 executes on g1; its continuations run in the same session there, directly or forwarded by g0 holding the slot; busy while running, released through g0; the provider cap holds', async () => {
      const parent = 'cli:keeper';
      const filler = 'cli:filler';
      // Fill both workers (host caps 1 / 1), then free g1's: only g1 can take the kept run.
      const fillers: string[] = [];
      for (const k of [0, 1]) {
        const answer = await spawnVia(g0(), filler, { task: `filler ${k}\n#sim hang` });
        expect(answer.ok, JSON.stringify(answer)).toBe(true);
        fillers.push(answer.runs![0]!.id);
      }
      const holders = await Promise.all(fillers.map((id) => holderOf(rig, id)));
      expect([...holders].sort()).toEqual(['g0', 'g1']);
      const onG0 = fillers[holders.indexOf('g0')]!;
      const onG1 = fillers[holders.indexOf('g1')]!;
      expect((await api(g0(), 'POST', `/api/runs/${onG1}/cancel`)).body).toMatchObject({ ok: true });
      await eventsUntil(rig, 0, filler, onG1);

      const kept = await spawnVia(g0(), parent, { task: 'turn one\n#sim info', keep: true });
      expect(kept.ok, JSON.stringify(kept)).toBe(true);
      const conversation = kept.runs![0]!.id;
      const one = await eventsUntil(rig, 0, parent, conversation);
      expect(one).toHaveLength(1);
      expect(one[0]!.text).toMatch(/status=completed/);
      const session = sessionOf(one[0]!.text);
      const status = await api(g0(), 'GET', `/api/runs/${conversation}`);
      expect(status.body).toMatchObject({ ok: true, run: { host: 'g1' } });

      // g0's worker is full: g1, which keeps the session, takes the continuation itself.
      const two = await continueVia(conversation, 'turn two\n#sim sleep=3s info');
      expect(two.ok, JSON.stringify(two)).toBe(true);
      const twoId = two.runs![0]!.id;
      expect(await holderOf(rig, twoId)).toBe('g1');
      const busy = await continueVia(conversation, 'turn too early\n#sim info');
      expect(busy).toMatchObject({ ok: false, refusal: { code: 'conversation_busy' } });
      const twoEvents = await eventsUntil(rig, 0, parent, twoId);
      expect(twoEvents).toHaveLength(1);
      expect(twoEvents[0]!.text).toMatch(/status=completed/);
      expect(sessionOf(twoEvents[0]!.text)).toEqual(session);

      // Now g1's worker is full and g0's free: g0 takes the continuation and forwards it to g1, holding
      // the slot (the provider cap counts it) until g1 says the turn ended. g1 runs a filler at its host cap
      // of 1, so the turn waits there for a slot, as a run waits for a permit on one host.
      const third = await spawnVia(g0(), filler, { task: 'filler 2\n#sim hang' });
      expect(await holderOf(rig, third.runs![0]!.id)).toBe('g1');
      expect((await api(g0(), 'POST', `/api/runs/${onG0}/cancel`)).body).toMatchObject({ ok: true });
      await eventsUntil(rig, 0, filler, onG0);
      const three = await continueVia(conversation, 'turn three\n#sim sleep=1s info');
      expect(three.ok, JSON.stringify(three)).toBe(true);
      const threeId = three.runs![0]!.id;
      expect(await holderOf(rig, threeId)).toBe('g0');
      // Both slots are taken (the filler on g1, the forwarded turn held by g0): the cap is reached.
      expect(await rig.client.llen(`crew:${rig.name}:active`)).toBe(PROVIDER_CAP);
      expect(await continueVia(conversation, 'turn too early\n#sim info')).toMatchObject({
        ok: false,
        refusal: { code: 'conversation_busy' },
      });
      // g1 has the turn in hand (its registry entry lists it, so g0 keeps holding the slot), but does not
      // start it beside the filler: no copy of it runs there, for as long as the filler does.
      await pollFor('g1 to list the forwarded turn', async () => {
        const entry = await rig.client.hget(`crew:${rig.name}:gateways`, 'g1');
        return entry && (JSON.parse(entry) as { runs: string[] }).runs.includes(threeId) ? true : undefined;
      });
      for (let look = 0; look < 5; look++) {
        await new Promise((r) => setTimeout(r, 400));
        expect((await runsOf(rig.gateways[1]!)).some((r) => r.id === `x${threeId}`)).toBe(false);
      }
      expect(await holderOf(rig, threeId)).toBe('g0');
      expect((await api(g0(), 'POST', `/api/runs/${third.runs![0]!.id}/cancel`)).body).toMatchObject({
        ok: true,
      });
      const threeEvents = await eventsUntil(rig, 0, parent, threeId);
      expect(threeEvents).toHaveLength(1);
      expect(threeEvents[0]!.text).toMatch(/status=completed/);
      expect(sessionOf(threeEvents[0]!.text)).toEqual(session);
      // The turn ran on g1 (its copy there), and g0 let the slot go once it ended.
      expect((await runsOf(rig.gateways[1]!)).find((r) => r.id === `x${threeId}`)?.status).toBe('completed');
      await pollFor('the held slot to be released', async () =>
        (await rig.client.lrange(`crew:${rig.name}:active`, 0, -1)).includes(threeId) ? undefined : true,
      );

      // Released through g0: g1 releases the session; continuing answers conversation_released.
      expect(
        (await api(g0(), 'POST', `/api/conversations/${conversation}/release`, { parent })).body,
      ).toMatchObject({ ok: true });
      const releasedOnG1 = await pollFor('g1 to release the session', () =>
        readFileSync(selPath(rig.gateways[1]!.home), 'utf8')
          .split('\n')
          .filter((line) => line.includes('"outcome":"conversation_released"'))
          .map((line) => JSON.parse(line) as { metadata: { conversation: string; reason: string } })
          .find((record) => record.metadata.conversation === `x${conversation}`),
      );
      expect(releasedOnG1.metadata.reason).toBe('requested');
      expect(await continueVia(conversation, 'turn four\n#sim info')).toMatchObject({
        ok: false,
        refusal: { code: 'conversation_released' },
      });

      const samples = await stopSampling!();
      stopSampling = undefined;
      expect(samples.errors).toEqual([]);
      expect(samples.count).toBeGreaterThan(20);
      expect(samples.clusterMax).toBe(PROVIDER_CAP);
      // What each gateway published as executing never passed its host cap of 1.
      expect(samples.executingMax).toEqual([1, 1]);
    }, 180_000);
  },
);
