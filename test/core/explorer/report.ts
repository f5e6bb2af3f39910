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
