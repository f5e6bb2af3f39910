/**
 * The capsim verdict rule, per host over every seed (never one seed):
 * - on each seed, the best safe fixed cap is the fixed cap with zero kills and the most tasks per hour;
 * - the auto policy meets the target on a seed when it has zero kills there and at least 90% of the
 *   throughput of that seed's best safe fixed cap (with no safe fixed cap, only the kills count);
 * - a host meets the target when the auto policy meets it on every seed; the run meets it when every
 *   host does.
 */
import type { Host, Outcome } from './model.js';

export const THROUGHPUT_TARGET = 0.9;

/** One host on one seed: every policy's outcome. */
export interface SeedRun {
  seed: number;
  outcomes: Outcome[];
}

export interface SeedVerdict {
  seed: number;
  bestSafe: Outcome | undefined;
  /** A policy's throughput over the best safe fixed cap's; `undefined` with no safe fixed cap. */
  ratioOf(outcome: Outcome): number | undefined;
}

export function bestSafeFixed(outcomes: readonly Outcome[]): Outcome | undefined {
  return outcomes
    .filter((o) => o.policy.kind === 'fixed' && o.kills === 0)
    .reduce<Outcome | undefined>(
      (best, o) => (best === undefined || o.tasksPerHour > best.tasksPerHour ? o : best),
      undefined,
    );
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

/** The target for one policy (picked by `pick`) on one host over the seeds. */
export function judgePolicy(
  host: Host,
  runs: readonly SeedRun[],
  pick: (o: Outcome) => boolean,
): PolicyVerdict {
  const kills: number[] = [];
  const ratios: (number | undefined)[] = [];
  const seedsWithKills: number[] = [];
  const seedsShort: number[] = [];
  for (const run of runs) {
    const outcome = run.outcomes.find(pick);
    if (outcome === undefined) throw new Error(`no such policy on seed ${run.seed}`);
    const ratio = ratioTo(outcome, bestSafeFixed(run.outcomes));
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
      `below ${THROUGHPUT_TARGET * 100}% of the best safe fixed cap on ${seedsShort.length} of ${runs.length} ` +
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

/**
 * The other reading of "pass/fail over all seeds", reported for whoever owns the rule and not judged: the
 * reference is the fixed cap with zero kills on every seed (the best an operator could pick without knowing
 * the seed), with the most tasks per hour over the seeds; auto is compared with it seed by seed. Undefined
 * when no fixed cap is safe on every seed.
 */
export function againstCapSafeOnEverySeed(
  runs: readonly SeedRun[],
  pick: (o: Outcome) => boolean,
): { reference: Outcome; minRatio: number | undefined; medianRatio: number | undefined } | undefined {
  const fixedOf = (run: SeedRun, cap: number) =>
    run.outcomes.find((o) => o.policy.kind === 'fixed' && o.policy.cap === cap);
  const caps = (runs[0]?.outcomes ?? []).flatMap((o) => (o.policy.kind === 'fixed' ? [o.policy.cap] : []));
  const safe = caps.filter((cap) => runs.every((run) => fixedOf(run, cap)?.kills === 0));
  const total = (cap: number) => runs.reduce((sum, run) => sum + (fixedOf(run, cap)?.tasksPerHour ?? 0), 0);
  const best = safe.reduce<number | undefined>(
    (a, b) => (a === undefined || total(b) > total(a) ? b : a),
    undefined,
  );
  if (best === undefined || runs.length === 0) return undefined;
  const ratios = runs
    .map((run) => ratioTo(run.outcomes.find(pick) as Outcome, fixedOf(run, best)))
    .filter((r): r is number => r !== undefined)
    .sort((a, b) => a - b);
  return {
    reference: fixedOf(runs[0] as SeedRun, best) as Outcome,
    minRatio: ratios[0],
    medianRatio: median(ratios),
  };
}
