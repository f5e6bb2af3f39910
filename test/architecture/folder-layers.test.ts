import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { folderArrowsBack, importGraph } from './import-graph.js';

const SRC = join(import.meta.dirname, '../../src');

/**
 * The folders of src/ form layers (issue 30): no two import each other. A piece both need (the bridge's
 * headers, the daemon's health check, the run table) lives in the lower one.
 */
describe('folder layers', () => {
  it('no two folders of src/ import each other', () => {
    const back = folderArrowsBack(importGraph(SRC));
    expect(back, `folders importing each other in src/:\n${back.join('\n')}`).toEqual([]);
  });

  it('finds every pair of folders importing each other, both arrows, and only those', () => {
    const graph = new Map([
      ['cli/main.ts', ['mcp/bridge.ts', 'core/types.ts']],
      ['mcp/bridge.ts', ['cli/client.ts', 'core/types.ts']],
      ['cli/client.ts', []],
      ['core/types.ts', []],
      ['index.ts', ['core/types.ts', 'outside/x.ts']],
    ]);
    expect(folderArrowsBack(graph)).toEqual([
      'cli → mcp (cli/main.ts → mcp/bridge.ts)',
      'mcp → cli (mcp/bridge.ts → cli/client.ts)',
    ]);
    expect(
      folderArrowsBack(
        new Map([
          ['a/x.ts', ['b/y.ts']],
          ['b/y.ts', []],
        ]),
      ),
    ).toEqual([]);
  });
});
