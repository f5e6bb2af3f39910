import { describe, expect, it } from 'vitest';
import { CONFIGS } from './explorer/configs.js';
import { exploreAndReport } from './explorer/report.js';

/** The second half of the bounded exhaustive exploration (scheduler-explorer.test.ts holds the first). */
describe('bounded exhaustive exploration of the admission core (DESIGN §3), second half', () => {
  it.each(CONFIGS.filter((_, i) => i % 2 === 0).map((c) => [c.name, c] as const))(
    '%s',
    (_, config) => {
      const result = exploreAndReport(config);
      expect(result.incomplete).toBe(false);
      expect(result.counterexample?.violations).toBeUndefined();
    },
    60_000,
  );
});
