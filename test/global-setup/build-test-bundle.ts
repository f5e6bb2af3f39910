import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { build } from 'esbuild';
import type { TestProject } from 'vitest/node';
import { BUNDLE_ENTRIES, TEST_BUNDLE_DIR } from '../helpers/test-bundle.js';

const REPO_ROOT = join(import.meta.dirname, '..', '..');
/** A chunk no build has written for this long belongs to sources that no longer exist. */
const STALE_MS = 60 * 60_000;

/**
 * vitest globalSetup: bundles the entry points tests start as processes into `.test-bundle/`, once per
 * test run and again before each rerun in watch mode. Packages stay external (better-sqlite3 is
 * native; the rest load as they do from `dist/`). Dynamic imports become their own chunks
 * (`splitting`), so a lazily imported module stays lazy: the Claude hook's start-up depends on it. The
 * define tells `src/self-command.ts` where the bundle's entry points are.
 *
 * Files are replaced by rename and only when their bytes changed, so a second test run started
 * meanwhile (a soak, a targeted run beside the full one) never sees a half-written bundle.
 */
export async function setup(project: TestProject): Promise<void> {
  await buildTestBundle();
  // Watch mode: a rerun after an edit must not start children from the old bundle.
  project.onTestsRerun(() => buildTestBundle());
}

/** Builds `.test-bundle/` (also used by benchmarks that start the daemon as a real process). */
export async function buildTestBundle(): Promise<void> {
  const result = await build({
    absWorkingDir: REPO_ROOT,
    entryPoints: Object.entries(BUNDLE_ENTRIES).map(([out, source]) => ({ in: source, out })),
    outdir: TEST_BUNDLE_DIR,
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    define: { __CREW_ENTRY_ROOT__: JSON.stringify(TEST_BUNDLE_DIR) },
    write: false,
    logLevel: 'warning',
  });
  const written = new Set<string>();
  for (const file of result.outputFiles) {
    written.add(file.path);
    if (sameBytes(file.path, file.contents)) {
      // Refreshed so the stale-chunk sweep of a later build sees it as in use.
      const now = new Date();
      utimesSync(file.path, now, now);
      continue;
    }
    mkdirSync(dirname(file.path), { recursive: true });
    const temp = `${file.path}.${process.pid}.tmp`;
    writeFileSync(temp, file.contents);
    renameSync(temp, file.path);
  }
  removeStaleChunks(join(TEST_BUNDLE_DIR, 'chunks'), written);
  copyIfChanged(
    join(REPO_ROOT, 'src', 'cluster', 'redis', 'lua'),
    join(TEST_BUNDLE_DIR, 'cluster', 'redis', 'lua'),
  );
}

/**
 * Files esbuild does not bundle (cluster mode's Lua scripts), copied as `npm run build` copies them into
 * `dist/`: by rename and only when their bytes changed, like the bundle's own files.
 */
function copyIfChanged(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const name of readdirSync(from)) {
    const contents = readFileSync(join(from, name));
    const path = join(to, name);
    if (sameBytes(path, contents)) continue;
    const temp = `${path}.${process.pid}.tmp`;
    writeFileSync(temp, contents);
    renameSync(temp, path);
  }
}

function sameBytes(path: string, contents: Uint8Array): boolean {
  try {
    return Buffer.compare(readFileSync(path), contents) === 0;
  } catch {
    return false;
  }
}

/** Old chunks are left for an hour: a test run started before this build may still import them. */
function removeStaleChunks(dir: string, written: Set<string>): void {
  if (!existsSync(dir)) return;
  const now = Date.now();
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (!written.has(path) && now - statSync(path).mtimeMs > STALE_MS) rmSync(path, { force: true });
  }
}
