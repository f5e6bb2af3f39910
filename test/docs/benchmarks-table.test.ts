import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');

describe('docs/benchmarks.md', () => {
  it('has a row for every benchmark, linking its results file, with a verdict', () => {
    const table = readFileSync(join(root, 'docs', 'benchmarks.md'), 'utf8');
    const benches = readdirSync(join(root, 'bench'))
      .filter((n) => n.endsWith('.bench.ts'))
      .map((n) => n.replace('.bench.ts', ''));
    expect(benches.length).toBeGreaterThan(15);
    for (const name of benches) {
      const row = table
        .split('\n')
        .find((line) => line.startsWith(`| [\`${name}\`](../bench/results/${name}.md) |`));
      expect(row, name).toBeDefined();
      expect(row, name).toMatch(/\*\*(met|missed|reported)\b/);
    }
  });

  it('is what the README points to, and the README keeps no table of numbers', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    expect(readme).toContain('(docs/benchmarks.md)');
    expect(readme).not.toContain('| benchmark |');
  });
});
