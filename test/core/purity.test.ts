import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const coreDir = join(import.meta.dirname, '../../src/core');

function importsOf(source: string): string[] {
  const found: string[] = [];
  const pattern = /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;
  for (const match of source.matchAll(pattern)) found.push((match[1] ?? match[2]) as string);
  return found;
}

describe('src/core is pure', () => {
  const files = readdirSync(coreDir).filter((f) => f.endsWith('.ts'));

  it('has modules to check', () => {
    expect(files.length).toBeGreaterThan(3);
  });

  it.each(files)('%s imports no node: module and nothing outside src/core', (file) => {
    const imports = importsOf(readFileSync(join(coreDir, file), 'utf8'));
    for (const spec of imports) {
      expect(spec.startsWith('node:'), `${file} imports ${spec}`).toBe(false);
      if (spec.startsWith('.'))
        expect(spec.startsWith('./'), `${file} reaches outside core: ${spec}`).toBe(true);
      else expect(['zod'], `${file} imports package ${spec}`).toContain(spec);
    }
  });

  it('recognises the import forms it checks', () => {
    expect(
      importsOf(
        `import { x } from 'node:fs';\nimport type { Y } from "./y.js";\nconst z = await import('node:os');`,
      ),
    ).toEqual(['node:fs', './y.js', 'node:os']);
  });
});
