import { describe, expect, it } from 'vitest';
import { Scheduler } from '../../src/core/scheduler.js';
import type { SchedulerCommand, SchedulerLimits } from '../../src/core/scheduler-types.js';

const limits: SchedulerLimits = {
  cap: 1,
  staggerMs: 0,
  maxQueued: 10,
  maxQueuedWaveMembers: 10,
  maxDepth: 2,
  maxChildren: 3,
  timeoutMs: 60_000,
};

const member = (id: string) => ({ id, agent: 'sim', keep: false });
const launches = (commands: readonly SchedulerCommand[]) =>
  commands.filter((c) => c.type === 'launch').map((c) => (c as { runId: string }).runId);

describe('stop_starts: a closing gateway starts nothing more', () => {
  it('a freed permit is not given to a queued run; the queue keeps its order', () => {
    const scheduler = new Scheduler(limits);
    const first = scheduler.step({ type: 'spawn', parent: 'mcp:p', members: [member('a')] }, 0);
    expect(launches(first.commands)).toEqual(['a']);
    scheduler.step({ type: 'spawn', parent: 'mcp:p', members: [member('b')] }, 1);
    scheduler.step({ type: 'spawn', parent: 'mcp:p', members: [member('c')] }, 2);
    expect(scheduler.step({ type: 'stop_starts' }, 3).commands).toEqual([]);
    scheduler.step({ type: 'cancel', runId: 'a' }, 4);
    const ended = scheduler.step({ type: 'ended', runId: 'a', status: 'cancelled' }, 5);
    expect(launches(ended.commands)).toEqual([]);
    expect(scheduler.queuedIds()).toEqual(['b', 'c']);
    expect(scheduler.counts().permitsHeld).toBe(0);
    expect(launches(scheduler.step({ type: 'tick' }, 6).commands)).toEqual([]);
    expect(scheduler.nextWakeAt()).toBeUndefined();
  });

  it('a permit the stagger still holds is not launched, and no wake-up is asked for it', () => {
    const scheduler = new Scheduler({ ...limits, cap: 3, staggerMs: 1_000 });
    const spawned = scheduler.step(
      { type: 'spawn', parent: 'mcp:p', batchId: 'w', members: [member('a'), member('b')] },
      0,
    );
    expect(launches(spawned.commands)).toEqual(['a']);
    expect(scheduler.nextWakeAt()).toBe(1_000);
    scheduler.step({ type: 'stop_starts' }, 10);
    expect(scheduler.nextWakeAt()).toBe(60_000); // a's start deadline only
    expect(launches(scheduler.step({ type: 'tick' }, 2_000).commands)).toEqual([]);
    expect(scheduler.liveRun('b')).toMatchObject({ status: 'starting' });
    expect(scheduler.liveRun('b')?.launchedAt).toBeUndefined();
  });
});
