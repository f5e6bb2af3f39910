import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import { TEST_BUNDLE_DIR } from './test/helpers/test-bundle.js';
import { LongestFirstSequencer } from './test/schedule/sequencer.js';
import { ALL_TESTS, INTEGRATION_TESTS, SLOW_TESTS } from './test/tiers.js';

/** The slow tier runs on CI (which sets `CI=true`) or when asked for; `npm run test:fast` never runs it. */
const runSlow = process.env.CI === 'true' || process.env.CREW_SLOW === '1';

/** `CREW_TEST_WORKERS` overrides the integration tier's parallelism (measuring, a bigger machine). */
const integrationWorkers = Number(process.env.CREW_TEST_WORKERS) || 4;

/**
 * One tier. The tiers run one after the other (vitest runs `groupOrder` groups in turn): unit files are
 * CPU-bound, so they get one thread per core of a 2-core machine; integration files mostly wait on
 * child processes and sockets, so more of them run at once than there are cores, the slow tier among
 * them. Measured on 2 cores; see docs/decisions.md.
 */
function tier(
  name: string,
  options: { pool: 'threads' | 'forks'; groupOrder: number; maxWorkers: number },
  include: string[],
  exclude: string[] = [],
): TestProjectInlineConfiguration {
  return {
    // The code under test finds Crew's entry points in the test bundle too (src/self-command.ts).
    define: { __CREW_ENTRY_ROOT__: JSON.stringify(TEST_BUNDLE_DIR) },
    test: {
      name,
      include,
      exclude,
      pool: options.pool,
      maxWorkers: options.maxWorkers,
      sequence: { groupOrder: options.groupOrder },
      testTimeout: 30_000,
      hookTimeout: 30_000,
    },
  };
}

const processes = { pool: 'forks', groupOrder: 1, maxWorkers: integrationWorkers } as const;

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup/build-test-bundle.ts'],
    // The longest files of a tier group start first, so no long file starts last (test/schedule/).
    sequence: { sequencer: LongestFirstSequencer },
    projects: [
      tier('unit', { pool: 'threads', groupOrder: 0, maxWorkers: 2 }, ALL_TESTS, [
        ...INTEGRATION_TESTS,
        ...SLOW_TESTS,
      ]),
      tier('integration', processes, INTEGRATION_TESTS, SLOW_TESTS),
      ...(runSlow ? [tier('slow', processes, SLOW_TESTS)] : []),
    ],
  },
});
