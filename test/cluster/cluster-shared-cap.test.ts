import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterStatus } from '../../src/cluster/cluster-status.js';
import { type FakeProvider, startFakeProvider } from '../../src/fake-provider/fake-provider.js';
import { api, type DaemonProcess, pollFor } from '../helpers/daemon-process.js';
import { redisSkipReason } from '../helpers/redis-server.js';
import { type ClusterRig, runsOf, spawnVia, startCluster } from './cluster-rig.js';

/**
 * The shared provider cap end to end: two real gateways on one Redis, agents that call the scripted
 * provider through each gateway's provider gateway. A 429 the provider answers to a run on whichever
 * gateway executes it lowers the cluster's cap on both and holds every start for its retry-after; a clean
 * completion raises it again.
 */

const skip = redisSkipReason();

/** One Anthropic call with the task as the prompt; exit 1 when the provider refuses it. */
const AGENT = `
const res = await fetch(process.env.ANTHROPIC_BASE_URL + '/v1/messages', {
  method: 'POST',
  headers: { 'content-type': 'application/json', 'x-api-key': 'sk-test', 'anthropic-version': '2023-06-01' },
  body: JSON.stringify({ model: 'claude-test', max_tokens: 16, messages: [{ role: 'user', content: process.argv[2] ?? '' }] }),
});
console.log('provider answered ' + res.status);
await res.text();
process.exit(res.status === 200 ? 0 : 1);
`;

describe.skipIf(skip !== undefined)(
  `the shared provider cap across real gateways${skip ? ` (skipped: ${skip})` : ''}`,
  () => {
    let provider: FakeProvider;
    let rig: ClusterRig;
    let dir: string;
    beforeAll(async () => {
      provider = await startFakeProvider({ reply: 'fine' });
      dir = mkdtempSync(join(tmpdir(), 'crew-shared-cap-'));
      const script = join(dir, 'agent.mjs');
      writeFileSync(script, AGENT);
      rig = await startCluster({
        hostCaps: [2, 2],
        providerCap: 3,
        stalledIntervalMs: 10_000,
        config: {
          'providers.anthropic.upstream': provider.url,
          'agent.default_agent': 'probe',
          'agents.probe': {
            runner: 'command',
            command: [process.execPath, script, '{task}'],
            provider: 'anthropic',
          },
        },
      });
    }, 90_000);
    afterAll(async () => {
      await rig?.close();
      await provider?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    const clusterOf = async (g: DaemonProcess) =>
      ((await api(g, 'GET', '/api/resources')).body as { cluster: ClusterStatus }).cluster;
    const ended = (g: DaemonProcess, id: string) =>
      pollFor(`run ${id} to end`, async () => {
        const run = (await runsOf(g)).find((r) => r.id === id);
        return run && !['queued', 'starting', 'running'].includes(run.status) ? run : undefined;
      });

    it('a 429 on the executing gateway cuts the cap both gateways show, holds starts for retry-after, and a clean run raises it', async () => {
      const [g0, g1] = rig.gateways as [DaemonProcess, DaemonProcess];
      expect(await clusterOf(g0)).toMatchObject({
        provider_cap: 3,
        provider_cap_source: 'adaptive',
        hold_until: null,
      });

      const limited = await spawnVia(g0, 'cli:p', { task: '#fake status=429 retry_after=6' });
      const limitedId = limited.runs?.[0]?.id ?? '';
      expect(await ended(g0, limitedId)).toMatchObject({ status: 'failed' });
      // Cut from the one run in use: max(1, floor(1 × 0.7)) = 1, held for 6 s; both gateways show it.
      const views = await pollFor('both gateways to show the cut', async () => {
        const both = await Promise.all([clusterOf(g0), clusterOf(g1)]);
        return both.every((c) => c.provider_cap === 1 && c.hold_until) ? both : undefined;
      });
      for (const c of views)
        expect(c).toMatchObject({ provider_cap_source: 'adaptive', provider_cap_ceiling: 3 });
      expect(Number(await rig.client.hget(`crew:${rig.name}:meta`, 'concurrency'))).toBe(1);

      // A run admitted on the other gateway during the hold waits in the cluster queue, then runs.
      const held = await spawnVia(g1, 'cli:q', { task: 'hello' });
      const heldId = held.ok ? (held.runs?.[0]?.id ?? '') : '';
      expect(held.ok).toBe(true);
      const holdUntil = Date.parse(views[0]?.hold_until ?? '');
      // Still held (6 s leaves room on a loaded machine): the job waits, and its origin says why.
      expect(holdUntil - Date.now()).toBeGreaterThan(500);
      expect(await rig.client.llen(`crew:${rig.name}:wait`)).toBe(1);
      expect(await rig.client.llen(`crew:${rig.name}:active`)).toBe(0);
      expect((await runsOf(g1)).find((r) => r.id === heldId)).toMatchObject({
        status: 'queued',
        waiting_for: 'provider',
        hold_until: new Date(holdUntil).toISOString(),
      });
      const done = (await ended(g1, heldId)) as { status: string; started_at?: string };
      expect(done.status).toBe('completed');
      // It started (on whichever gateway took it) only once the hold had passed.
      expect(Date.parse(done.started_at ?? '')).toBeGreaterThanOrEqual(holdUntil - 50);
      // Its clean completion, with the cap in use (1 × 2 ≥ 1) and no hold, raised the cap by one.
      await pollFor('both gateways to show the climb', async () => {
        const both = await Promise.all([clusterOf(g0), clusterOf(g1)]);
        return both.every((c) => c.provider_cap === 2 && c.hold_until === null) ? true : undefined;
      });
      expect(Number(await rig.client.hget(`crew:${rig.name}:meta`, 'concurrency'))).toBe(2);
    }, 90_000);
  },
);
