import { defineConfig } from 'vitest/config';
import { TEST_BUNDLE_DIR } from './test/helpers/test-bundle.js';

export default defineConfig({
  // The in-process code finds Crew's entry points in the test bundle too (see src/self-command.ts).
  define: { __CREW_ENTRY_ROOT__: JSON.stringify(TEST_BUNDLE_DIR) },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup/build-test-bundle.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
