import { describe, expect, it } from 'vitest';
import { fakeWorld } from '../helpers/fake-gateway.js';

/**
 * A closing gateway launches nothing new (the teardown race): `close()` cancels what executes, each cancel
 * frees a permit, and the runs queued behind it must stay queued in the store for the next start instead
 * of being launched (and then waited for, or left with a live timer) while the gateway shuts down.
 */
describe('close() launches nothing new', () => {
  it('a run queued behind the cap stays queued when the run holding the permit is cancelled by close()', async () => {
    const { gateway, runner, clock, store } = fakeWorld({ cap: 1 });
    const reply = gateway.spawn('cli:t', { tasks: ['hang a', 'b', 'c'] });
    expect(reply.ok).toBe(true);
    await clock.advance(1);
    expect(runner.started.map((r) => r.prompt)).toEqual(['hang a']);
    const closed = gateway.close();
    await clock.advance(10);
    await closed;
    expect(runner.started.map((r) => r.prompt)).toEqual(['hang a']);
    const statuses = store
      .runs({})
      .map((r) => [r.spec.task, r.run.status])
      .sort();
    expect(statuses).toEqual([
      ['b', 'queued'],
      ['c', 'queued'],
      ['hang a', 'cancelled'],
    ]);
  });

  it('a run whose permit the stagger still held is not launched by close(); it is not lost', async () => {
    const { gateway, runner, clock, store } = fakeWorld({ cap: 3, 'agent.subagent_spawn_stagger_secs': 1 });
    gateway.spawn('cli:t', { tasks: ['hang a', 'b'] });
    await clock.advance(1);
    expect(runner.started.map((r) => r.prompt)).toEqual(['hang a']);
    const closed = gateway.close();
    await clock.advance(5_000);
    await closed;
    expect(runner.started.map((r) => r.prompt)).toEqual(['hang a']);
    const b = store.runs({}).find((r) => r.spec.task === 'b');
    expect(b?.run.status).toBe('starting');
    expect(b?.run.launchedAt).toBeUndefined();
  });
});
