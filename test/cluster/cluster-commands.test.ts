import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCrew } from '../cli/run-crew.js';
import { api, pollFor } from '../helpers/daemon-process.js';
import { redisSkipReason } from '../helpers/redis-server.js';
import {
  type ClusterRig,
  type EventSeen,
  eventsOf,
  runsOf,
  SHARED_SIM_CONFIG,
  spawnVia,
  startCluster,
} from './cluster-rig.js';

const skip = redisSkipReason();

/** Run ids active on gateway `g` now, from BullMQ's `pb` field. */
async function activeOn(rig: ClusterRig, g: string): Promise<string[]> {
  const ids = await rig.client.lrange(`crew:${rig.name}:active`, 0, -1);
  const out: string[] = [];
  for (const id of ids) if ((await rig.client.hget(`crew:${rig.name}:${id}`, 'pb')) === g) out.push(id);
  return out;
}

async function eventFor(rig: ClusterRig, i: number, parent: string, runId: string): Promise<EventSeen[]> {
  const events: EventSeen[] = [];
  const deadline = Date.now() + 60_000;
  while (!events.some((e) => e.run_ids.includes(runId)) && Date.now() < deadline) {
    events.push(...(await eventsOf(rig.gateways[i]!, parent, 2)));
  }
  return events.filter((e) => e.run_ids.includes(runId));
}

describe.skipIf(skip !== undefined)(
  `cluster mode: commands across gateways${skip ? ` (skipped: ${skip})` : ''}`,
  () => {
    let rig: ClusterRig;
    beforeAll(async () => {
      rig = await startCluster({
        hostCaps: [2, 2],
        providerCap: 4,
        // A grace of 1 s: the last case's SIGTERM to g1 waits that long for the run it executes for g0
        // before cancelling it (the default 10 s was a third of the file's time).
        config: { ...SHARED_SIM_CONFIG, 'agent.subagent_max_depth': 2, 'agent.shutdown_grace_secs': 1 },
      });
    }, 60_000);
    afterAll(async () => {
      await rig?.close();
    });

    it('a parent on g0 cancels and steers runs executing on g1; resource_status shows the cluster', async () => {
      const parent = 'cli:commander';
      const ids: string[] = [];
      for (let k = 0; k < 4; k++) {
        const answer = await spawnVia(rig.gateways[0]!, parent, { task: `run ${k}\n#sim hang` });
        expect(answer.ok, JSON.stringify(answer)).toBe(true);
        ids.push(answer.runs![0]!.id);
      }
      const onG1 = await pollFor('two runs executing on g1', async () => {
        const active = await activeOn(rig, 'g1');
        return active.length === 2 ? active : undefined;
      });
      const [toCancel, toSteer] = onG1 as [string, string];
      // Both have started on g1 (the origin heard it), so the commands go to g1's command stream.
      await pollFor('the runs running on their origin', async () => {
        const runs = await runsOf(rig.gateways[0]!);
        return [toCancel, toSteer].every((id) => runs.find((r) => r.id === id)?.status === 'running')
          ? true
          : undefined;
      });

      type Cluster = {
        provider_cap: number;
        running: number;
        gateways: { name: string; cap: number; running: number }[];
      };
      // The registry is refreshed every second: wait until both gateways published their two runs.
      const resources = await pollFor('the registry to show both gateways running two each', async () => {
        const c = (await api(rig.gateways[0]!, 'GET', '/api/resources')).body.cluster as Cluster;
        return c.running === 4 && c.gateways.length === 2 && c.gateways.every((g) => g.running === 2)
          ? c
          : undefined;
      });
      expect(resources.provider_cap).toBe(4);
      expect(resources.gateways.map((g) => [g.name, g.cap])).toEqual([
        ['g0', 2],
        ['g1', 2],
      ]);
      // Each gateway's own figures: the two it executes against its host cap (`cluster.host_cap`), not the
      // four g0 admitted as well (their proxies), so none counts twice.
      for (const g of rig.gateways) {
        expect((await api(g, 'GET', '/api/resources')).body).toMatchObject({
          cap: 2,
          cap_source: 'pinned',
          running: 2,
          running_top_level: 2,
          running_nested: 0,
        });
      }
      // `crew resources` prints the host alone when the daemon does not answer in time (it works without
      // one), which a loaded CI machine can make happen: asked again until the daemon's answer is printed.
      const printed = await pollFor('crew resources to print the cluster', async () => {
        const out = await runCrew(['resources'], { CREW_HOME: rig.gateways[0]!.home });
        return /cluster\s+test:/.test(out.out) ? out : undefined;
      });
      expect(printed.code).toBe(0);
      expect(printed.out).toMatch(
        /cluster\s+test: 4 running of provider cap 4 \(adaptive, ceiling 4\), 0 queued/,
      );
      expect(printed.out).toMatch(/gateway g0\s+cap 2, running 2 {2}\(this one\)/);
      expect(printed.out).toMatch(/gateway g1\s+cap 2, running 2\n/);

      expect((await api(rig.gateways[0]!, 'POST', `/api/runs/${toCancel}/cancel`)).body).toMatchObject({
        ok: true,
      });
      const cancelled = await eventFor(rig, 0, parent, toCancel);
      expect(cancelled).toHaveLength(1);
      expect(cancelled[0]!.text).toMatch(/status=cancelled/);
      // The copy on g1 ended cancelled too: the process there was stopped, not abandoned.
      expect((await runsOf(rig.gateways[1]!)).find((r) => r.id === `x${toCancel}`)?.status).toBe('cancelled');

      const steered = await api(rig.gateways[0]!, 'POST', `/api/runs/${toSteer}/steer`, {
        message: 'steered from g0\n#sim echo',
        mode: 'interrupt',
      });
      expect(steered.body).toMatchObject({ ok: true });
      const steerEvent = await eventFor(rig, 0, parent, toSteer);
      expect(steerEvent).toHaveLength(1);
      expect(steerEvent[0]!.text).toMatch(/status=completed/);
      expect(steerEvent[0]!.text).toMatch(/steered from g0/);

      for (const id of ids.filter((id) => id !== toCancel && id !== toSteer)) {
        await api(rig.gateways[0]!, 'POST', `/api/runs/${id}/cancel`);
        expect(await eventFor(rig, 0, parent, id)).toHaveLength(1);
      }
    }, 120_000);

    it('a nested run executes on its ancestor’s host under its permit and never enters the cluster queue', async () => {
      const parent = 'cli:nester';
      const answer = await spawnVia(rig.gateways[0]!, parent, {
        task: '#sim spawn="child one\n#sim sleep=50ms" spawn="child two\n#sim sleep=50ms" wave wait',
        agent: 'sim',
      });
      expect(answer.ok, JSON.stringify(answer)).toBe(true);
      const id = answer.runs![0]!.id;
      const events = await eventFor(rig, 0, parent, id);
      expect(events).toHaveLength(1);
      expect(events[0]!.text).toMatch(/status=completed/);
      expect(events[0]!.text).toMatch(/summary:/);
      // The children ran where the parent's copy ran, as nested runs of it.
      const hosts = await Promise.all(rig.gateways.map((g) => runsOf(g)));
      const host = hosts.findIndex((runs) => runs.some((r) => r.id === `x${id}`));
      expect(host).toBeGreaterThanOrEqual(0);
      const children = hosts[host]!.filter((r) => r.parent === `run:x${id}`);
      expect(children.map((r) => r.status)).toEqual(['completed', 'completed']);
      // The queue only ever saw top-level runs: every job id is a run the origins admitted.
      const jobs = await rig.client.zrange(`crew:${rig.name}:completed`, '0', '-1');
      expect(jobs).toContain(id);
      for (const c of children) expect(jobs).not.toContain(c.id);
      const origin = new Set((await runsOf(rig.gateways[0]!)).map((r) => r.id));
      for (const job of jobs) expect(origin.has(job)).toBe(true);
    }, 120_000);

    /** A run executing on g1, spawned on g0: its transcript stays on g1 (the last test stops g1). */
    let onG1 = '';

    it('spawn_status on g0 reads the transcript of a run executing on g1 through g1, paged and grepped; a run executing on g0 from its copy there', async () => {
      const parent = 'cli:reader';
      const ids: string[] = [];
      for (let k = 0; k < 4; k++) {
        const task = `first line of ${k}\nmarker-${k} in the middle\nlast line of ${k}\n#sim echo hang`;
        const answer = await spawnVia(rig.gateways[0]!, parent, { task });
        expect(answer.ok, JSON.stringify(answer)).toBe(true);
        ids.push(answer.runs![0]!.id);
      }
      type Status = {
        ok: boolean;
        text: string;
        run: { status: string; host?: string };
        total_lines?: number;
      };
      const statusOf = async (g: number, id: string, query = '') =>
        (await api(rig.gateways[g]!, 'GET', `/api/runs/${id}${query}`)).body as Status;
      // Every run started (caps 2 / 2) and echoed its task on the gateway that executes it.
      const hosts = await pollFor('every run running with its host known on g0', async () => {
        const all = await Promise.all(ids.map((id) => statusOf(0, id)));
        return all.every(
          (s) => s.run.status === 'running' && s.run.host !== undefined && /last line/.test(s.text),
        )
          ? all.map((s) => s.run.host)
          : undefined;
      });
      expect([...hosts].sort()).toEqual(['g0', 'g0', 'g1', 'g1']);
      const k1 = hosts.indexOf('g1');
      onG1 = ids[k1]!;
      // Through g1: the same page g1 itself answers for its copy, grep and paging applied there.
      const grepped = await statusOf(0, onG1, '?grep=marker');
      expect(grepped.ok).toBe(true);
      expect(grepped.text).toMatch(new RegExp(`marker-${k1} in the middle`));
      expect(grepped.text).not.toMatch(/first line/);
      const there = await statusOf(1, `x${onG1}`, '?grep=marker');
      expect(grepped.text).toBe(there.text);
      const paged = await statusOf(0, onG1, '?offset=1&limit=1');
      expect(paged.text).toMatch(new RegExp(`marker-${k1}`));
      expect(paged.text).not.toMatch(/last line/);
      // A run executing on g0 itself is read from g0's copy.
      const k0 = hosts.indexOf('g0');
      expect((await statusOf(0, ids[k0]!)).text).toMatch(new RegExp(`marker-${k0} in the middle`));
      for (const id of ids.filter((id) => id !== onG1)) {
        await api(rig.gateways[0]!, 'POST', `/api/runs/${id}/cancel`);
        expect(await eventFor(rig, 0, parent, id)).toHaveLength(1);
      }
    }, 120_000);

    it("a gateway's close leaves no Redis connection behind and exits cleanly; its runs' transcripts are then not_here", async () => {
      const before = await rig.client.client('LIST');
      expect(String(before)).toMatch(/name=crew:g1/);
      expect(await rig.gateways[1]!.stop('SIGTERM')).toBe(0);
      const after = String(await rig.client.client('LIST'));
      expect(after).not.toMatch(/name=crew:g1/);
      expect(after).toMatch(/name=crew:g0/);
      // g1 cancelled the run it executed for g0 as it closed; its transcript stays on g1, which is gone.
      // g1 cancelled the run it executed for g0 as it closed, and said so before it went: the run ends
      // cancelled on g0 at once, not lost a stalled interval (30 s here) later.
      await pollFor(
        'the run g1 executed to end cancelled on g0',
        async () => (await runsOf(rig.gateways[0]!)).find((r) => r.id === onG1 && r.status === 'cancelled'),
        10_000,
      );
      // Its status and the first page its outcome brought along are kept here; the rest is on g1.
      const kept = await api(rig.gateways[0]!, 'GET', `/api/runs/${onG1}`);
      expect(kept.body).toMatchObject({ ok: true, run: { status: 'cancelled', host: 'g1' } });
      expect(kept.body.text).toMatch(/marker-/);
      const status = await api(rig.gateways[0]!, 'GET', `/api/runs/${onG1}?grep=marker`);
      expect(status.status).toBe(503);
      expect(status.body.refusal).toMatchObject({ code: 'not_here', retry_after_secs: 5 });
      expect((status.body.refusal as { message: string }).message).toMatch(/gateway g1/);
    }, 60_000);
  },
);
