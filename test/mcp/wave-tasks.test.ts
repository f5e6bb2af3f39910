import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import type { Gateway } from '../../src/gateway/gateway.js';
import type { DeliveredEvent } from '../../src/gateway/relay.js';
import { WaveTasks } from '../../src/mcp/wave-tasks.js';

/**
 * The task store's bounds and delivery rule, on a stand-in gateway (a unit test: the real one runs in
 * test/daemon/mcp-modern-tasks.test.ts): a poll while runs go on takes nothing; ended tasks expire after
 * their TTL; past the bound the oldest ended task goes first.
 */
function fakeGateway(clock: FakeClock) {
  const statuses = new Map<string, string>();
  const pending: DeliveredEvent[] = [];
  let takes = 0;
  const gateway = {
    now: () => clock.now(),
    views: (ids: readonly string[]) =>
      ids.filter((id) => statuses.has(id)).map((id) => ({ id, status: statuses.get(id) })),
    waitForEvents: async () => {
      takes++;
      return pending.splice(0);
    },
    cancel: (id: string) => {
      statuses.set(id, 'cancelled');
      return { ok: true };
    },
  } as unknown as Gateway;
  return { gateway, statuses, pending, takes: () => takes };
}

const digest = (batch: string): DeliveredEvent => ({
  id: `e-${batch}`,
  parent: 'mcp:p',
  kind: 'digest',
  run_ids: ['r1'],
  batch_id: batch,
  text: `digest ${batch}`,
});

describe('WaveTasks', () => {
  it('takes nothing while the wave runs, then completes with the digest once its runs have ended', async () => {
    const clock = new FakeClock();
    const g = fakeGateway(clock);
    const tasks = new WaveTasks(g.gateway);
    g.statuses.set('r1', 'running');
    const task = tasks.create('mcp:p', 'b1', ['r1']);
    expect((await tasks.get(task.taskId, 'mcp:p'))?.task.status).toBe('working');
    expect(g.takes()).toBe(0);
    g.statuses.set('r1', 'completed');
    g.pending.push(digest('b1'));
    const done = await tasks.get(task.taskId, 'mcp:p');
    expect(done?.task.status).toBe('completed');
    expect((done?.result?.structuredContent as { events: DeliveredEvent[] } | undefined)?.events).toEqual([
      digest('b1'),
    ]);
    expect(await tasks.get(task.taskId, 'mcp:other')).toBeUndefined();
  });

  it('forgets an ended task after its TTL and keeps at most max, the oldest ended going first', async () => {
    const clock = new FakeClock();
    const g = fakeGateway(clock);
    const tasks = new WaveTasks(g.gateway, { max: 3, ttlMs: 1000 });
    g.statuses.set('w', 'running');
    const working = tasks.create('mcp:p', 'bw', ['w']);
    const ended = tasks.create('mcp:p', 'be', ['e']);
    expect(tasks.cancel(ended.taskId, 'mcp:p')).toBe(true);
    tasks.create('mcp:p', 'b3', ['w']);
    tasks.create('mcp:p', 'b4', ['w']);
    expect(tasks.size).toBe(3);
    expect(await tasks.get(ended.taskId, 'mcp:p')).toBeUndefined();
    expect(await tasks.get(working.taskId, 'mcp:p')).toBeDefined();
    const again = tasks.create('mcp:p', 'b5', ['x']);
    tasks.cancel(again.taskId, 'mcp:p');
    await clock.advance(1000);
    expect(await tasks.get(again.taskId, 'mcp:p')).toBeUndefined();
    expect(tasks.size).toBeLessThanOrEqual(3);
  });
});
