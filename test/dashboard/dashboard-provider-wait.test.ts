import { describe, expect, it } from 'vitest';
import { Dashboard } from '../../src/dashboard/dashboard.js';
import { statusCell } from '../../src/gateway/run-table.js';
import { fakeWorld } from '../helpers/fake-gateway.js';

/**
 * A queued run held back by its provider (a 429's hold) says `waiting_for: provider` with `hold_until`
 * wherever runs are shown: the dashboard's read model (its snapshot and live updates) and `crew list`.
 */
describe('waiting for the provider, as the dashboard and crew list show it', () => {
  it('a run queued behind a 429 hold carries waiting_for and hold_until, and loses them once it starts', async () => {
    const world = fakeWorld({ sim: { provider: 'anthropic' }, cap: 1 });
    const dashboard = new Dashboard({
      gateway: world.gateway,
      viewsOf: (ids) =>
        world.store.runs({ ids: [...ids], limit: ids.length }).map((r) => world.gateway.viewOf(r)),
      resources: () => ({}),
      selPath: '/nonexistent/security_events.jsonl',
      clock: world.clock,
      readOnly: false,
      historyMax: 100,
      queueBounds: { singles: 32, waveMembers: 5000 },
    });
    try {
      const first = world.gateway.spawn('mcp:p', { task: 'sleep=100 first' });
      if (!first.ok) throw new Error('refused');
      await world.clock.advance(0);
      // A 429 with retry-after 5 s on the running run's call holds the provider's starts.
      const limited = () =>
        world.gateway.observeProviderCall({
          provider: 'anthropic',
          runId: first.runs[0]!.id,
          status: 429,
          retryAfterMs: 5_000,
          tokens: 0,
        });
      limited();
      const held = world.gateway.spawn('mcp:p', { task: 'sleep=100 second' });
      if (!held.ok) throw new Error('refused');
      const heldId = held.runs[0]!.id;
      const holdUntil = new Date(world.clock.now() + 5_000).toISOString();
      const pageRun = () =>
        dashboard
          .snapshot({ tab: 'all' })
          .page.rows.flatMap((row) =>
            row.kind === 'run' && row.node.run.id === heldId ? [row.node.run] : [],
          )[0];
      expect(pageRun()).toMatchObject({ status: 'queued', waiting_for: 'provider', hold_until: holdUntil });
      // A second 429 while it waits lengthens the hold: no record changes, yet the read model hears of it.
      await world.clock.advance(500);
      limited();
      const longer = new Date(world.clock.now() + 5_000).toISOString();
      await world.clock.advance(0);
      expect(pageRun()).toMatchObject({ status: 'queued', hold_until: longer });
      expect(statusCell(pageRun()!)).toBe(`queued (provider hold until ${holdUntil.slice(11, 19)}Z)`);
      // The first ends (a place is free) but the hold still keeps it queued; after the hold it starts.
      await world.clock.advance(1_000);
      expect(pageRun()).toMatchObject({ status: 'queued', waiting_for: 'provider' });
      await world.clock.advance(5_000);
      expect(pageRun()?.status).not.toBe('queued');
      expect(pageRun()?.waiting_for).toBeUndefined();
      expect(statusCell(pageRun()!)).toBe(pageRun()?.status);
    } finally {
      dashboard.close();
      await world.gateway.close();
    }
  });
});
