import { describe, expect, it } from 'vitest';
import { CONFIGS } from './configs.js';
import { formatCounterexample } from './counterexample.js';
import { type Exploration, type ExplorerConfig, explore } from './explorer.js';

/** Explores and reports: the counts always, the counterexample (a replayable trace) when there is one. */
export function exploreAndReport(config: ExplorerConfig): Exploration {
  const cpuBefore = process.cpuUsage();
  const result = explore(config);
  const cpu = process.cpuUsage(cpuBefore);
  console.log(
    `${config.name}: ${result.states} states, ${result.transitions} transitions, depth ${result.depth}, ` +
      `${result.quiescent} quiescent; ${result.ms} ms (${Math.round((cpu.user + cpu.system) / 1000)} ms CPU)`,
  );
  if (result.counterexample)
    console.log(formatCounterexample(config.name, config.limits, result.counterexample));
  return result;
}

/**
 * One half of the bounded exhaustive exploration (DESIGN §3): the configurations at even or odd places, each
 * explored in full with no violation. The halves are two test files, so the two unit threads share the work.
 */
export function exploreHalf(half: 0 | 1, title: string): void {
  describe(title, () => {
    it.each(CONFIGS.filter((_, i) => i % 2 === half).map((c) => [c.name, c] as const))(
      '%s',
      (_, config) => {
        const result = exploreAndReport(config);
        expect(result.incomplete).toBe(false);
        expect(result.counterexample?.violations).toBeUndefined();
      },
      60_000,
    );
  });
}
