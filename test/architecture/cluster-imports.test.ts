import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importGraph, staticImports } from './import-graph.js';

const SRC = join(import.meta.dirname, '..', '..', 'src');

/**
 * Single-host mode loads no Redis client (issue 18: with `cluster.redis_url` unset nothing changes and no
 * connection is made): only the cluster adapter imports BullMQ or ioredis, and nothing reaches that adapter
 * by a static import — the daemon imports it with `import()` when the URL is set.
 */
describe('cluster mode stays out of single-host imports', () => {
  const graph = importGraph(SRC);

  it('only src/cluster/redis-cluster.ts imports bullmq or ioredis', () => {
    const importers = [...graph.keys()].filter((file) =>
      staticImports(readFileSync(join(SRC, file), 'utf8')).some(
        (spec) => spec === 'bullmq' || spec === 'ioredis',
      ),
    );
    expect(importers).toEqual(['cluster/redis-cluster.ts']);
  });

  it('no module imports the cluster adapter statically; the daemon loads it on demand', () => {
    const importers = [...graph]
      .filter(([, targets]) => targets.includes('cluster/redis-cluster.ts'))
      .map(([f]) => f);
    expect(importers).toEqual([]);
    expect(readFileSync(join(SRC, 'daemon/daemon.ts'), 'utf8')).toContain(
      "await import('../cluster/redis-cluster.js')",
    );
  });
});
