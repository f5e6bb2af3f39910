/**
 * Capacity simulation: does the auto cap (the count cap and the reservation gate) keep hosts out of
 * out-of-memory trouble without giving up throughput? Three hosts run the same 2,000 tasks, seeds 1–30 judged,
 * under the auto policy, the count cap alone (before the gate) and fixed caps 1–32; the model is in
 * `capsim/model.ts`, the verdict rule (over every seed, never one) in `capsim/verdict.ts`.
 *
 * Also measured, not judged: the auto policy with other reservation buffers on the same seeds (how the
 * default was chosen), with other settle counts (`SETTLE_TICKS`) over seeds 1–50, seeds 31–50, which
 * played no part in choosing the buffer, and on the smallest host what-ifs: the gate's mean and spread
 * learned over more samples, and an oracle that knows the live runs' peaks (a bound, not a policy). A
 * judged seed where auto is short of the stricter reading (each seed against its own best safe fixed cap)
 * is traced (runs in flight, what held the queue). Exits 1 when the target is missed; the result file says
 * where and by how much.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { HOSTS, type Host, makeTasks, type Policy, simulate } from './capsim/model.js';
import { type HostRuns, markdown, svg } from './capsim/report.js';
import type { SeedRun } from './capsim/verdict.js';

const JUDGED_SEEDS = range(1, 30);
const HELD_OUT_SEEDS = range(31, 50);
const FIXED_CAPS = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32] as const;
const SWEPT_BUFFERS_GB = [1.5, 2, 2.5, 3, 3.5, 4] as const;
/** Gate p90 windows for the what-if on the smallest host (the default window is 50). */
const GATE_WINDOWS = [200, 1000] as const;
/** How many ticks without a new high-water mark settle a run: the default is `SETTLE_TICKS`. */
const SWEPT_SETTLE_TICKS = [2, 3, 5] as const;
const REFERENCE: Policy[] = [
  { kind: 'auto' },
  { kind: 'auto', pauseMarginGb: null },
  { kind: 'spreadgate' },
  { kind: 'meancap' },
  { kind: 'p90gate' },
  { kind: 'count' },
  ...FIXED_CAPS.map((cap) => ({ kind: 'fixed' as const, cap })),
];

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

function runSeeds(host: Host, seeds: readonly number[], policies: readonly Policy[]): SeedRun[] {
  return seeds.map((seed) => {
    const tasks = makeTasks(seed);
    return { seed, outcomes: policies.map((policy) => simulate(host, policy, tasks)) };
  });
}

function fixed(run: SeedRun) {
  return run.outcomes.filter((o) => o.policy.kind === 'fixed');
}

function runHost(host: Host, isSmallest: boolean): HostRuns {
  const judged = runSeeds(host, JUDGED_SEEDS, REFERENCE);
  const heldOut = runSeeds(host, HELD_OUT_SEEDS, REFERENCE);
  const bufferSweep = SWEPT_BUFFERS_GB.map((bufferGb) => ({
    bufferGb,
    // The fixed caps do not depend on the buffer: reuse them rather than simulate them again.
    runs: judged.map((run) => ({
      seed: run.seed,
      outcomes: [simulate(host, { kind: 'auto', bufferGb }, makeTasks(run.seed)), ...fixed(run)],
    })),
  }));
  const settleSweep = SWEPT_SETTLE_TICKS.map((settleTicks) => ({
    settleTicks,
    runs: [...judged, ...heldOut].map((run) => ({
      seed: run.seed,
      outcomes: [simulate(host, { kind: 'auto', settleTicks }, makeTasks(run.seed)), ...fixed(run)],
    })),
  }));
  const whatIfPolicies: Policy[] = isSmallest
    ? [...GATE_WINDOWS.map((gateSamples) => ({ kind: 'auto', gateSamples }) as const), { kind: 'oracle' }]
    : [];
  const whatIfs = whatIfPolicies.map((policy) => ({
    policy,
    runs: [...judged, ...heldOut].map((run) => ({
      seed: run.seed,
      outcomes: [simulate(host, policy, makeTasks(run.seed)), ...fixed(run)],
    })),
  }));
  return { host, judged, bufferSweep, settleSweep, heldOut, whatIfs };
}

function main(): void {
  const startMs = performance.now();
  const loadAtStart = loadavg();
  const all = HOSTS.map((host, i) => runHost(host, i === 0));
  const { text, isMet } = markdown(all, performance.now() - startMs, loadAtStart);
  console.log(text);
  const resultsDir = join(import.meta.dirname, 'results');
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, 'capsim.md'), text);
  writeFileSync(join(resultsDir, 'capsim.svg'), svg(all));
  if (!isMet) process.exitCode = 1;
}

main();
