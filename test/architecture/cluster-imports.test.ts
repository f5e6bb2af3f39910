import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importGraph, staticImports } from './import-graph.js';

const SRC = join(import.meta.dirname, '..', '..', 'src');
/** The Redis adapter's folder: the only place BullMQ and ioredis are imported. */
const ADAPTER = 'cluster/redis/';

/**
 * Single-host mode loads no Redis client (issue 18: with `cluster.redis_url` unset nothing changes and no
 * connection is made): only the cluster adapter (`src/cluster/redis/`) imports BullMQ or ioredis, and
 * nothing outside it reaches it by a static import — the daemon imports it with `import()` when the URL
 * is set (through src/cluster/cluster-mode.ts).
 */
describe('cluster mode stays out of single-host imports', () => {
  const graph = importGraph(SRC);

  it('only src/cluster/redis/ imports bullmq or ioredis', () => {
    const importers = [...graph.keys()].filter((file) =>
      staticImports(readFileSync(join(SRC, file), 'utf8')).some(
        (spec) => spec === 'bullmq' || spec === 'ioredis',
      ),
    );
    expect(importers.length).toBeGreaterThan(0);
    expect(importers.filter((file) => !file.startsWith(ADAPTER))).toEqual([]);
  });

  it('no module outside the cluster adapter imports it statically; the daemon loads it on demand', () => {
    const importers = [...graph]
      .filter(([from, targets]) => !from.startsWith(ADAPTER) && targets.some((t) => t.startsWith(ADAPTER)))
      .map(([f]) => f);
    expect(importers).toEqual([]);
    expect(readFileSync(join(SRC, 'cluster/cluster-mode.ts'), 'utf8')).toContain(
      "await import('./redis/redis-cluster.js')",
    );
  });

  it('the gateway knows nothing of clusters: no file of src/gateway/ imports src/cluster/ (issue 30)', () => {
    const arrows = [...graph]
      .filter(([from]) => from.startsWith('gateway/'))
      .flatMap(([from, targets]) =>
        targets.filter((t) => t.startsWith('cluster/')).map((t) => `${from} → ${t}`),
      );
    expect(graph.has('gateway/gateway.ts')).toBe(true);
    expect(arrows).toEqual([]);
  });
});
