import { describe, expect, it } from 'vitest';
import { fakeWorld } from '../helpers/fake-gateway.js';

const ids = (result: { ok: boolean; runs?: { id: string }[] }) => (result.runs ?? []).map((r) => r.id);

describe('named scenarios (each broke another harness)', () => {
  it('cap 3, 40 single spawns: 3 hold permits, 32 queue, 5 refused; a 100-task wave still fits; singles stay refused', async () => {
    const { gateway } = fakeWorld({ cap: 3 });
    const results = Array.from({ length: 40 }, (_, i) => gateway.spawn('mcp:p', { task: `hang ${i}` }));
    const ok = results.filter((r) => r.ok);
    const refused = results.filter((r) => !r.ok);
    expect(ok.flatMap((r) => (r.ok ? r.runs : [])).filter((r) => r.status === 'starting')).toHaveLength(3);
    expect(ok.flatMap((r) => (r.ok ? r.runs : [])).filter((r) => r.status === 'queued')).toHaveLength(32);
    expect(refused).toHaveLength(5);
    for (const r of refused) {
      if (r.ok) throw new Error('unreachable');
      expect(r.refusal.code).toBe('queue_full');
      expect(r.refusal.limit).toBe(32);
      expect(r.refusal.current).toBe(32);
      expect(r.refusal.message).toMatch(/retry/);
    }
    expect(gateway.counts().permitsHeld).toBe(3);

    const wave = gateway.spawn('mcp:p', { tasks: Array.from({ length: 100 }, (_, i) => `wave ${i}`) });
    expect(wave.ok).toBe(true);
    if (wave.ok) {
      expect(wave.runs).toHaveLength(100);
      expect(wave.batch_id).toBeDefined();
      expect(wave.runs.every((r) => r.status === 'queued')).toBe(true);
    }
    const more = gateway.spawn('mcp:p', { task: 'one more' });
    expect(more.ok).toBe(false);
    if (!more.ok) expect(more.refusal.code).toBe('queue_full');
    // Refusals left no runs behind: 35 singles + 100 wave members.
    expect(gateway.list({ kind: 'operator' }).runs).toHaveLength(135);
    await gateway.close();
  });

  it('cap 3 with a 2 s stagger: starts at 0, 2 and 4 s; the later two wait as `starting`', async () => {
    const { gateway, clock, runner } = fakeWorld({ cap: 3, 'agent.subagent_spawn_stagger_secs': 2 });
    const t0 = clock.now();
    const spawned = [1, 2, 3].map((i) => gateway.spawn('mcp:p', { task: `hang ${i}` }));
    expect(spawned.every((r) => r.ok && r.runs[0]?.status === 'starting')).toBe(true);
    const launchTimes: number[] = [];
    const seen = new Set<string>();
    const record = () => {
      for (const request of runner.started) {
        if (!seen.has(request.runId)) {
          seen.add(request.runId);
          launchTimes.push(clock.now() - t0);
        }
      }
    };
    await clock.advance(0);
    record();
    expect(gateway.list({ kind: 'operator' }).runs.filter((r) => r.status === 'starting')).toHaveLength(2);
    for (let t = 0; t < 5000; t += 100) {
      await clock.advance(100);
      record();
    }
    expect(launchTimes).toEqual([0, 2000, 4000]);
    expect(gateway.list({ kind: 'operator' }).runs.every((r) => r.status === 'running')).toBe(true);
    await gateway.close();
  });

  it('cap 1, max depth 2: a running child spawns a nested child and waits; both finish; the permit returns after both', async () => {
    const { gateway, clock } = fakeWorld({ cap: 1, 'agent.subagent_max_depth': 2 });
    const top = gateway.spawn('mcp:p', { task: 'sleep=1000 parent' });
    if (!top.ok) throw new Error('top refused');
    const topId = top.runs[0]!.id;
    const queuedBehind = gateway.spawn('mcp:q', { task: 'sleep=10 behind' });
    if (!queuedBehind.ok) throw new Error('refused');
    await clock.advance(0);
    const nested = gateway.spawn(`run:${topId}`, { task: 'sleep=3000 nested' });
    expect(nested.ok).toBe(true);
    if (!nested.ok) return;
    expect(nested.runs[0]?.status).toBe('starting'); // no permit taken, no queue
    await clock.advance(1500); // the parent ended at 1000; its child is still running
    expect(gateway.list({ kind: 'operator' }).runs.find((r) => r.id === topId)?.status).toBe('completed');
    expect(gateway.holdsPermit(topId)).toBe(true);
    expect(
      gateway.list({ kind: 'operator' }).runs.find((r) => r.id === queuedBehind.runs[0]!.id)?.status,
    ).toBe('queued');
    await clock.advance(2000);
    expect(gateway.list({ kind: 'operator' }).runs.find((r) => r.id === nested.runs[0]!.id)?.status).toBe(
      'completed',
    );
    expect(gateway.holdsPermit(topId)).toBe(false);
    expect(
      gateway.list({ kind: 'operator' }).runs.find((r) => r.id === queuedBehind.runs[0]!.id)?.status,
    ).not.toBe('queued');
    await gateway.close();
  });

  it('max children 5: the sixth live nested spawn is refused children_limit and nothing is queued', async () => {
    const { gateway, clock } = fakeWorld({ cap: 3, 'agent.subagent_max_depth': 2 });
    const top = gateway.spawn('mcp:p', { task: 'hang parent' });
    if (!top.ok) throw new Error('refused');
    await clock.advance(0);
    const parent = `run:${top.runs[0]!.id}`;
    for (let i = 0; i < 5; i++) expect(gateway.spawn(parent, { task: `hang child ${i}` }).ok).toBe(true);
    const sixth = gateway.spawn(parent, { task: 'hang child 6' });
    expect(sixth.ok).toBe(false);
    if (!sixth.ok) {
      expect(sixth.refusal.code).toBe('children_limit');
      expect(sixth.refusal.limit).toBe(5);
    }
    expect(gateway.queuedIds()).toEqual([]);
    expect(gateway.list({ kind: 'operator' }).runs).toHaveLength(6);
    await gateway.close();
  });

  it('cap 1: steering the running child reaches it at once; peak running stays 1', async () => {
    const { gateway, clock, runner } = fakeWorld({ cap: 1 });
    const a = gateway.spawn('mcp:p', { task: 'hang a' });
    gateway.spawn('mcp:p', { task: 'hang b' });
    if (!a.ok) throw new Error('refused');
    await clock.advance(0);
    const steer = gateway.steer(a.runs[0]!.id, 'focus on tests', 'interrupt', {
      kind: 'parent',
      parent: 'mcp:p',
    });
    expect(steer).toEqual({ ok: true });
    await clock.advance(0);
    expect(runner.steered).toEqual([{ runId: a.runs[0]!.id, message: 'focus on tests', mode: 'interrupt' }]);
    expect(runner.peakLive).toBe(1);
    expect(gateway.counts().permitsHeld).toBe(1);
    await gateway.close();
  });

  it('queued A, B, C; cancel B: A then C start, B never starts, nothing else moves', async () => {
    const { gateway, clock, runner } = fakeWorld({ cap: 1 });
    const holder = gateway.spawn('mcp:p', { task: 'sleep=100 holder' });
    const [a, b, c] = ['A', 'B', 'C'].map((n) => gateway.spawn('mcp:p', { task: `sleep=100 ${n}` }));
    if (!holder.ok || !a?.ok || !b?.ok || !c?.ok) throw new Error('refused');
    expect(gateway.cancel(b.runs[0]!.id, { kind: 'parent', parent: 'mcp:p' })).toEqual({ ok: true });
    expect(gateway.queuedIds()).toEqual([a.runs[0]!.id, c.runs[0]!.id]);
    await clock.advance(1000);
    expect(runner.started.map((r) => r.runId)).toEqual([holder.runs[0]!.id, a.runs[0]!.id, c.runs[0]!.id]);
    expect(gateway.list({ kind: 'operator' }).runs.find((r) => r.id === b.runs[0]!.id)?.status).toBe(
      'cancelled',
    );
    await gateway.close();
  });

  it('cap 1: three runs that fail in a row never wait; every permit returns', async () => {
    const { gateway, clock } = fakeWorld({ cap: 1 });
    const runs = [1, 2, 3].map((i) => gateway.spawn('mcp:p', { task: `sleep=10 fail ${i}` }));
    await clock.advance(100);
    const views = gateway.list({ kind: 'operator' }).runs;
    expect(views.map((v) => v.status)).toEqual(['failed', 'failed', 'failed']);
    expect(runs.every((r) => r.ok)).toBe(true);
    expect(gateway.counts().permitsHeld).toBe(0);
    await gateway.close();
  });

  it('two members of a wave that end in the same tick yield exactly one digest naming both', async () => {
    const { gateway, clock } = fakeWorld({ cap: 3 });
    const wave = gateway.spawn('mcp:p', { tasks: ['sleep=500 one', 'sleep=500 two'] });
    if (!wave.ok) throw new Error('refused');
    await clock.advance(600);
    const events = await gateway.waitForEvents('mcp:p', 0);
    expect(events).toHaveLength(1);
    expect(events[0]?.kind).toBe('digest');
    expect(events[0]?.run_ids.sort()).toEqual(ids(wave).sort());
    for (const id of ids(wave)) expect(events[0]?.text).toContain(id);
    expect(await gateway.waitForEvents('mcp:p', 0)).toEqual([]);
    await gateway.close();
  });

  it('cap N, N+5 runs one after another: all admitted (the cap counts in flight, not lifetime)', async () => {
    const { gateway, clock } = fakeWorld({ cap: 4 });
    for (let i = 0; i < 9; i++) {
      const r = gateway.spawn('mcp:p', { task: `sleep=10 seq ${i}` });
      expect(r.ok && r.runs[0]?.status).toBe('starting');
      await clock.advance(50);
    }
    expect(gateway.list({ kind: 'operator' }).runs.every((r) => r.status === 'completed')).toBe(true);
    await gateway.close();
  });

  it('the same command_id twice is one run; a refused command_id retried after room frees is admitted', async () => {
    const { gateway, clock } = fakeWorld({ cap: 3, 'agent.subagent_max_queued': 1 });
    const first = gateway.spawn('mcp:p', { task: 'sleep=100 x', command_id: 'cmd-1' });
    const again = gateway.spawn('mcp:p', { task: 'sleep=100 x', command_id: 'cmd-1' });
    expect(ids(first)).toEqual(ids(again));
    expect(gateway.list({ kind: 'operator' }).runs).toHaveLength(1);
    gateway.spawn('mcp:p', { task: 'sleep=100 a' });
    gateway.spawn('mcp:p', { task: 'sleep=100 b' });
    gateway.spawn('mcp:p', { task: 'sleep=100 queued' });
    const refused = gateway.spawn('mcp:p', { task: 'sleep=100 y', command_id: 'cmd-2' });
    expect(refused.ok).toBe(false);
    await clock.advance(150);
    const retried = gateway.spawn('mcp:p', { task: 'sleep=100 y', command_id: 'cmd-2' });
    expect(retried.ok).toBe(true);
    await gateway.close();
  });
});

describe('delivery preference', () => {
  it('a parent blocked in spawn_wait gets its event even when a push sink is attached', async () => {
    const { gateway, clock } = fakeWorld();
    let pushes = 0;
    gateway.attachSink('chat:c', {
      deliver: () => {
        pushes++;
        return new Promise<void>(() => undefined); // a parent busy in its turn never accepts
      },
    });
    const waiting = gateway.waitForEvents('chat:c', 30_000);
    const r = gateway.spawn('chat:c', { task: 'sleep=10 x' });
    if (!r.ok) throw new Error('refused');
    await clock.advance(20);
    const events = await waiting;
    expect(events.map((e) => e.run_ids[0])).toEqual([r.runs[0]!.id]);
    expect(pushes).toBe(0);
    await gateway.close();
  });
});
