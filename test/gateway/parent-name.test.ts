import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLIENT_NAME_MAX } from '../../src/core/client-name.js';
import { parentLabel } from '../../src/core/parent-label.js';
import type { SpawnResult } from '../../src/gateway/answers.js';
import { toRunView } from '../../src/gateway/run-view.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { type FakeWorld, fakeWorld } from '../helpers/fake-gateway.js';

const SESSION = 'mcp:bc5b9186-1f2e-4a3b-9c8d-0123456789ab';
const OTHER = 'mcp:0123abcd-0000-4000-8000-000000000000';

/**
 * The name a parent's client gave itself is kept with each run it admits (`spec.parentName`), so the run
 * reads as "claude-code (session bc5b9186)" after the session closed, after a restart, and on another
 * gateway; its view carries it as `parent_name` beside the raw `parent` key.
 */
describe('a parent name kept with its runs', () => {
  const worlds: FakeWorld[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const world of worlds.splice(0)) {
      await world.gateway.close();
      world.store.close();
    }
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const names = new Map<string, unknown>([
    [SESSION, 'claude-code'],
    [OTHER, 'evil\u001b]0;owned\u0007\u202e-client'],
  ]);
  const world = (store?: SqliteStore) => {
    const w = fakeWorld({
      ...(store ? { store } : {}),
      'agent.subagent_max_depth': 2,
      parentNameOf: (parent) => names.get(parent),
    });
    worlds.push(w);
    return w;
  };
  const viewOf = (w: FakeWorld, id: string) => toRunView(w.store.run(id)!);
  const ids = (result: SpawnResult) => (result.ok ? result.runs.map((r) => r.id) : []);

  it("a spawn's runs, a wave's members and a continuation carry the parent's cleaned name; its nested runs do not", async () => {
    const w = world();
    const [kept = ''] = ids(w.gateway.spawn(SESSION, { task: 'sleep=1000 one', keep: true }));
    const wave = ids(w.gateway.spawn(OTHER, { tasks: ['sleep=10 a', 'sleep=10 b'] }));
    const [plain = ''] = ids(w.gateway.spawn('slack:U1', { task: 'sleep=10 from slack' }));
    await w.clock.advance(1);
    const [nested = ''] = ids(w.gateway.spawn(`run:${kept}`, { task: 'sleep=10 child' }));
    await w.clock.advance(2000);
    const [next = ''] = ids(w.gateway.continue(SESSION, { conversation: kept, task: 'sleep=10 again' }));
    await w.clock.advance(100);
    const view = viewOf(w, kept);
    expect(view.parent).toBe(SESSION);
    expect(view.parent_name).toBe('claude-code');
    expect(parentLabel(view.parent, view.parent_name).label).toBe('claude-code (session bc5b9186)');
    expect(wave.map((id) => viewOf(w, id).parent_name)).toEqual([
      'evil]0;owned-client',
      'evil]0;owned-client',
    ]);
    expect(viewOf(w, nested).parent).toBe(`run:${kept}`);
    expect(viewOf(w, nested).parent_name).toBeUndefined();
    expect(viewOf(w, plain).parent_name).toBeUndefined();
    expect(viewOf(w, next).parent_name).toBe('claude-code');
  });

  it('a huge or blank name is cut or left out, never stored raw', async () => {
    names.set(SESSION, '\u{1F600}'.repeat(100_000));
    names.set(OTHER, ' \u0000\u200b ');
    try {
      const w = world();
      const [big = ''] = ids(w.gateway.spawn(SESSION, { task: 'sleep=10 x' }));
      const [blank = ''] = ids(w.gateway.spawn(OTHER, { task: 'sleep=10 y' }));
      expect(Array.from(w.store.run(big)?.spec.parentName ?? '')).toHaveLength(CLIENT_NAME_MAX);
      expect('parentName' in w.store.run(blank)!.spec).toBe(false);
    } finally {
      names.set(SESSION, 'claude-code');
      names.set(OTHER, 'evil\u001b]0;owned\u0007\u202e-client');
    }
  });

  it('a run executed here for another gateway keeps the name its spec brought: "codex (via gateway g1)"', async () => {
    const w = world();
    const spec = { task: 'sleep=10 elsewhere', agent: 'sim', parentName: 'codex' };
    const done = w.executor.executeForCluster({ runId: 'r1', kind: 'single', origin: 'g1', spec });
    await w.clock.advance(100);
    expect(await done).toMatchObject({ kind: 'admitted' });
    const view = viewOf(w, 'xr1');
    expect(view).toMatchObject({ parent: 'cluster:g1', parent_name: 'codex' });
    expect(parentLabel(view.parent, view.parent_name).label).toBe('codex (via gateway g1)');
  });

  it('survives a restart on the same SQLite file, with no schema change, when the live name is gone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crew-parent-name-'));
    dirs.push(dir);
    const file = join(dir, 'crew.db');
    const first = world(new SqliteStore(file));
    const [id = ''] = ids(first.gateway.spawn(SESSION, { task: 'sleep=10 persisted' }));
    await first.clock.advance(100);
    await first.gateway.close();
    first.store.close();
    worlds.splice(worlds.indexOf(first), 1);
    // After the restart nobody knows the session's name any more (its session is gone with the process).
    const reopened = fakeWorld({ store: new SqliteStore(file) });
    worlds.push(reopened);
    const view = reopened.gateway.list({ kind: 'operator' }, 10).runs.find((r) => r.id === id);
    expect(view?.parent_name).toBe('claude-code');
    expect(view?.parent).toBe(SESSION);
  });
});
