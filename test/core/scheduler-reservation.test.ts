import { describe, expect, it } from 'vitest';
import { Scheduler } from '../../src/core/scheduler.js';
import type { SchedulerLimits } from '../../src/core/scheduler-types.js';

const limits: SchedulerLimits = {
  cap: 4,
  staggerMs: 0,
  maxQueued: 10,
  maxQueuedWaveMembers: 10,
  maxDepth: 2,
  maxChildren: 3,
  timeoutMs: 60_000,
  reservationBufferGb: 2,
  fallbackCostGb: 1,
};

const admit = (s: Scheduler, id: string, now = 0, parent = 'mcp:p') =>
  s.step({ type: 'spawn', parent, members: [{ id, agent: 'sim', keep: false }] }, now).reply;
const statusOf = (reply: ReturnType<typeof admit>) =>
  reply.ok && reply.kind === 'admitted' && reply.runs[0]?.status;

describe('the reservation gate in the scheduler', () => {
  it('without memory samples the count cap alone decides', () => {
    const s = new Scheduler(limits);
    for (const id of ['a', 'b', 'c', 'd', 'e']) admit(s, id);
    expect(s.counts()).toMatchObject({ permitsHeld: 4, queued: 1 });
  });

  it('holds starts (they queue, never refused) until what the live runs may grow into fits, and lets them go as memory frees', () => {
    const s = new Scheduler(limits);
    // 6 GiB available, 2 kept back, each run expected to peak at 1.5 GiB: two fit with nothing live.
    s.step({ type: 'memory', sample: { availableGb: 6, currentGb: {}, expectedGb: { sim: 1.5 } } }, 0);
    const answers = ['a', 'b', 'c'].map((id) => admit(s, id));
    expect(answers.map((r) => r.ok && r.kind === 'admitted' && r.runs[0]?.status)).toEqual([
      'starting',
      'starting',
      'queued',
    ]);
    // a ends: its reservation is freed at once, so c starts though the cap has room for more.
    s.step({ type: 'ended', runId: 'a', status: 'completed' }, 10);
    expect(s.counts()).toMatchObject({ permitsHeld: 2, queued: 0 });
    expect(s.queuedIds()).toEqual([]);
  });

  it('a run that outgrows its expectation holds what it has; a sample that shows memory freed lets the queue move', () => {
    const s = new Scheduler(limits);
    s.step({ type: 'memory', sample: { availableGb: 10, currentGb: {}, expectedGb: { sim: 1 } } }, 0);
    for (const id of ['a', 'b', 'c', 'd', 'e']) admit(s, id);
    expect(s.counts()).toMatchObject({ permitsHeld: 4, queued: 1 });
    // b, c, d now hold 2.5 GiB each and only 1 GiB is available; when a ends: 1 + 7.5 − 2 = 6.5 < 7.5 + 1, so e waits.
    s.step(
      {
        type: 'memory',
        sample: { availableGb: 1, currentGb: { b: 2.5, c: 2.5, d: 2.5 }, expectedGb: { sim: 1 } },
      },
      6,
    );
    s.step({ type: 'ended', runId: 'a', status: 'completed' }, 5);
    expect(s.queuedIds()).toEqual(['e']);
    s.step(
      {
        type: 'memory',
        sample: { availableGb: 4, currentGb: { b: 2.5, c: 2.5, d: 2.5 }, expectedGb: { sim: 1 } },
      },
      7,
    );
    expect(s.queuedIds()).toEqual([]);
  });

  it("holds a start for the agents' learned spread (a margin over the means), and lets it go when the spread is gone", () => {
    const s = new Scheduler({ ...limits, cap: 8 });
    // 10 GiB available, 2 kept back, runs of mean 1 and spread 1: 1·k + 1.5·√k ≤ 8 holds to k = 4 (7), not 5.
    const sample = { availableGb: 10, currentGb: {}, expectedGb: { sim: 1 }, spreadGb: { sim: 1 } };
    s.step({ type: 'memory', sample }, 0);
    for (const id of ['a', 'b', 'c', 'd', 'e', 'f']) admit(s, id);
    expect(s.queuedIds()).toEqual(['e', 'f']);
    // A later tick learned the agent never strays: the means alone fit 6 of 8.
    s.step({ type: 'memory', sample: { ...sample, spreadGb: { sim: 0 } } }, 2);
    expect(s.queuedIds()).toEqual([]);
  });

  it('takes a settled run at its high-water mark, with no spread: the queue moves once live runs stop growing', () => {
    const s = new Scheduler({ ...limits, cap: 8 });
    const costs = { expectedGb: { sim: 1 }, spreadGb: { sim: 1 } };
    s.step({ type: 'memory', sample: { availableGb: 10, currentGb: {}, ...costs } }, 0);
    for (const id of ['a', 'b', 'c', 'd', 'e', 'f']) admit(s, id);
    expect(s.queuedIds()).toEqual(['e', 'f']);
    // a–d hold 0.5 GiB each, still growing: 4 + 1 + 1.5·√5 > 8 + 2 − 2, so e waits.
    const held = { a: 0.5, b: 0.5, c: 0.5, d: 0.5 };
    s.step({ type: 'memory', sample: { availableGb: 8, currentGb: held, ...costs } }, 2);
    expect(s.queuedIds()).toEqual(['e', 'f']);
    // The same runs settled at 0.5: 2 + 2 + 1.5·√2 ≤ 8, so e and f start.
    s.step({ type: 'memory', sample: { availableGb: 8, currentGb: held, settledGb: held, ...costs } }, 4);
    expect(s.queuedIds()).toEqual([]);
  });

  it('with nothing live the head starts even if it does not fit, so the queue cannot stall', () => {
    const s = new Scheduler(limits);
    s.step({ type: 'memory', sample: { availableGb: 0.5, currentGb: {}, expectedGb: { sim: 3 } } }, 0);
    expect(admit(s, 'a')).toMatchObject({ runs: [{ status: 'starting' }] });
    expect(admit(s, 'b')).toMatchObject({ runs: [{ status: 'queued' }] });
  });

  it('an unknown memory reading sets no limit', () => {
    const s = new Scheduler(limits);
    s.step(
      { type: 'memory', sample: { availableGb: undefined, currentGb: {}, expectedGb: { sim: 100 } } },
      0,
    );
    for (const id of ['a', 'b', 'c']) admit(s, id);
    expect(s.counts().permitsHeld).toBe(3);
  });
});

describe('the reservation gate when some runs start elsewhere (cluster mode: startsHere)', () => {
  // Top-level runs of `cluster:*` parents are copies executed here; the others are proxies, executed on
  // another gateway. 3 GiB available, 2 kept back, 1 GiB expected per run: one run here at a time.
  const clusterLimits: SchedulerLimits = {
    ...limits,
    cap: 4,
    startsHere: (parent) => parent.startsWith('cluster:'),
  };
  const tight = (s: Scheduler) =>
    s.step({ type: 'memory', sample: { availableGb: 3, currentGb: {}, expectedGb: { sim: 1 } } }, 0);

  it('weighs only the runs that start here, and lets a run that starts elsewhere pass one held back here', () => {
    const s = new Scheduler(clusterLimits);
    tight(s);
    expect(['p1', 'p2'].map((id) => statusOf(admit(s, id)))).toEqual(['starting', 'starting']);
    // Two proxies live, yet the first copy starts: they hold no memory here.
    expect(statusOf(admit(s, 'c1', 0, 'cluster:g1'))).toBe('starting');
    expect(statusOf(admit(s, 'c2', 0, 'cluster:g1'))).toBe('queued');
    // The held copy does not hold a proxy behind it; the last permit goes to it.
    expect(statusOf(admit(s, 'p3'))).toBe('starting');
    expect(s.counts()).toMatchObject({ permitsHeld: 4, queued: 1 });
    // With the permits full a proxy queues, and the next proxy queues behind it (one order among proxies).
    expect(statusOf(admit(s, 'p4'))).toBe('queued');
    expect(s.queuedIds()).toEqual(['c2', 'p4']);
    // A proxy ends: its permit goes to p4, past c2, which still does not fit.
    s.step({ type: 'ended', runId: 'p1', status: 'completed' }, 10);
    expect(s.queuedIds()).toEqual(['c2']);
    expect(statusOf(admit(s, 'p5'))).toBe('queued');
    // The copy here ends: c2 fits now and takes the free permit first, in queue order.
    s.step({ type: 'ended', runId: 'c1', status: 'completed' }, 20);
    expect(s.queuedIds()).toEqual(['p5']);
  });
});
