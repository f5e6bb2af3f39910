import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const codeMap = readFileSync(join(root, 'docs', 'code-map.md'), 'utf8');

/** The folders directly under `top` (e.g. `src/core/`), as the code map writes them. */
function folders(top: string): string[] {
  return readdirSync(join(root, top), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => `${top}/${entry.name}/`);
}

/** The folders the map names: the first backticked path of each table row. */
function mapped(): Set<string> {
  return new Set([...codeMap.matchAll(/^\| `([a-z][\w-]*\/(?:[\w.-]+\/)*)` \|/gm)].map((m) => m[1] ?? ''));
}

describe('docs/code-map.md', () => {
  it('has one line for every folder of src/', () => {
    const inMap = mapped();
    const src = folders('src');
    expect(src.length).toBeGreaterThan(10);
    expect(src.filter((folder) => !inMap.has(folder))).toEqual([]);
  });

  it('has one line for every folder of bench/, test/ and scripts/, and the top folders themselves', () => {
    const inMap = mapped();
    for (const top of ['src', 'bench', 'test', 'docs', 'scripts'])
      expect(inMap.has(`${top}/`), top).toBe(true);
    const missing = [...folders('bench'), ...folders('test')].filter((folder) => !inMap.has(folder));
    expect(missing).toEqual([]);
  });

  it('names no folder that does not exist (a moved folder must leave the map too)', () => {
    const stale = [...mapped()].filter(
      (folder) => !statSync(join(root, folder), { throwIfNoEntry: false })?.isDirectory(),
    );
    expect(stale).toEqual([]);
  });

  it('is linked from the README', () => {
    expect(readFileSync(join(root, 'README.md'), 'utf8')).toContain('(docs/code-map.md)');
  });
});
