import { describe, expect, it } from 'vitest';
import { Scheduler } from '../../src/core/scheduler.js';
import type { SchedulerLimits } from '../../src/core/scheduler-types.js';

const limits: SchedulerLimits = {
  cap: 6,
  staggerMs: 0,
  maxQueued: 10,
  maxQueuedWaveMembers: 10,
  maxDepth: 2,
  maxChildren: 3,
  timeoutMs: 600_000,
  provider: { initialCap: 3, maxCap: 6 },
};

const admit = (s: Scheduler, id: string, now = 0, provider: string | undefined = 'anthropic') =>
  s.step(
    {
      type: 'spawn',
      parent: 'mcp:p',
      members: [{ id, agent: 'claude', keep: false, ...(provider ? { provider } : {}) }],
    },
    now,
  ).reply;
const statusOf = (reply: ReturnType<typeof admit>) =>
  reply.kind === 'admitted' ? reply.runs[0]?.status : reply.kind;
const complete = (s: Scheduler, id: string, now: number) => {
  s.step({ type: 'started', runId: id }, now);
  s.step({ type: 'ended', runId: id, status: 'completed' }, now);
};

describe('the provider cap in the scheduler', () => {
  it('runs against one provider start up to its cap, then queue (never refused), beside the host cap', () => {
    const s = new Scheduler(limits);
    expect(['a', 'b', 'c', 'd'].map((id) => statusOf(admit(s, id)))).toEqual([
      'starting',
      'starting',
      'starting',
      'queued',
    ]);
    // A run with no provider is bound by the host cap alone, but waits its turn in the FIFO queue.
    expect(statusOf(admit(s, 'x', 0, undefined))).toBe('queued');
    expect(s.providerStatus().anthropic).toMatchObject({ cap: 3, running: 3 });
    expect(s.waitsForProvider(s.liveRun('d')!, 0)).toEqual({});
  });

  it('a 429 cuts the cap and holds starts until retry-after; the hold ends with a tick', () => {
    const s = new Scheduler(limits);
    for (const id of ['a', 'b', 'c', 'd', 'e']) admit(s, id);
    s.step({ type: 'provider_limited', provider: 'anthropic', runId: 'a', retryAfterMs: 2_000 }, 100);
    // floor(min(3, 3) × 0.7) = 2; a ends but nothing starts while the hold lasts.
    expect(s.providerStatus().anthropic).toMatchObject({ cap: 2, holdUntil: 2_100 });
    complete(s, 'b', 500);
    complete(s, 'c', 600);
    expect(s.queuedIds()).toEqual(['d', 'e']);
    expect(s.waitsForProvider(s.liveRun('d')!, 600)).toEqual({ holdUntil: 2_100 });
    expect(s.nextWakeAt()).toBe(2_100);
    s.step({ type: 'tick' }, 2_100);
    // One running (a), cap 2: one more starts.
    expect(s.queuedIds()).toEqual(['e']);
  });

  it('clean completions while the cap is in use let it climb; a run that met a 429 does not', () => {
    const s = new Scheduler(limits);
    for (const id of ['a', 'b', 'c']) admit(s, id);
    s.step({ type: 'provider_limited', provider: 'anthropic', runId: 'a', retryAfterMs: 0 }, 0);
    expect(s.providerStatus().anthropic?.cap).toBe(2);
    complete(s, 'a', 20_000); // met the 429: no climb
    expect(s.providerStatus().anthropic?.cap).toBe(2);
    complete(s, 'b', 20_001); // clean, running (b, c) × 2 ≥ 2: climbs
    expect(s.providerStatus().anthropic?.cap).toBe(3);
  });

  it('a 429 for a run no longer known still lowers the cap, and leaves nothing behind', () => {
    const s = new Scheduler(limits);
    admit(s, 'a');
    complete(s, 'a', 1);
    s.step({ type: 'provider_limited', provider: 'anthropic', runId: 'a', retryAfterMs: 1_000 }, 2);
    expect(s.providerStatus().anthropic).toMatchObject({ cap: 2, running: 0, holdUntil: 1_002 });
  });

  it('without a provider policy the provider on a run changes nothing', () => {
    const { provider: _ignored, ...noProvider } = limits;
    const s = new Scheduler(noProvider);
    expect(['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((id) => statusOf(admit(s, id)))).toEqual([
      'starting',
      'starting',
      'starting',
      'starting',
      'starting',
      'starting',
      'queued',
    ]);
    s.step({ type: 'provider_limited', provider: 'anthropic', runId: 'a', retryAfterMs: 5_000 }, 0);
    complete(s, 'a', 1);
    expect(s.queuedIds()).toEqual([]);
  });

  it('a single spawn that would wait for the provider counts against the queue bound', () => {
    const s = new Scheduler({ ...limits, maxQueued: 1 });
    for (const id of ['a', 'b', 'c']) admit(s, id);
    expect(statusOf(admit(s, 'd'))).toBe('queued');
    const refused = admit(s, 'e');
    expect(refused).toMatchObject({ kind: 'refused', refusal: { code: 'queue_full' } });
  });

  it('a token budget event stops the run once; it ends completed with stop token_budget', () => {
    const s = new Scheduler(limits);
    admit(s, 'a');
    s.step({ type: 'started', runId: 'a' }, 1);
    const first = s.step({ type: 'token_budget', runId: 'a' }, 2).commands;
    expect(first).toContainEqual({ type: 'stop', runId: 'a', reason: 'token_budget' });
    // A second report asks for nothing more.
    expect(s.step({ type: 'token_budget', runId: 'a' }, 3).commands).not.toContainEqual(
      expect.objectContaining({ type: 'stop' }),
    );
    const end = s.step({ type: 'ended', runId: 'a', status: 'cancelled' }, 4).commands;
    expect(end).toContainEqual({
      type: 'persist',
      run: expect.objectContaining({ id: 'a', status: 'completed', stop: 'token_budget' }),
    });
  });
});
