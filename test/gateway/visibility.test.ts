import { describe, expect, it } from 'vitest';
import type { Run } from '../../src/core/types.js';
import { Visibility } from '../../src/gateway/visibility.js';
import { MemoryStore } from '../../src/store/memory-store.js';

const run = (id: string, parent: string, seq: number, depth = 1): Run => ({
  id,
  status: 'queued',
  parent,
  agent: 'sim',
  depth,
  rootId: id,
  keep: false,
  createdAt: seq,
  seq,
});

/** mcp:a → a1 → a1x → a1xy; mcp:b → b1. */
function world() {
  const store = new MemoryStore();
  store.apply({
    epoch: store.nextEpoch(),
    newRuns: [
      run('a1', 'mcp:a', 1),
      run('a1x', 'run:a1', 2, 2),
      run('a1xy', 'run:a1x', 3, 3),
      run('b1', 'mcp:b', 4),
      run('a2', 'mcp:a', 5),
    ].map((r) => ({ run: r, spec: { task: 't', agent: 'sim' } })),
  });
  return { store, visibility: new Visibility(store) };
}

describe('visibility: a parent sees its runs and their descendants; the operator sees all', () => {
  it('a parent sees its own subtree at any depth, and not another parent’s runs', () => {
    const { store, visibility } = world();
    const a = { kind: 'parent', parent: 'mcp:a' } as const;
    for (const id of ['a1', 'a1x', 'a1xy', 'a2']) expect(visibility.isVisible(a, store.run(id)!)).toBe(true);
    expect(visibility.isVisible(a, store.run('b1')!)).toBe(false);
    // A run sees its own children (it is their parent key) but not its own parent or siblings.
    const r = { kind: 'parent', parent: 'run:a1' } as const;
    expect(visibility.isVisible(r, store.run('a1xy')!)).toBe(true);
    expect(visibility.isVisible(r, store.run('a1')!)).toBe(false);
    expect(visibility.isVisible(r, store.run('a2')!)).toBe(false);
  });

  it('a run outside the scope reads as not_found, with no hint that it exists', () => {
    const { visibility } = world();
    expect(() => visibility.assertVisible({ kind: 'parent', parent: 'mcp:a' }, 'b1')).toThrow(
      expect.objectContaining({ code: 'not_found' }),
    );
    expect(() => visibility.assertVisible({ kind: 'parent', parent: 'mcp:a' }, 'nope')).toThrow(
      expect.objectContaining({ code: 'not_found' }),
    );
    expect(visibility.assertVisible({ kind: 'operator' }, 'b1').run.id).toBe('b1');
  });

  it('lists a scope’s records generation by generation, newest first, up to the limit', () => {
    const { visibility } = world();
    const ids = (limit: number) =>
      visibility.records({ kind: 'parent', parent: 'mcp:a' }, limit).map((r) => r.run.id);
    expect(ids(10)).toEqual(['a2', 'a1', 'a1x', 'a1xy']);
    expect(ids(2)).toEqual(['a2', 'a1']);
    expect(visibility.records({ kind: 'operator' }, 10)).toHaveLength(5);
  });
});
