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
 * is set.
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
    expect(readFileSync(join(SRC, 'daemon/open-cluster.ts'), 'utf8')).toContain(
      "await import('../cluster/redis/redis-cluster.js')",
    );
  });
});
