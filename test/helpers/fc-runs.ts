/**
 * The size of every property test, from one knob: `FC_NUM_RUNS` is the number of random histories the
 * scheduler invariant (the largest property, base 10,000) checks, and every other property scales with
 * it from its own base. `FC_NUM_RUNS=100000` runs everything ten times as long; `FC_NUM_RUNS=1000` a
 * tenth. A property never drops below one run, so none is silently switched off.
 *
 * @default 10_000 (the sizes the README promises)
 */

const REFERENCE_RUNS = 10_000;

function scale(): number {
  const raw = process.env.FC_NUM_RUNS;
  if (raw === undefined || raw === '') return 1;
  const runs = Number(raw);
  if (!Number.isInteger(runs) || runs < 1) {
    throw new Error(`Expected \`FC_NUM_RUNS\` to be a positive integer, got ${JSON.stringify(raw)}`);
  }
  return runs / REFERENCE_RUNS;
}

/** The number of runs for a property whose size is `base` at the default `FC_NUM_RUNS`. */
export function numRuns(base: number): number {
  return Math.max(1, Math.round(base * scale()));
}
