import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './hook-harness.js';

/**
 * Claude Code waits for the hook before every `Agent` call, so what it loads is part of its
 * contract: at start only node built-ins and the hook's own modules; better-sqlite3 once an event
 * concerns the ledger; the config schema (and zod behind it) only when config.json changed; never
 * commander or the MCP SDK.
 */

interface Graph {
  files: string[];
  packages: string[];
  lazy: string[];
}

function importsOf(file: string): { eager: string[]; lazy: string[] } {
  const source = readFileSync(file, 'utf8');
  const eager: string[] = [];
  for (const match of source.matchAll(/^(?:import|export)\s+(type\s+)?[^;]*?from\s+'([^']+)';/gms)) {
    if (match[1] === undefined) eager.push(match[2] as string);
  }
  const lazy = [...source.matchAll(/import\(\s*'([^']+)'\s*\)/g)].map((m) => m[1] as string);
  return { eager, lazy };
}

function toSourcePath(from: string, spec: string): string {
  return resolve(dirname(from), spec).replace(/\.js$/, '.ts');
}

/** What loading `entry` loads, following eager imports only; dynamic imports are listed apart. */
function eagerGraph(entry: string): Graph {
  const files = new Set<string>();
  const packages = new Set<string>();
  const lazy = new Set<string>();
  const pending = [join(REPO_ROOT, entry)];
  while (pending.length > 0) {
    const file = pending.pop() as string;
    if (files.has(file)) continue;
    files.add(file);
    const imports = importsOf(file);
    for (const spec of imports.lazy) lazy.add(relative(REPO_ROOT, toSourcePath(file, spec)));
    for (const spec of imports.eager) {
      if (spec.startsWith('.')) pending.push(toSourcePath(file, spec));
      else packages.add(spec);
    }
  }
  return {
    files: [...files].map((f) => relative(REPO_ROOT, f)).sort(),
    packages: [...packages].sort(),
    lazy: [...lazy].sort(),
  };
}

describe('the hook import graph', () => {
  const start = eagerGraph('src/hooks/claude-hook-bin.ts');

  it('loads only node built-ins and src/hooks at start', () => {
    for (const pkg of start.packages) expect(pkg.startsWith('node:'), `eagerly imports ${pkg}`).toBe(true);
    for (const file of start.files) expect(file.startsWith('src/hooks/'), file).toBe(true);
    expect(start.files).toContain('src/hooks/claude-hook-cli.ts');
  });

  it('defers the driver, the installer, the lister and the config schema', () => {
    expect(start.lazy).toEqual([
      'src/core/config-schema.ts',
      'src/hooks/claude-in-flight-list.ts',
      'src/hooks/claude-settings-install.ts',
      'src/hooks/claude-width-ledger.ts',
    ]);
  });

  it('reaches no package but better-sqlite3 through the deferred hook modules', () => {
    for (const deferred of start.lazy.filter((f) => f.startsWith('src/hooks/'))) {
      const graph = eagerGraph(deferred);
      for (const pkg of graph.packages) {
        expect(pkg.startsWith('node:') || pkg === 'better-sqlite3', `${deferred} imports ${pkg}`).toBe(true);
      }
    }
    expect(eagerGraph('src/hooks/claude-width-ledger.ts').packages).toContain('better-sqlite3');
  });

  it('reads type-only imports as erased', () => {
    expect(importsOf(join(REPO_ROOT, 'src/hooks/claude-hook-handle.ts')).eager).toEqual([]);
  });
});
