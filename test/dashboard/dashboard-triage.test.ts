import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { CapacityHistory } from '../../src/dashboard/capacity-history.js';
import { needsHuman } from '../../src/dashboard/needs-ack.js';
import { rerunArgsOf } from '../../src/dashboard/rerun-args.js';
import { RunIndex } from '../../src/dashboard/run-index.js';
import { parseSort } from '../../src/dashboard/run-sort.js';
import type { RunView } from '../../src/gateway/run-view.js';

/**
 * The dashboard under real traffic (issue 32 §1): which completions wait for a person, `live` with its
 * running runs first, sorting, the capacity history's bound and the arguments of a re-run.
 */

const view = (id: string, extra: Partial<RunView> = {}): RunView => ({
  id,
  status: 'completed',
  agent: 'sim',
  parent: 'mcp:claude-code@proj',
  depth: 1,
  task_preview: `task ${id}`,
  created_at: '2026-01-01T00:00:00.000Z',
  delivery: 'delivered',
  ...extra,
});
const ids = (index: RunIndex, options: Parameters<RunIndex['page']>[0]) =>
  index.page(options).rows.map((r) => (r.kind === 'run' ? r.node.run.id : `wave:${r.batch_id}`));

describe('a completion waits for a person only when a person must act', () => {
  it('an agent parent’s delivered or pending completion needs no ack; a failure, a loss, an undeliverable one, or a person’s parent does', () => {
    expect(needsHuman(view('a'))).toBe(false);
    expect(needsHuman(view('a', { delivery: 'pending' }))).toBe(false);
    expect(needsHuman(view('a', { status: 'cancelled' }))).toBe(false);
    expect(needsHuman(view('a', { status: 'failed' }))).toBe(true);
    expect(needsHuman(view('a', { status: 'timed_out' }))).toBe(true);
    expect(needsHuman(view('a', { status: 'lost' }))).toBe(true);
    expect(needsHuman(view('a', { delivery: 'undeliverable' }))).toBe(true);
    expect(needsHuman(view('a', { parent: 'slack:U123' }))).toBe(true);
    expect(needsHuman(view('a', { parent: 'chat:c1' }))).toBe(true);
    expect(needsHuman(view('a', { parent: 'cli:operator' }))).toBe(true);
  });

  it('fifty delivered completions of an agent session owe nothing; its one failure and a Slack user’s run do', () => {
    const index = new RunIndex();
    index.upsert(Array.from({ length: 50 }, (_, i) => view(`ok${i}`)));
    index.upsert([view('bad', { status: 'failed' }), view('dm', { parent: 'slack:U1' })]);
    index.upsert([view('w1', { batch_id: 'W' }), view('w2', { batch_id: 'W', status: 'lost' })]);
    const { items, total } = index.notifications();
    expect(total).toBe(3);
    expect(items.map((n) => n.run_id)).toEqual(['w1', 'dm', 'bad']);
    expect(index.notifiableRuns(2)).toEqual(['w1', 'dm']);
  });
});

describe('live: running first, then queued, wave members as their own rows', () => {
  it('three running runs come before thirty-six queued ones, however they were admitted', () => {
    const index = new RunIndex();
    index.upsert(Array.from({ length: 36 }, (_, i) => view(`q${i}`, { status: 'queued', batch_id: 'B' })));
    index.upsert([view('old', { status: 'running', created_at: '2026-01-01T00:00:00.000Z' })]);
    index.upsert([
      view('w', { status: 'running', batch_id: 'B2', created_at: '2026-01-01T00:00:02.000Z' }),
      view('s', { status: 'starting', created_at: '2026-01-01T00:00:01.000Z' }),
      view('done'),
    ]);
    const shown = ids(index, { tab: 'live', limit: 200 });
    expect(shown.slice(0, 3)).toEqual(['w', 's', 'old']);
    expect(shown).toHaveLength(39);
    expect(shown.slice(3).every((id) => id.startsWith('q'))).toBe(true);
    expect(index.page({ tab: 'live' }).total).toBe(39);
    // A wave row never hides a live member in live.
    expect(shown.some((id) => id.startsWith('wave:'))).toBe(false);
    // A run that ends leaves live.
    index.upsert([view('w', { status: 'completed', batch_id: 'B2' })]);
    expect(ids(index, { tab: 'live', limit: 3 })).toEqual(['s', 'old', 'q35']);
    expect(ids(index, { tab: 'live', query: 'task old' })).toEqual(['old']);
  });
});

describe('sorting', () => {
  it('sorts every matching row by a column, both ways, before paging', () => {
    const index = new RunIndex();
    index.upsert([
      view('a', { duration_secs: 5, peak_mem_gb: 0.5, result_chars: 10, agent: 'b' }),
      view('b', { duration_secs: 50, peak_mem_gb: 0.1, result_chars: 300, agent: 'a' }),
      view('c', { status: 'failed', duration_secs: 1, agent: 'c' }),
    ]);
    expect(ids(index, { sort: parseSort('-duration') })).toEqual(['b', 'a', 'c']);
    expect(ids(index, { sort: parseSort('duration') })).toEqual(['c', 'a', 'b']);
    expect(ids(index, { sort: parseSort('-peak_mem'), limit: 1 })).toEqual(['a']);
    expect(ids(index, { sort: parseSort('-peak_mem'), limit: 1, offset: 1 })).toEqual(['b']);
    expect(ids(index, { sort: parseSort('agent') })).toEqual(['b', 'a', 'c']);
    expect(ids(index, { sort: parseSort('-output') })).toEqual(['b', 'a', 'c']);
    // Live first, then failures, completed last; ties newest first.
    expect(ids(index, { sort: parseSort('status'), tab: 'all' })).toEqual(['c', 'b', 'a']);
  });

  it('an unknown or hostile sort key is refused, never looked up on an object', () => {
    for (const bad of ['__proto__', 'constructor', '-toString', 'nope', '', '--duration']) {
      expect(() => parseSort(bad)).toThrowError(
        expect.objectContaining({ refusal: expect.objectContaining({ code: 'invalid_argument' }) }),
      );
    }
  });
});

describe('the capacity history', () => {
  it('keeps one bucket a minute for the last hour (61 at most), the peak of each minute', async () => {
    const clock = new FakeClock();
    const history = new CapacityHistory(clock, { bucketMs: 60_000, buckets: 60 });
    const sample = (running: number, queued: number) =>
      history.record({ running, queued, cap: 4, provider_cap: 2, provider_running: 1 });
    sample(1, 0);
    sample(3, 7);
    sample(2, 1);
    expect(history.samples()).toEqual([
      { t: expect.any(String), running: 3, queued: 7, cap: 4, provider_cap: 2, provider_running: 1 },
    ]);
    for (let i = 0; i < 500; i++) {
      await clock.advance(60_000);
      sample(i % 5, i);
    }
    const kept = history.samples();
    expect(kept).toHaveLength(61);
    expect(kept.at(-1)).toMatchObject({ running: 499 % 5, queued: 499 });
    expect(Date.parse(kept.at(-1)?.t ?? '') - Date.parse(kept[0]?.t ?? '')).toBe(60 * 60_000);
    expect(history.size).toBeLessThanOrEqual(61);
  });
});

describe('a re-run takes the ended run’s arguments', () => {
  it('its task, agent and limits; cwd as given, isolation kept; nothing of the old run’s identity', () => {
    expect(
      rerunArgsOf({
        task: 'fix the bug',
        preview: 'fix the bug',
        agent: 'claude',
        cwd: '/work/p',
        cwdConfined: true,
        maxTurns: 12,
        maxTokens: 5000,
        model: 'm',
        reasoningEffort: 'high',
        includeMemory: false,
        isolation: 'worktree',
        workspaceBase: { repo: '/work/p', subdir: '', base: 'abc' },
        sandbox: true,
        keep: true,
      }),
    ).toEqual({
      args: {
        task: 'fix the bug',
        agent: 'claude',
        cwd: '/work/p',
        max_turns: 12,
        max_tokens: 5000,
        model: 'm',
        reasoning_effort: 'high',
        include_memory: false,
        isolation: 'worktree',
        sandbox: true,
        keep: true,
      },
    });
    expect(rerunArgsOf({ task: 't', agent: 'sim', cwd: '/home/x' })).toEqual({
      args: { task: 't', agent: 'sim' },
      cwd: '/home/x',
    });
  });
});
