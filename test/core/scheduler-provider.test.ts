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

  it('tokens count against the run budget: past it the run is stopped once and ends completed, stop token_budget', () => {
    const s = new Scheduler(limits);
    s.step(
      {
        type: 'spawn',
        parent: 'mcp:p',
        members: [{ id: 'a', agent: 'claude', keep: false, maxTokens: 1000 }],
      },
      0,
    );
    s.step({ type: 'started', runId: 'a' }, 1);
    const stops = (now: number, tokens: number) =>
      s.step({ type: 'tokens', runId: 'a', tokens }, now).commands.filter((c) => c.type === 'stop');
    // Exactly at the budget is within it.
    expect(stops(2, 600)).toEqual([]);
    expect(stops(3, 400)).toEqual([]);
    expect(stops(4, 1)).toEqual([{ type: 'stop', runId: 'a', reason: 'token_budget' }]);
    // A later report asks for nothing more.
    expect(stops(5, 5000)).toEqual([]);
    const end = s.step({ type: 'ended', runId: 'a', status: 'cancelled' }, 6).commands;
    expect(end).toContainEqual({
      type: 'persist',
      run: expect.objectContaining({ id: 'a', status: 'completed', stop: 'token_budget' }),
    });
  });

  it('a run with no token budget is never stopped by its tokens', () => {
    const s = new Scheduler(limits);
    admit(s, 'a');
    s.step({ type: 'started', runId: 'a' }, 1);
    const commands = s.step({ type: 'tokens', runId: 'a', tokens: 10_000_000 }, 2).commands;
    expect(commands.filter((c) => c.type === 'stop')).toEqual([]);
  });

  it("a nested run's token budget is narrowed to what its ancestors have left", () => {
    const s = new Scheduler({ ...limits, maxDepth: 3 });
    const spawnUnder = (parent: string, id: string, maxTokens?: number) =>
      s.step(
        {
          type: 'spawn',
          parent,
          members: [{ id, agent: 'claude', keep: false, ...(maxTokens !== undefined ? { maxTokens } : {}) }],
        },
        1,
      ).commands;
    const budgetOf = (commands: ReturnType<typeof spawnUnder>, id: string) =>
      commands.flatMap((c) => (c.type === 'persist' && c.run.id === id ? [c.run.maxTokens] : []))[0];
    spawnUnder('mcp:p', 'root', 1000);
    s.step({ type: 'started', runId: 'root' }, 1);
    s.step({ type: 'tokens', runId: 'root', tokens: 600 }, 1);
    // Its own budget when smaller; the root's 400 left when its own is larger or none.
    expect(budgetOf(spawnUnder('run:root', 'small', 100), 'small')).toBe(100);
    expect(budgetOf(spawnUnder('run:root', 'large', 5000), 'large')).toBe(400);
    const mid = spawnUnder('run:root', 'mid');
    expect(budgetOf(mid, 'mid')).toBe(400);
    // A grandchild is bound by every ancestor: mid spent 100 of its 400, the root still has 400.
    s.step({ type: 'started', runId: 'mid' }, 1);
    s.step({ type: 'tokens', runId: 'mid', tokens: 100 }, 1);
    expect(budgetOf(spawnUnder('run:mid', 'grand'), 'grand')).toBe(300);
    // An ancestor with nothing left still gives 1: the child stops at its first counted call.
    s.step({ type: 'tokens', runId: 'root', tokens: 400 }, 1);
    expect(budgetOf(spawnUnder('run:mid', 'last', 50), 'last')).toBe(1);
    // No budget anywhere: none.
    spawnUnder('mcp:p', 'free');
    s.step({ type: 'started', runId: 'free' }, 1);
    expect(budgetOf(spawnUnder('run:free', 'child'), 'child')).toBeUndefined();
  });
});

describe('a configured provider cap (providers.NAME.cap)', () => {
  const fixedLimits: SchedulerLimits = {
    ...limits,
    provider: { initialCap: 6, maxCap: 6, fixed: { anthropic: 2 }, adaptive: false },
  };

  it('starts up to its number and queues the rest; a 429 holds starts but never moves it', () => {
    const s = new Scheduler(fixedLimits);
    expect(['a', 'b', 'c'].map((id) => statusOf(admit(s, id)))).toEqual(['starting', 'starting', 'queued']);
    expect(s.providerStatus().anthropic).toMatchObject({ cap: 2, source: 'configured' });
    s.step({ type: 'started', runId: 'a' }, 1);
    s.step({ type: 'provider_limited', provider: 'anthropic', runId: 'a', retryAfterMs: 5_000 }, 1);
    expect(s.providerStatus().anthropic).toMatchObject({ cap: 2, holdUntil: 5_001 });
    s.step({ type: 'ended', runId: 'a', status: 'completed' }, 2);
    // The hold keeps c waiting for the provider though a place is free; it starts once the hold ends.
    expect(s.waitsForProvider(s.liveRun('c')!, 2)).toEqual({ holdUntil: 5_001 });
    s.step({ type: 'tick' }, 5_001);
    expect(s.liveRun('c')?.status).toBe('starting');
    // Clean completions while in use would raise an adaptive cap; a configured one stays.
    complete(s, 'b', 6_000);
    complete(s, 'c', 6_001);
    expect(s.providerStatus().anthropic?.cap).toBe(2);
  });

  it('with adaptive_cap off, a provider with no configured cap is bound by the host cap alone', () => {
    const s = new Scheduler(fixedLimits);
    const ids = ['a', 'b', 'c', 'd', 'e', 'f'];
    expect(ids.map((id) => statusOf(admit(s, id, 0, 'openai')))).toEqual(ids.map(() => 'starting'));
    s.step({ type: 'provider_limited', provider: 'openai', runId: 'a', retryAfterMs: 5_000 }, 1);
    expect(s.providerStatus().openai).toBeUndefined();
  });
});
