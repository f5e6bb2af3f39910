/**
 * The reservation gate (issue 12 §5): a start waits until the memory the live runs are still expected to
 * grow into, plus the new run's expectation and a margin for their spread, fits in what the host has left.
 * The count cap is sized once, on an idle host; runs start small and ramp, so neither it nor the per-spawn memory gate
 * (which looks only at memory in use) sees the growth already committed. Pure: the gateway passes the
 * reading, the sampler's view and the learned costs as plain numbers.
 */

/** A starting or running run, as the gateway sees it. */
export interface LiveRunMemory {
  /** What the run is expected to peak at, GiB: its agent's learned mean peak, or `agent.subagent_cost_gb`. */
  expectedGb: number;
  /** How far its peak may stray from that, GiB: its agent's peaks' standard deviation; 0 when unknown. */
  spreadGb?: number;
  /** What its process tree holds now, GiB: RSS at the sampler's last tick; 0 before the first tick. */
  currentGb: number;
  /**
   * Set once the run has stopped growing: its RSS high-water mark, GiB, when that mark has not risen for
   * the sampler's last `SETTLE_TICKS` ticks (`src/host/sampler.ts`); absent while it grows or is unseen.
   * A settled run's peak is seen, not expected: it is reserved max(settled, current) and no spread.
   */
  settledGb?: number | undefined;
  /**
   * Paused by the memory pause (`pause-policy.ts`): memory ran short while runs grew. No run starts while
   * one is paused: the memory a start would take is what the paused run needs to go on.
   */
  isPaused?: boolean;
}

export interface ReservationInput {
  /**
   * Effective available memory now, GiB: `min(MemAvailable, cgroup headroom)` (`MemoryReading.availableGb`).
   * `undefined` = the read failed: this gate then sets no limit (the count cap and its fallback still hold).
   */
  availableGb: number | undefined;
  /**
   * Every starting or running run, nested ones included: they hold no permit, but they hold memory and
   * grow like any other. Only top-level runs wait in `nextExpectedGb`.
   */
  runs: readonly LiveRunMemory[];
  /** The expected GiB of the queued runs that would start next, in queue order. */
  nextExpectedGb: readonly number[];
  /** Their spreads, GiB, in the same order; absent entries are 0. */
  nextSpreadGb?: readonly number[];
  /**
   * GiB of the memory runs could hold (available + theirs) kept back beyond the spread term, for the tail
   * the spread does not cover (peaks are skewed: a few runs reach several times the mean) and for the
   * learned numbers' own noise (`agent.reservation_buffer_gb`). @default 2
   */
  bufferGb: number;
}

/** Why the gate answered what it did; `resource_status` shows it. All GiB. */
export interface ReservationExplanation {
  /** False when the memory reading is unknown: the gate limited nothing. */
  isLimited: boolean;
  /** What the live runs hold now (Σ current). */
  liveGb: number;
  /** Memory runs may be committed to: available + live − buffer. `null` when unknown. */
  headroomGb: number | null;
  /** What the live runs are committed to: Σ_growing max(expected, current) + Σ_settled max(settled, current). */
  reservedGb: number;
  /** The spread term for the live runs still growing: SPREAD_Z × √(Σ spread²). */
  spreadTermGb: number;
  /** Live runs taken at their settled high-water mark (no expectation, no spread). */
  settledRuns: number;
  /** headroom − reserved, before the new starts; negative when runs outgrew their expectation. */
  freeGb: number | null;
  /** True when nothing was live and the head was let through although it does not fit (see below). */
  isIdleStart: boolean;
}

export interface Reservation {
  /** How many of `nextExpectedGb`, from the front, may start now (at most its length). */
  startsAllowed: number;
  explanation: ReservationExplanation;
}

/** Binary rounding must not turn an exact fit into a miss (0.1 + 0.2 > 0.3 in doubles). */
const FIT_EPSILON_GB = 1e-9;

/**
 * Standard deviations of the sum of peaks kept free (chosen by measurement with the 2.5 GiB buffer:
 * `bench/results/capsim.md`, docs/decisions.md).
 */
export const SPREAD_Z = 1.5;

/**
 * How many queued runs may start now:
 * ```
 * reserved = Σ_growing max(expected_i, current_i) + Σ_settled max(settled_i, current_i)
 * headroom = available + Σ_live current_i − buffer
 * start the next k while
 *   reserved + Σ_{j≤k} expected_new_j + SPREAD_Z × √(Σ_growing spread_i² + Σ_{j≤k} spread_new_j²) ≤ headroom
 * ```
 * `available` already has the live runs' memory taken out, so adding it back gives the memory runs could
 * hold, and the condition reads "live used + what the live runs may still grow + the new run + a margin
 * ≤ available now − buffer". Expected is a mean peak and the margin grows with √n, not n: the peaks of n
 * independent runs sum to about n means, and their spread to √n spreads, so a big host's many runs share
 * one margin (a p90 per run reserved 1.5× the mean for every run and held 16 GiB at 8 runs where 12 ran
 * clean). The margin covers only the peaks still unknown: a settled run (its high-water mark has not risen
 * for a few sampler ticks) is taken at that mark, neither at the mean (a small run on its plateau held a
 * mean's worth it would never use) nor with a spread (its peak is seen). The buffer is in GiB, not a
 * share: what it must absorb is one or two runs far in the tail, and a settled run that grows again, which
 * do not grow with the host (see docs/decisions.md). Starts are a prefix of the queue: a run that does
 * not fit is not overtaken, so a big run cannot starve behind small ones and FIFO order holds.
 *
 * Two exceptions, both to keep the queue moving rather than to pack it:
 * - an unknown reading sets no limit, as the per-spawn memory gate lets spawns through on one (the count
 *   cap still holds);
 * - with no run live, the head may start even when it does not fit: waiting frees nothing that our runs
 *   hold, and host pressure from others is the per-spawn memory gate's to refuse. Without this an
 *   expectation above the idle headroom would stall the queue forever.
 *
 * Negative numbers read as 0. An expectation, spread, settled mark, current or buffer that is not a finite number fails
 * closed (nothing more fits but the idle head); a reading that is not a finite number ≥ 0 is unknown.
 */
export function reserveStarts(input: ReservationInput): Reservation {
  const liveGb = sum(input.runs.map((run) => nonNegative(run.currentGb)));
  const isSettled = (run: LiveRunMemory) => run.settledGb !== undefined;
  const reservedGb = sum(
    input.runs.map((run) =>
      Math.max(nonNegative(run.settledGb ?? run.expectedGb), nonNegative(run.currentGb)),
    ),
  );
  const settledRuns = input.runs.filter(isSettled).length;
  let varianceGb2 = sum(
    input.runs.filter((run) => !isSettled(run)).map((run) => nonNegative(run.spreadGb ?? 0) ** 2),
  );
  const spreadTermGb = SPREAD_Z * Math.sqrt(varianceGb2);
  const available = input.availableGb;
  if (available === undefined || !Number.isFinite(available) || available < 0) {
    return {
      startsAllowed: input.nextExpectedGb.length,
      explanation: {
        isLimited: false,
        liveGb,
        headroomGb: null,
        reservedGb,
        spreadTermGb,
        freeGb: null,
        isIdleStart: false,
        settledRuns,
      },
    };
  }
  const headroomGb = available + liveGb - nonNegative(input.bufferGb);
  const freeGb = headroomGb - reservedGb;
  let startsAllowed = 0;
  let committedGb = 0;
  for (const [i, expected] of input.nextExpectedGb.entries()) {
    const next = committedGb + nonNegative(expected);
    const nextVariance = varianceGb2 + nonNegative(input.nextSpreadGb?.[i] ?? 0) ** 2;
    // Written so that NaN anywhere compares false and stops here.
    if (!(next + SPREAD_Z * Math.sqrt(nextVariance) <= freeGb + FIT_EPSILON_GB)) break;
    committedGb = next;
    varianceGb2 = nextVariance;
    startsAllowed++;
  }
  const isIdleStart = startsAllowed === 0 && input.runs.length === 0 && input.nextExpectedGb.length > 0;
  const isPauseHeld = input.runs.some((run) => run.isPaused === true);
  return {
    startsAllowed: isPauseHeld ? 0 : isIdleStart ? 1 : startsAllowed,
    explanation: {
      isLimited: true,
      liveGb,
      headroomGb,
      reservedGb,
      spreadTermGb,
      freeGb,
      isIdleStart,
      settledRuns,
    },
  };
}

function nonNegative(gb: number): number {
  // Math.max keeps NaN, so a bad number still fails closed below.
  return Math.max(0, gb);
}

function sum(values: readonly number[]): number {
  let total = 0;
  for (const value of values) total += value;
  return total;
}
