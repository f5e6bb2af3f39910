import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { LiveFeed } from '../../src/dashboard/live-feed.js';
import { LoginCodes } from '../../src/dashboard/login-codes.js';
import { RunIndex } from '../../src/dashboard/run-index.js';
import { DashboardSessions } from '../../src/dashboard/sessions.js';
import type { RunView } from '../../src/gateway/run-view.js';

const view = (id: string, extra: Partial<RunView> = {}): RunView => ({
  id,
  status: 'completed',
  agent: 'sim',
  parent: 'cli:a',
  depth: 1,
  task_preview: `task ${id}`,
  created_at: '2026-01-01T00:00:00.000Z',
  delivery: 'delivered',
  ...extra,
});

describe('what the dashboard keeps is bounded', () => {
  it('login codes: at most 16 outstanding, the oldest forgotten first; each works once', async () => {
    const clock = new FakeClock();
    const codes = new LoginCodes(clock);
    const issued = Array.from({ length: 40 }, () => codes.issue().code);
    expect(codes.size).toBe(16);
    expect(codes.redeem(issued[0] as string)).toBe(false);
    expect(codes.redeem(issued[39] as string)).toBe(true);
    expect(codes.redeem(issued[39] as string)).toBe(false);
    await clock.advance(60_000);
    expect(codes.redeem(issued[38] as string)).toBe(false);
    codes.issue();
    expect(codes.size).toBe(1);
  });

  it('sessions: at most 32, the least recently seen dropped first; an idle one expires', async () => {
    const clock = new FakeClock();
    const sessions = new DashboardSessions(clock, { idleMs: 1000 });
    const first = sessions.create();
    const made = Array.from({ length: 31 }, () => sessions.create());
    expect(sessions.resolve(first.id)).toBeDefined(); // seen: now the newest
    sessions.create();
    expect(sessions.size).toBe(32);
    expect(sessions.resolve(made[0]?.id)).toBeUndefined();
    expect(sessions.resolve(first.id)).toBeDefined();
    await clock.advance(1000);
    expect(sessions.resolve(first.id)).toBeUndefined();
  });

  it('the replay buffer keeps the last N messages; resuming inside it replays, behind it reloads', () => {
    const feed = new LiveFeed('e1', { max: 10 });
    for (let i = 0; i < 25; i++) feed.publish({ type: 'ack', event_id: `e${i}`, run_ids: [] });
    expect(feed.buffered).toBe(10);
    const resumed = feed.resume('e1', 20);
    expect(resumed.kind === 'replay' && resumed.messages.map((m) => m.seq)).toEqual([21, 22, 23, 24, 25]);
    expect(feed.resume('e1', 15)).toEqual({ kind: 'replay', messages: expect.any(Array) });
    expect(feed.resume('e1', 14)).toEqual({ kind: 'snapshot' });
    expect(feed.resume('e1', 25)).toEqual({ kind: 'replay', messages: [] });
    expect(feed.resume('e2', 25)).toEqual({ kind: 'snapshot' });
    expect(feed.resume('e1', 26)).toEqual({ kind: 'snapshot' });
  });

  it('the run index keeps at most its bound, dropping the oldest row with its nested tree', () => {
    const index = new RunIndex(5);
    index.upsert([view('a'), view('a1', { parent: 'run:a', depth: 2, status: 'running' })]);
    index.upsert([view('b'), view('c'), view('d'), view('e')]);
    expect(index.size).toBe(4);
    expect(index.get('a')).toBeUndefined();
    expect(index.get('a1')).toBeUndefined();
    expect(index.counts()).toMatchObject({ all: 4, completed: 4, live: 0 });
  });
});

describe('the run index', () => {
  it('nests runs under their ancestor, folds a wave into one row, and counts running apart', () => {
    const index = new RunIndex();
    index.upsert([
      view('p', { status: 'running', parent: 'mcp:x' }),
      view('c1', { parent: 'run:p', depth: 2, status: 'running' }),
      view('g1', { parent: 'run:c1', depth: 3, status: 'queued' }),
      view('w1', { batch_id: 'B', parent: 'chat:1', status: 'running' }),
      view('w2', { batch_id: 'B', parent: 'chat:1', status: 'completed' }),
      view('w3', { batch_id: 'B', parent: 'chat:1', status: 'completed' }),
    ]);
    const page = index.page();
    expect(page.total).toBe(2);
    const [wave, run] = page.rows;
    expect(wave).toMatchObject({
      kind: 'wave',
      batch_id: 'B',
      size: 3,
      by_status: { running: 1, completed: 2 },
    });
    expect(run?.kind === 'run' && run.node.children[0]?.children[0]?.run.id).toBe('g1');
    expect(index.running()).toEqual({ top_level: 2, nested: 1 });
    expect(index.liveDescendants('p')).toBe(2);
    expect(index.page({ tab: 'queued' }).rows.map((r) => r.kind === 'run' && r.node.run.id)).toEqual(['p']);
    expect(index.page({ query: 'task w2' }).total).toBe(1);
    expect(index.counts()).toMatchObject({ live: 4, queued: 1, completed: 2, all: 6 });
  });

  it('a notification per unacked completed top-level run or whole wave, newest first', () => {
    const index = new RunIndex();
    index.upsert([
      view('a'),
      view('b', { acked_at: '2026-01-01T00:00:01.000Z' }),
      view('n', { parent: 'run:a', depth: 2 }),
      view('w1', { batch_id: 'B' }),
      view('w2', { batch_id: 'B', status: 'running' }),
      view('v1', { batch_id: 'V' }),
      view('v2', { batch_id: 'V', status: 'failed' }),
    ]);
    const { items, total } = index.notifications();
    expect(total).toBe(2);
    expect(items.map((n) => n.run_id)).toEqual(['v1', 'a']);
    expect(items[0]).toMatchObject({ batch_id: 'V', members: 2, status: '1 completed, 1 failed' });
  });

  it('a page of 50 out of 50,000 runs is one pass, well under 500 ms even on a busy machine', () => {
    const index = new RunIndex();
    index.upsert(Array.from({ length: 50_000 }, (_, i) => view(`r${i}`)));
    const started = performance.now();
    const page = index.page({ tab: 'completed', limit: 50, offset: 100 });
    expect(performance.now() - started).toBeLessThan(500);
    expect(page.rows).toHaveLength(50);
    expect(page.total).toBe(50_000);
  });
});
