import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importCycles, importGraph, staticImports } from './import-graph.js';

const SRC = join(import.meta.dirname, '../../src');

describe('import cycles', () => {
  it('src/ has none', () => {
    const graph = importGraph(SRC);
    expect(graph.size).toBeGreaterThan(100);
    const cycles = importCycles(graph).map((cycle) => cycle.join(' → '));
    expect(cycles, `import cycles in src/:\n${cycles.join('\n')}`).toEqual([]);
  });

  it('finds each cycle, printed in import order, and only cycles', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts', 'd.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', []],
      ['e.ts', ['e.ts']],
      ['f.ts', ['d.ts', 'outside.ts']],
    ]);
    expect(importCycles(graph)).toEqual([
      ['a.ts', 'b.ts', 'c.ts', 'a.ts'],
      ['e.ts', 'e.ts'],
    ]);
    expect(
      importCycles(
        new Map([
          ['a.ts', ['b.ts']],
          ['b.ts', []],
        ]),
      ),
    ).toEqual([]);
  });

  it('reads every static import form, and not dynamic imports or comments', () => {
    const source = [
      "import { a } from './a.js';",
      "import type { B } from '../b.js';",
      'import {',
      '  c,',
      '  type D,',
      "} from './cd.js';",
      "export { e } from './e.js';",
      "export type { F } from './f.js';",
      "export * from './g.js';",
      "import './side-effect.js';",
      "import * as h from 'node:fs';",
      "const lazy = await import('./lazy.js');",
      " * import { doc } from './comment.js';",
      'export const text = \'import x from "./not.js"\';',
    ].join('\n');
    expect(staticImports(source)).toEqual([
      './a.js',
      '../b.js',
      './cd.js',
      './e.js',
      './f.js',
      './g.js',
      './side-effect.js',
      'node:fs',
    ]);
  });

  it('resolves relative .js specifiers to the .ts files of the tree', () => {
    const graph = importGraph(SRC);
    expect(graph.get('transcripts/paging.ts')).toContain('transcripts/create-line-matcher.ts');
    expect(graph.get('transcripts/paging.ts')).toContain('core/errors.ts');
  });
});
