import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Gateway, SpawnResult } from '../../src/gateway/gateway.js';
import { fakeWorld } from '../helpers/fake-gateway.js';

function refusal(result: SpawnResult | { ok: boolean; refusal?: unknown }) {
  if (result.ok) throw new Error(`expected a refusal, got ${JSON.stringify(result)}`);
  return (result as { refusal: { code: string; message: string; path?: string; limit?: number } }).refusal;
}

const op = { kind: 'operator' } as const;

describe('admission step 1: validation refusals', () => {
  const { gateway, sel } = fakeWorld();
  const root = mkdtempSync(join(tmpdir(), 'crew-cwd-'));
  mkdirSync(join(root, 'allowed', 'inside'), { recursive: true });
  mkdirSync(join(root, 'outside'));
  symlinkSync(join(root, 'outside'), join(root, 'allowed', 'escape'));
  afterAll(async () => {
    await gateway.close();
    rmSync(root, { recursive: true, force: true });
  });

  it.each([
    [{ task: '' }, 'empty_task', 'task'],
    [{ task: '   \n\t' }, 'empty_task', 'task'],
    [{ tasks: [] }, 'empty_task', 'tasks'],
    [{ tasks: ['ok', ' '] }, 'empty_task', 'tasks[1]'],
    [{}, 'empty_task', 'task'],
    [{ task: 'x'.repeat(100_001) }, 'invalid_argument', 'task'],
    [{ task: 'x', max_turns: 201 }, 'invalid_argument', 'max_turns'],
    [{ task: 'x', max_turns: -1 }, 'invalid_argument', 'max_turns'],
    [{ task: 'x', max_turns: 1.5 }, 'invalid_argument', 'max_turns'],
    [{ task: 'x', max_tokens: -1 }, 'invalid_argument', 'max_tokens'],
    [{ task: 'x', max_tokens: 2.5 }, 'invalid_argument', 'max_tokens'],
    [{ task: 'x', max_tokens: 1e12 }, 'invalid_argument', 'max_tokens'],
    [{ task: 'x', max_tokens: 'lots' }, 'invalid_argument', 'max_tokens'],
    [{ task: 'x', max_tokens: null }, 'invalid_argument', 'max_tokens'],
    [{ task: 42 }, 'invalid_argument', 'task'],
    [{ tasks: ['a', 7] }, 'invalid_argument', 'tasks[1]'],
    [{ task: 'x', reasoning_effort: 'extreme' }, 'invalid_argument', 'reasoning_effort'],
    [{ task: 'x', surprise: true }, 'invalid_argument', '(arguments)'],
    [{ task: 'x', agent: 'nobody' }, 'unknown_agent', 'agent'],
    [{ tasks: ['a', 'b'], agents: ['sim'] }, 'invalid_argument', 'agents'],
    [{ tasks: ['a', 'b'], agents: ['sim', 'ghost'] }, 'unknown_agent', 'agents[1]'],
    [{ task: 'x', cwd: 'relative/dir' }, 'cwd_not_allowed', 'cwd'],
    [{ task: 'x', cwd: '/etc' }, 'cwd_not_allowed', 'cwd'],
    [{ tasks: Array.from({ length: 1001 }, () => 't') }, 'batch_too_large', 'tasks'],
  ])('%j → %s at %s', (args, code, path) => {
    const r = refusal(gateway.spawn('mcp:p', args));
    expect(r.code).toBe(code);
    expect(r.path).toBe(path);
    expect(r.message.length).toBeGreaterThan(10);
  });

  it('credentials in a task reach the runner but never the preview, list or SEL', async () => {
    const world = fakeWorld();
    const task = 'deploy with AKIAIOSFODNN7EXAMPLE and https://user:hunter2@example.com/x';
    const r = world.gateway.spawn('mcp:p', { task });
    expect(r.ok).toBe(true);
    await world.clock.advance(0);
    expect(world.runner.started[0]?.prompt).toBe(task);
    const preview = world.gateway.list(op).runs[0]?.task_preview ?? '';
    expect(preview).not.toContain('AKIAIOSFODNN7EXAMPLE');
    expect(preview).not.toContain('hunter2');
    expect(preview).toContain('deploy with');
    expect(JSON.stringify(world.sel.records)).not.toContain('hunter2');
    await world.gateway.close();
  });

  it('an empty task is logged rejected_empty_task, and nothing was admitted', () => {
    gateway.spawn('mcp:p', { task: ' ' });
    expect(sel.records.some((e) => e.outcome === 'rejected_empty_task')).toBe(true);
    expect(gateway.list(op).runs).toHaveLength(0);
  });

  it('cwd: allowed under a root, refused through ../ or a symlink out', async () => {
    const world = fakeWorld({ 'agent.subagent_cwd_allowed_roots': [join(root, 'allowed')] });
    const g: Gateway = world.gateway;
    expect(g.spawn('mcp:p', { task: 'x', cwd: join(root, 'allowed', 'inside') }).ok).toBe(true);
    expect(refusal(g.spawn('mcp:p', { task: 'x', cwd: join(root, 'allowed', '..', 'outside') })).code).toBe(
      'cwd_not_allowed',
    );
    expect(refusal(g.spawn('mcp:p', { task: 'x', cwd: join(root, 'allowed', 'escape') })).code).toBe(
      'cwd_not_allowed',
    );
    expect(refusal(g.spawn('mcp:p', { task: 'x', cwd: join(root, 'allowed', 'missing') })).code).toBe(
      'cwd_not_allowed',
    );
    await g.close();
  });
});

describe('admission steps 2-8 and the lifecycle', () => {
  it('depth_exceeded at the default depth 1: a sub-agent cannot spawn', async () => {
    const { gateway, clock, sel } = fakeWorld();
    const top = gateway.spawn('mcp:p', { task: 'hang' });
    if (!top.ok) throw new Error('refused');
    await clock.advance(0);
    const r = refusal(gateway.spawn(`run:${top.runs[0]!.id}`, { task: 'child' }));
    expect(r.code).toBe('depth_exceeded');
    expect(r.limit).toBe(1);
    expect(sel.records.some((e) => e.outcome === 'refused_depth')).toBe(true);
    await gateway.close();
  });

  it('memory_critical when the gate reads critical; nothing admitted', async () => {
    const world = fakeWorld();
    await world.gateway.close();
    const { createGateway } = await import('../../src/gateway/create-gateway.js');
    const { FakeRunner } = await import('../../src/runners/fake-runner.js');
    const { MemorySelSink } = await import('../../src/sel/memory-sel-sink.js');
    const sel = new MemorySelSink(world.clock);
    const g = createGateway(world.config, {
      clock: world.clock,
      runner: new FakeRunner({ clock: world.clock }),
      sel,
      agents: new Map([['sim', { name: 'sim', runner: 'acp', command: ['x'], shared: false, skills: [] }]]),
      memoryGate: () => ({ critical: true, availableGb: 1.5, minGb: 4 }),
      defaultCwd: '/tmp',
    });
    const r = refusal(g.spawn('mcp:p', { task: 'x' }));
    expect(r.code).toBe('memory_critical');
    expect(r.message).toContain('1.50 GiB');
    expect(sel.records.some((e) => e.outcome === 'refused_memory_critical')).toBe(true);
    expect(g.list(op).runs).toHaveLength(0);
    await g.close();
  });

  it('a wave that would overflow the wave-member bound is refused whole', async () => {
    const { gateway } = fakeWorld({ cap: 3, 'agent.subagent_max_queued_wave_members': 10 });
    expect(gateway.spawn('mcp:p', { tasks: Array.from({ length: 13 }, () => 'hang') }).ok).toBe(true);
    const r = refusal(gateway.spawn('mcp:p', { tasks: ['hang a', 'hang b'] }));
    expect(r.code).toBe('queue_full');
    expect(r.limit).toBe(10);
    expect(gateway.list(op).runs).toHaveLength(13);
    await gateway.close();
  });

  it('not_found for another parent’s run, not_running for an ended one', async () => {
    const { gateway, clock } = fakeWorld();
    const mine = gateway.spawn('mcp:a', { task: 'sleep=10 mine' });
    if (!mine.ok) throw new Error('refused');
    const id = mine.runs[0]!.id;
    expect(refusal(gateway.cancel(id, { kind: 'parent', parent: 'mcp:b' })).code).toBe('not_found');
    expect(gateway.list({ kind: 'parent', parent: 'mcp:b' }).runs).toHaveLength(0);
    expect(gateway.list({ kind: 'parent', parent: 'mcp:a' }).runs).toHaveLength(1);
    await clock.advance(100);
    expect(refusal(gateway.cancel(id, { kind: 'parent', parent: 'mcp:a' })).code).toBe('not_running');
    expect(refusal(gateway.steer(id, 'x', 'interrupt', op)).code).toBe('not_running');
    expect(refusal(gateway.cancel('nope', op)).code).toBe('not_found');
    await gateway.close();
  });

  it('steering a queued run is not_running; an empty steer is empty_task', async () => {
    const { gateway } = fakeWorld({ cap: 1 });
    gateway.spawn('mcp:p', { task: 'hang' });
    const queued = gateway.spawn('mcp:p', { task: 'hang 2' });
    if (!queued.ok) throw new Error('refused');
    expect(refusal(gateway.steer(queued.runs[0]!.id, 'go', 'follow_up', op)).code).toBe('not_running');
    expect(refusal(gateway.steer(queued.runs[0]!.id, ' ', 'follow_up', op)).code).toBe('empty_task');
    await gateway.close();
  });

  it('keep, continue, conversation_busy, release, conversation_released; idle conversations hold no permit', async () => {
    const { gateway, clock, runner } = fakeWorld({ cap: 3 });
    const first = gateway.spawn('mcp:p', { task: 'sleep=100 remember 42', keep: true });
    if (!first.ok) throw new Error('refused');
    const conv = first.runs[0]!.id;
    await clock.advance(0);
    expect(refusal(gateway.continue('mcp:p', { conversation: conv, task: 'more' })).code).toBe(
      'conversation_busy',
    );
    await clock.advance(200);
    expect(gateway.counts().permitsHeld).toBe(0);
    const next = gateway.continue('mcp:p', { conversation: conv, task: 'sleep=100 and now?' });
    expect(next.ok).toBe(true);
    await clock.advance(0);
    expect(runner.started.at(-1)?.continueFrom).toBe(conv);
    expect(refusal(gateway.release(conv, op)).code).toBe('conversation_busy');
    await clock.advance(200);
    expect(gateway.release(conv, op)).toEqual({ ok: true });
    await clock.advance(0);
    expect(runner.released).toEqual([conv]);
    expect(refusal(gateway.continue('mcp:p', { conversation: conv, task: 'again' })).code).toBe(
      'conversation_released',
    );
    expect(refusal(gateway.release(conv, op)).code).toBe('conversation_released');
    expect(refusal(gateway.continue('mcp:p', { conversation: 'nope', task: 'x' })).code).toBe('not_found');
    await gateway.close();
  });

  it('a timeout ends the run timed_out and returns its permit', async () => {
    const { gateway, clock } = fakeWorld({ cap: 1, 'agent.subagent_timeout_secs': 5 });
    const a = gateway.spawn('mcp:p', { task: 'hang' });
    const b = gateway.spawn('mcp:p', { task: 'sleep=10 next' });
    if (!a.ok || !b.ok) throw new Error('refused');
    await clock.advance(4999);
    expect(gateway.list(op).runs.find((r) => r.id === a.runs[0]!.id)?.status).toBe('running');
    await clock.advance(2);
    expect(gateway.list(op).runs.find((r) => r.id === a.runs[0]!.id)?.status).toBe('timed_out');
    await clock.advance(100);
    expect(gateway.list(op).runs.find((r) => r.id === b.runs[0]!.id)?.status).toBe('completed');
    await gateway.close();
  });

  it('cancelling a running run returns its permit only when the runner confirms the stop', async () => {
    const world = fakeWorld({ cap: 1 });
    await world.gateway.close();
    const { createGateway } = await import('../../src/gateway/create-gateway.js');
    const { FakeRunner } = await import('../../src/runners/fake-runner.js');
    const runner = new FakeRunner({ clock: world.clock, plan: () => ({ hang: true }), stopDelayMs: 3000 });
    const g = createGateway(world.config, {
      clock: world.clock,
      runner,
      cap: 3,
      agents: new Map([['sim', { name: 'sim', runner: 'acp', command: ['x'], shared: false, skills: [] }]]),
      defaultCwd: '/tmp',
    });
    const a = g.spawn('mcp:p', { task: 'x' });
    if (!a.ok) throw new Error('refused');
    await world.clock.advance(0);
    expect(g.cancel(a.runs[0]!.id, op)).toEqual({ ok: true });
    await world.clock.advance(2000);
    expect(g.counts().permitsHeld).toBe(1);
    await world.clock.advance(1500);
    expect(g.counts().permitsHeld).toBe(0);
    expect(g.list(op).runs[0]?.status).toBe('cancelled');
    await g.close();
  });

  it('cancel cascades to descendants', async () => {
    const { gateway, clock } = fakeWorld({ cap: 2, 'agent.subagent_max_depth': 3 });
    const top = gateway.spawn('mcp:p', { task: 'hang top' });
    if (!top.ok) throw new Error('refused');
    await clock.advance(0);
    const child = gateway.spawn(`run:${top.runs[0]!.id}`, { task: 'hang child' });
    if (!child.ok) throw new Error('refused');
    await clock.advance(0);
    const grandchild = gateway.spawn(`run:${child.runs[0]!.id}`, { task: 'hang grandchild' });
    expect(grandchild.ok).toBe(true);
    await clock.advance(0);
    gateway.cancel(top.runs[0]!.id, op);
    await clock.advance(10);
    expect(gateway.list(op).runs.map((r) => r.status)).toEqual(['cancelled', 'cancelled', 'cancelled']);
    expect(gateway.counts().permitsHeld).toBe(0);
    await gateway.close();
  });

  it('max_turns: the tool-call budget cancels the turn and the run ends completed with stop turn_limit', async () => {
    const { gateway, clock } = fakeWorld();
    const r = gateway.spawn('mcp:p', { task: 'hang tools=150', max_turns: 100 });
    if (!r.ok) throw new Error('refused');
    await clock.advance(10);
    const view = gateway.list(op).runs[0];
    expect(view?.status).toBe('completed');
    expect(view?.stop).toBe('turn_limit');
    await gateway.close();
  });

  it('max_tokens: tokens past the budget stop the turn and the run ends completed with stop token_budget', async () => {
    const { gateway, clock } = fakeWorld({ 'agent.subagent_max_tokens': 50_000 });
    // The spawn's own budget wins over the config's; a wave's members each get it.
    const r = gateway.spawn('mcp:p', { tasks: ['hang', 'hang'], max_tokens: 1000 });
    if (!r.ok) throw new Error('refused');
    const free = gateway.spawn('mcp:p', { task: 'hang' });
    if (!free.ok) throw new Error('refused');
    await clock.advance(10);
    const [a, b] = r.runs.map((run) => run.id) as [string, string];
    const call = (runId: string, tokens: number) =>
      gateway.observeProviderCall({ provider: 'anthropic', runId, status: 200, tokens });
    call(a, 800);
    call(b, 1000);
    call(free.runs[0]!.id, 20_000);
    await clock.advance(10);
    const status = (id: string) => gateway.list(op).runs.find((v) => v.id === id);
    expect(status(a)?.status).toBe('running');
    expect(status(b)?.status).toBe('running');
    expect(status(free.runs[0]!.id)?.status).toBe('running');
    call(a, 201);
    call(free.runs[0]!.id, 30_001);
    await clock.advance(10);
    expect(status(a)).toMatchObject({ status: 'completed', stop: 'token_budget' });
    expect(status(free.runs[0]!.id)).toMatchObject({ status: 'completed', stop: 'token_budget' });
    expect(status(b)?.status).toBe('running');
    await gateway.close();
  });

  it("max_tokens: the agent's budget applies when the spawn names none, over the config's", async () => {
    const { gateway, clock } = fakeWorld({ sim: { max_tokens: 500 }, 'agent.subagent_max_tokens': 50_000 });
    const r = gateway.spawn('mcp:p', { task: 'hang' });
    if (!r.ok) throw new Error('refused');
    await clock.advance(10);
    const id = r.runs[0]!.id;
    gateway.observeProviderCall({ provider: 'anthropic', runId: id, status: 200, tokens: 501 });
    await clock.advance(10);
    expect(gateway.list(op).runs[0]).toMatchObject({ status: 'completed', stop: 'token_budget' });
    await gateway.close();
  });

  it('the shutdown refuses new spawns; every promise settles and no timer is left', async () => {
    const { gateway, clock } = fakeWorld({ cap: 1 });
    gateway.spawn('mcp:p', { task: 'hang' });
    gateway.spawn('mcp:p', { task: 'hang 2' });
    const waiting = gateway.waitForEvents('mcp:nobody', 60_000);
    await gateway.close();
    await expect(waiting).resolves.toEqual([]);
    expect(clock.pendingTimers()).toBe(0);
    expect(refusal(gateway.spawn('mcp:p', { task: 'late' })).code).toBe('not_running');
  });
});
