import type { SchedulerLimits } from '../../../src/core/scheduler-types.js';
import type { MoveContext } from './move.js';
import { movesOf } from './moves.js';
import type { World } from './world.js';

/** A failing trace: the move labels from the empty state and, replayed, every scheduler step taken. */
export interface Counterexample {
  kind: 'violation' | 'deadlock';
  violations: string[];
  labels: string[];
  /** `step(event, now)` lines (and restarts), enough to replay it against a bare `Scheduler`. */
  steps: string[];
  /** The live runs in the last state, for a deadlock. */
  live: string[];
}

export function replay(options: {
  kind: Counterexample['kind'];
  labels: string[];
  violations: string[];
  context: MoveContext;
  initial: () => World;
}): Counterexample {
  const world = options.initial();
  world.journal = [];
  for (const label of options.labels) {
    const move = movesOf(world, options.context).find((m) => m.label === label);
    if (!move) throw new Error(`counterexample does not replay: no move "${label}"`);
    world.journal.push(`# ${label}`);
    move.apply(world, options.context);
  }
  return {
    kind: options.kind,
    violations: options.violations,
    labels: options.labels,
    steps: world.journal,
    live: world.live().map((r) => `${r.id} ${r.status}${world.stopping.has(r.id) ? ' (stopping)' : ''}`),
  };
}

/** The counterexample as a developer reads it: what broke, then the shortest trace, step by step. */
export function formatCounterexample(name: string, limits: SchedulerLimits, c: Counterexample): string {
  return [
    `explorer ${name}: ${c.kind} after ${c.labels.length} events (limits ${JSON.stringify(limits)})`,
    ...c.violations.map((v) => `  ✗ ${v}`),
    ...(c.kind === 'deadlock' ? [`  live: ${c.live.join(', ')}`] : []),
    'shortest trace:',
    ...c.steps.map((line) => (line.startsWith('#') ? `  ${line.slice(2)}` : `      ${line}`)),
  ].join('\n');
}
