import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');

/** Every `.ts` file under `dir`, recursively. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The `## n. Title` sections of docs/design.md, by number. */
function designSections(): Set<string> {
  const design = readFileSync(join(root, 'docs', 'design.md'), 'utf8');
  return new Set([...design.matchAll(/^## (\d+)\. \S/gm)].map((m) => m[1] ?? ''));
}

describe('docs/design.md, the design the code cites', () => {
  it('has a section for every "DESIGN §n" cited in src/ (and in test/, bench/, scripts/)', () => {
    const sections = designSections();
    const files = ['src', 'test', 'bench', 'scripts'].flatMap((top) => sourceFiles(join(root, top)));
    const cited = files.flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/DESIGN §(\d+)/g)].map((m) => ({
        at: relative(root, file),
        section: m[1] ?? '',
      })),
    );
    // The code cites the design in many places; a short list would mean the pattern broke.
    expect(cited.filter((c) => c.at.startsWith('src/')).length).toBeGreaterThan(50);
    const missing = cited.filter((c) => !sections.has(c.section));
    expect(missing, 'cited sections missing from docs/design.md').toEqual([]);
  });

  it('numbers its sections 1, 2, 3, … with none skipped or repeated', () => {
    const design = readFileSync(join(root, 'docs', 'design.md'), 'utf8');
    const numbers = [...design.matchAll(/^## (\d+)\. /gm)].map((m) => Number(m[1]));
    expect(numbers).toEqual(numbers.map((_, i) => i + 1));
  });
});
