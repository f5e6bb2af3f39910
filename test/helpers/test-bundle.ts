import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The test bundle: every entry point the tests start as a process, bundled once per test run by
 * `test/global-setup/build-test-bundle.ts`, so a child starts with plain `node` (a start through tsx
 * costs 2.5-3.5x as much). It lives inside the repository so the bundles' bare imports (packages are
 * left external) resolve from its `node_modules`, and keeps `dist/`'s layout (`cli/main.js`,
 * `sim/main.js`) because Crew finds its sibling entry points by that layout.
 */

export const TEST_BUNDLE_DIR = join(import.meta.dirname, '..', '..', '.test-bundle');

/** Output path (without `.js`, relative to the bundle) → source, relative to the repository. */
export const BUNDLE_ENTRIES = {
  'cli/main': 'src/cli/main.ts',
  'sim/main': 'src/sim/main.ts',
  'fake-provider/main': 'src/fake-provider/main.ts',
  'hooks/claude-hook-bin': 'src/hooks/claude-hook-bin.ts',
  'transcripts/grep-worker': 'src/transcripts/grep-worker.ts',
  'workspace/net-bridge-main': 'src/workspace/net-bridge-main.ts',
  'test-fixtures/crash-gateway': 'test/fixtures/crash/crash-gateway.ts',
  'test-fixtures/sqlite-child': 'test/store/sqlite-child.ts',
  'test-fixtures/remembering-agent': 'test/chat/remembering-agent.ts',
} as const;

export type BundleEntry = keyof typeof BUNDLE_ENTRIES;

/** The argv that starts the bundled `entry` with plain node (absolute paths, so any cwd works). */
export function bundledCommand(entry: BundleEntry, ...args: string[]): string[] {
  const file = join(TEST_BUNDLE_DIR, `${entry}.js`);
  if (!existsSync(file)) {
    throw new Error(`Expected the test bundle to hold ${file}; it is built by vitest's globalSetup`);
  }
  return [process.execPath, file, ...args];
}
