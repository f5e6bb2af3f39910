import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { defaultConfig } from '../../src/core/config-schema.js';
import type { RunId } from '../../src/core/types.js';
import { createGateway } from '../../src/gateway/create-gateway.js';
import { MAX_CACHED_LISTS, RunListCache } from '../../src/gateway/run-list-cache.js';
import type { RunView } from '../../src/gateway/run-view.js';
import type { Scope } from '../../src/gateway/visibility.js';
import { FakeRunner } from '../../src/runners/fake-runner.js';
import { MemorySelSink } from '../../src/sel/memory-sel-sink.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import type { ProviderUsage, RunQuery, RunRecord } from '../../src/store/store.js';
import { MemoryTranscripts } from '../../src/transcripts/memory-transcripts.js';
import { fakeAgent, planFromTask } from '../helpers/fake-gateway.js';

/** A memory store that counts its list reads (`runs`), the SQLite queries `spawn_list` costs. */
class CountingStore extends MemoryStore {
  reads = 0;
  override runs(query?: RunQuery): RunRecord[] {
    this.reads++;
    return super.runs(query);
  }
}

/** A gateway on the fake runner whose live usage and memory pause the test sets, as the daemon's are. */
function world() {
  const clock = new FakeClock();
  const store = new CountingStore();
  const usage = new Map<RunId, ProviderUsage>();
  const paused = new Set<RunId>();
  const runner = new FakeRunner({ clock, plan: planFromTask });
  // As the daemon builds it: through createGateway, which must pass the pause and live usage on.
  const gateway = createGateway(
    { ...defaultConfig(), 'agent.subagent_spawn_stagger_secs': 0, 'agent.spawn_min_memory_gb': 0 },
    {
      clock,
      runnerFor: () => runner,
      store,
      sel: new MemorySelSink(clock),
      transcripts: new MemoryTranscripts(),
      agents: new Map([['sim', fakeAgent('sim')]]),
      cap: 1,
      defaultCwd: '/tmp',
      liveUsage: (id) => usage.get(id),
      isPaused: (id) => paused.has(id),
    },
  );
  return { clock, store, gateway, usage, paused };
}

const PARENT = 'cli:p';
const mine: Scope = { kind: 'parent', parent: PARENT };
const statuses = (runs: RunView[]) => runs.map((r) => `${r.task_preview}:${r.status}`);

describe('spawn_list reads the store once per write (issue 32 §4)', () => {
  it('answers a second list with no write between from memory, byte for byte the same', async () => {
    const w = world();
    for (const task of ['hang a', 'hang b', 'hang c']) await w.gateway.admit(PARENT, { task });
    const first = w.gateway.list(mine);
    const reads = w.store.reads;
    const second = w.gateway.list(mine);
    expect(w.store.reads).toBe(reads);
    expect(JSON.stringify(second)).toBe(JSON.stringify(first));
    expect(statuses(second.runs)).toEqual(['hang c:queued', 'hang b:queued', 'hang a:running']);
  });

  it('shows a run that changed status, a new run and a cancel in the very next list', async () => {
    const w = world();
    const a = await w.gateway.admit(PARENT, { task: 'sleep=100 a' });
    await w.gateway.admit(PARENT, { task: 'hang b' });
    expect(statuses(w.gateway.list(mine).runs)).toEqual(['hang b:queued', 'sleep=100 a:running']);

    await w.clock.advance(150); // a completes, b starts
    expect(statuses(w.gateway.list(mine).runs)).toEqual(['hang b:running', 'sleep=100 a:completed']);

    await w.gateway.admit(PARENT, { task: 'hang c' });
    expect(statuses(w.gateway.list(mine).runs)).toEqual([
      'hang c:queued',
      'hang b:running',
      'sleep=100 a:completed',
    ]);

    const b = w.gateway.list(mine).runs[1]!.id;
    w.gateway.cancel(b, { kind: 'operator' });
    await w.clock.advance(0);
    const after = w.gateway.list(mine);
    expect(statuses(after.runs)).toEqual(['hang c:running', 'hang b:cancelled', 'sleep=100 a:completed']);
    // The header's numbers are read each call too.
    expect(after).toMatchObject({ running: 1, queued: 0 });
    // And the cached answer is what an uncached read of the store gives.
    const fresh = w.store.runs({ parents: [PARENT] }).map((r) => w.gateway.viewOf(r));
    expect(JSON.stringify(after.runs)).toBe(JSON.stringify(fresh));
    expect(a.ok).toBe(true);
  });

  it('lays what changes without a write (live usage, the memory pause) over each list', async () => {
    const w = world();
    await w.gateway.admit(PARENT, { task: 'hang a' });
    const id = w.gateway.list(mine).runs[0]!.id as RunId;
    expect(w.gateway.list(mine).runs[0]).not.toHaveProperty('usage');
    const reads = w.store.reads;

    w.usage.set(id, { inputTokens: 10, outputTokens: 2, requests: 1, rateLimited: 0 });
    w.paused.add(id);
    const view = w.gateway.list(mine).runs[0]!;
    expect(w.store.reads).toBe(reads); // no write: the records came from memory
    expect(view).toMatchObject({ paused: true, usage: { input_tokens: 10, output_tokens: 2, requests: 1 } });

    w.usage.delete(id);
    w.paused.delete(id);
    const back = w.gateway.list(mine).runs[0]!;
    expect(back).not.toHaveProperty('usage');
    expect(back).not.toHaveProperty('paused');
  });

  it('keeps each scope and limit apart', async () => {
    const w = world();
    await w.gateway.admit(PARENT, { task: 'hang mine' });
    await w.gateway.admit('cli:other', { task: 'hang theirs' });
    expect(statuses(w.gateway.list(mine).runs)).toEqual(['hang mine:running']);
    expect(statuses(w.gateway.list({ kind: 'parent', parent: 'cli:other' }).runs)).toEqual([
      'hang theirs:queued',
    ]);
    expect(statuses(w.gateway.list({ kind: 'operator' }).runs)).toEqual([
      'hang theirs:queued',
      'hang mine:running',
    ]);
    expect(w.gateway.list({ kind: 'operator' }, 1).runs).toHaveLength(1);
    expect(w.gateway.list({ kind: 'operator' }).runs).toHaveLength(2);
  });
});

describe('RunListCache', () => {
  const record = (id: string): RunRecord =>
    ({
      run: { id, status: 'running', agent: 'sim', parent: PARENT, depth: 1, createdAt: 0 },
      spec: { task: `task ${id}` },
      delivery: 'pending',
    }) as unknown as RunRecord;

  it('keeps at most MAX_CACHED_LISTS lists, dropping the oldest, and drops all on a write', () => {
    let version = 0;
    const reads: string[] = [];
    const cache = new RunListCache({
      version: () => version,
      read: (scope) => {
        const name = scope.kind === 'operator' ? '*' : scope.parent;
        reads.push(name);
        return [record(name)];
      },
    });
    const scopeOf = (i: number): Scope => ({ kind: 'parent', parent: `cli:${i}` });
    for (let i = 0; i <= MAX_CACHED_LISTS; i++) cache.records(scopeOf(i), 10);
    expect(cache.size()).toBe(MAX_CACHED_LISTS);
    expect(reads).toHaveLength(MAX_CACHED_LISTS + 1);
    cache.records(scopeOf(MAX_CACHED_LISTS), 10); // the newest is kept
    expect(reads).toHaveLength(MAX_CACHED_LISTS + 1);
    cache.records(scopeOf(0), 10); // the oldest was dropped
    expect(reads).toHaveLength(MAX_CACHED_LISTS + 2);

    version++;
    cache.records(scopeOf(MAX_CACHED_LISTS), 10);
    expect(reads).toHaveLength(MAX_CACHED_LISTS + 3);
    expect(cache.size()).toBe(1);
  });

  it('computes a kept record view once, and a new record (after a write) anew', () => {
    let version = 0;
    const cache = new RunListCache({ version: () => version, read: () => [record('a')] });
    const [first] = cache.records({ kind: 'operator' }, 10);
    const view = cache.view(first!);
    expect(view).toMatchObject({ id: 'a', status: 'running', task_preview: 'task a' });
    expect(cache.view(first!)).toBe(view);
    version++;
    const [again] = cache.records({ kind: 'operator' }, 10);
    expect(again).not.toBe(first);
    expect(cache.view(again!)).not.toBe(view);
    expect(cache.view(again!)).toEqual(view);
  });
});
