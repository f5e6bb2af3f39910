/**
 * The capsim verdict rule, per host over every seed (never one seed), as decided in docs/decisions.md
 * ("capsim's reference is the fixed cap safe on every seed"):
 * - the reference is the fixed cap an operator could pick without knowing the seed: the one with zero kills
 *   on every seed, and of those the most tasks per hour over the seeds;
 * - the auto policy meets the target on a seed when it has zero kills there and at least 90% of the
 *   reference's throughput on that seed;
 * - a host meets the target when the auto policy meets it on every seed; the run meets it when every
 *   host does.
 * The stricter reading (each seed against its own best safe fixed cap, a cap that may be safe on that seed
 * by luck and kill on the others) is computed with the same function and reported beside the verdict.
 */
import type { Host, Outcome } from './model.js';

export const THROUGHPUT_TARGET = 0.9;

/** One host on one seed: every policy's outcome. */
export interface SeedRun {
  seed: number;
  outcomes: Outcome[];
}

/** The fixed cap's outcome a seed's policies are compared with; `undefined` when there is none. */
export type Reference = (run: SeedRun) => Outcome | undefined;

export function bestSafeFixed(outcomes: readonly Outcome[]): Outcome | undefined {
  return outcomes
    .filter((o) => o.policy.kind === 'fixed' && o.kills === 0)
    .reduce<Outcome | undefined>(
      (best, o) => (best === undefined || o.tasksPerHour > best.tasksPerHour ? o : best),
      undefined,
    );
}

/** The stricter reading's reference: the seed's own best safe fixed cap, lucky on that seed or not. */
export const seedsOwnBestSafe: Reference = (run) => bestSafeFixed(run.outcomes);

function fixedOf(run: SeedRun, cap: number): Outcome | undefined {
  return run.outcomes.find((o) => o.policy.kind === 'fixed' && o.policy.cap === cap);
}

/**
 * The rule's reference cap: the fixed cap with zero kills on every one of `runs`, of those the most tasks
 * per hour summed over them. Undefined when no fixed cap is safe on every seed.
 */
export function capSafeOnEverySeed(runs: readonly SeedRun[]): number | undefined {
  if (runs.length === 0) return undefined;
  const caps = (runs[0]?.outcomes ?? []).flatMap((o) => (o.policy.kind === 'fixed' ? [o.policy.cap] : []));
  const safe = caps.filter((cap) => runs.every((run) => fixedOf(run, cap)?.kills === 0));
  const total = (cap: number) => runs.reduce((sum, run) => sum + (fixedOf(run, cap)?.tasksPerHour ?? 0), 0);
  return safe.reduce<number | undefined>(
    (a, b) => (a === undefined || total(b) > total(a) ? b : a),
    undefined,
  );
}

/** The rule's reference over `runs`: on each seed, the outcome of {@link capSafeOnEverySeed}. */
export function safeOnEverySeed(runs: readonly SeedRun[]): Reference {
  const cap = capSafeOnEverySeed(runs);
  return (run) => (cap === undefined ? undefined : fixedOf(run, cap));
}

export function ratioTo(outcome: Outcome, bestSafe: Outcome | undefined): number | undefined {
  return bestSafe === undefined ? undefined : outcome.tasksPerHour / bestSafe.tasksPerHour;
}

export interface PolicyVerdict {
  host: Host;
  /** Seeds with any kill. */
  seedsWithKills: number[];
  kills: number[];
  /** Per seed, in seed order. */
  ratios: (number | undefined)[];
  minRatio: number | undefined;
  medianRatio: number | undefined;
  /** Seeds below the throughput target. */
  seedsShort: number[];
  isMet: boolean;
  /** "met", or every miss stated plainly. */
  reason: string;
}

/**
 * The target for one policy (picked by `pick`) on one host over the seeds, against `reference` (the rule's
 * is `safeOnEverySeed(runs)`; the stricter reading's, and the one that tells variants apart where the
 * rule's reference is a small cap, `seedsOwnBestSafe`).
 */
export function judgePolicy(
  host: Host,
  runs: readonly SeedRun[],
  pick: (o: Outcome) => boolean,
  reference: Reference,
): PolicyVerdict {
  const kills: number[] = [];
  const ratios: (number | undefined)[] = [];
  const seedsWithKills: number[] = [];
  const seedsShort: number[] = [];
  for (const run of runs) {
    const outcome = run.outcomes.find(pick);
    if (outcome === undefined) throw new Error(`no such policy on seed ${run.seed}`);
    const ratio = ratioTo(outcome, reference(run));
    kills.push(outcome.kills);
    ratios.push(ratio);
    if (outcome.kills > 0) seedsWithKills.push(run.seed);
    if (ratio !== undefined && ratio < THROUGHPUT_TARGET - 1e-12) seedsShort.push(run.seed);
  }
  const known = ratios.filter((r): r is number => r !== undefined).sort((a, b) => a - b);
  const reasons: string[] = [];
  if (seedsWithKills.length > 0) {
    const total = kills.reduce((a, b) => a + b, 0);
    reasons.push(
      `${total} out-of-memory kills on ${seedsWithKills.length} of ${runs.length} seeds (${seedsWithKills.join(', ')})`,
    );
  }
  if (seedsShort.length > 0) {
    reasons.push(
      `below ${THROUGHPUT_TARGET * 100}% of the reference on ${seedsShort.length} of ${runs.length} ` +
        `seeds (${seedsShort.join(', ')}; lowest ${pct(known[0])})`,
    );
  }
  return {
    host,
    seedsWithKills,
    kills,
    ratios,
    minRatio: known[0],
    medianRatio: median(known),
    seedsShort,
    isMet: reasons.length === 0,
    reason: reasons.length === 0 ? 'met' : `missed: ${reasons.join('; ')}`,
  };
}

export function median(sorted: readonly number[]): number | undefined {
  if (sorted.length === 0) return undefined;
  const mid = (sorted.length - 1) / 2;
  return ((sorted[Math.floor(mid)] as number) + (sorted[Math.ceil(mid)] as number)) / 2;
}

export function pct(ratio: number | undefined): string {
  return ratio === undefined ? 'n/a' : `${(ratio * 100).toFixed(1)}%`;
}
