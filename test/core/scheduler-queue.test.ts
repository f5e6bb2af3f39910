import { describe, expect, it } from 'vitest';
import { Scheduler } from '../../src/core/scheduler.js';
import type { SchedulerLimits } from '../../src/core/scheduler-types.js';

const limits: SchedulerLimits = {
  cap: 1,
  staggerMs: 0,
  maxQueued: 1,
  maxQueuedWaveMembers: 2,
  maxDepth: 2,
  maxChildren: 3,
  timeoutMs: 60_000,
};

const member = (id: string) => ({ id, agent: 'sim', keep: false });

describe('the queue bounds count each queued run against its own bound', () => {
  it('a cancelled queued wave member frees a wave slot, not a single run slot', () => {
    const scheduler = new Scheduler(limits);
    scheduler.step({ type: 'spawn', parent: 'mcp:p', members: [member('a')] }, 0); // holds the one permit
    scheduler.step({ type: 'spawn', parent: 'mcp:p', members: [member('s1')] }, 1); // the one queued single
    const wave = scheduler.step(
      { type: 'spawn', parent: 'mcp:p', batchId: 'b1', members: [member('w1'), member('w2')] },
      2,
    );
    expect(wave.reply.ok).toBe(true);
    expect(scheduler.queuedIds()).toEqual(['s1', 'w1', 'w2']);

    scheduler.step({ type: 'cancel', runId: 'w1' }, 3);
    expect(scheduler.queuedIds()).toEqual(['s1', 'w2']);

    // The single bound is still full (s1 queued) ...
    const single = scheduler.step({ type: 'spawn', parent: 'mcp:p', members: [member('s2')] }, 4);
    expect(single.reply).toMatchObject({ ok: false, refusal: { code: 'queue_full' } });
    // ... and the wave bound has one slot again (w2 queued of 2).
    const next = scheduler.step(
      { type: 'spawn', parent: 'mcp:p', batchId: 'b2', members: [member('w3')] },
      5,
    );
    expect(next.reply.ok).toBe(true);
    expect(scheduler.queuedIds()).toEqual(['s1', 'w2', 'w3']);
  });
});
