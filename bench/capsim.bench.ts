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
import { spawn } from 'node:child_process';
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
/**
 * Child processes the independent jobs (a host's seeds, one variant's sweep) run in. More than the cores so
 * that a shared, loaded machine still gives the bench its share: the results do not depend on it.
 */
const WORKERS = 6;
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

/**
 * One independent piece of the work: a host's judged or held-out seeds under the reference policies, or one
 * auto variant over some seeds (its fixed caps are added from the reference runs, not simulated again).
 */
type Job =
  | { host: number; part: 'judged' | 'heldOut' }
  | { host: number; part: 'variant'; policy: Policy; seeds: number[] };

function jobsFor(hostIndex: number): Job[] {
  const all = [...JUDGED_SEEDS, ...HELD_OUT_SEEDS];
  const whatIfPolicies: Policy[] =
    hostIndex === 0
      ? [...GATE_WINDOWS.map((gateSamples) => ({ kind: 'auto', gateSamples }) as const), { kind: 'oracle' }]
      : [];
  return [
    { host: hostIndex, part: 'judged' },
    { host: hostIndex, part: 'heldOut' },
    ...SWEPT_BUFFERS_GB.map(
      (bufferGb): Job => ({
        host: hostIndex,
        part: 'variant',
        policy: { kind: 'auto', bufferGb },
        seeds: JUDGED_SEEDS,
      }),
    ),
    ...SWEPT_SETTLE_TICKS.map(
      (settleTicks): Job => ({
        host: hostIndex,
        part: 'variant',
        policy: { kind: 'auto', settleTicks },
        seeds: all,
      }),
    ),
    ...whatIfPolicies.map((policy): Job => ({ host: hostIndex, part: 'variant', policy, seeds: all })),
  ];
}

function runJob(job: Job): SeedRun[] {
  const host = HOSTS[job.host] as Host;
  if (job.part === 'variant') return runSeeds(host, job.seeds, [job.policy]);
  return runSeeds(host, job.part === 'judged' ? JUDGED_SEEDS : HELD_OUT_SEEDS, REFERENCE);
}

/** JSON with infinities (the oracle's cap) kept. */
const encode = (value: unknown) =>
  JSON.stringify(value, (_, v) => (v === Number.POSITIVE_INFINITY ? 'Infinity' : v));
const decode = <T>(text: string): T =>
  JSON.parse(text, (_, v) => (v === 'Infinity' ? Number.POSITIVE_INFINITY : v)) as T;

/** Runs a job in a child process (the simulation is deterministic, so where it runs changes nothing). */
function runJobApart(job: Job): Promise<SeedRun[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...process.execArgv, import.meta.filename, '--job', encode(job)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(decode<SeedRun[]>(Buffer.concat(chunks).toString('utf8')));
      else reject(new Error(`capsim job ${encode(job)} exited ${code}`));
    });
  });
}

/** Runs every job, `workers` at a time, and returns the answers in job order. */
async function runAll(jobs: readonly Job[], workers: number): Promise<SeedRun[][]> {
  const answers: SeedRun[][] = [];
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++;
      answers[i] = await runJobApart(jobs[i] as Job);
    }
  };
  await Promise.all(Array.from({ length: Math.min(workers, jobs.length) }, worker));
  return answers;
}

/** Adds the fixed caps' outcomes of the reference runs to a variant's runs, seed by seed. */
function withFixed(variant: readonly SeedRun[], reference: readonly SeedRun[]): SeedRun[] {
  return variant.map((run) => {
    const ref = reference.find((r) => r.seed === run.seed) as SeedRun;
    return { seed: run.seed, outcomes: [...run.outcomes, ...fixed(ref)] };
  });
}

function assemble(hostIndex: number, jobs: readonly Job[], answers: readonly SeedRun[][]): HostRuns {
  const mine = jobs.flatMap((job, i) => (job.host === hostIndex ? [{ job, runs: answers[i] ?? [] }] : []));
  const judged = mine.find((x) => x.job.part === 'judged')?.runs ?? [];
  const heldOut = mine.find((x) => x.job.part === 'heldOut')?.runs ?? [];
  const reference = [...judged, ...heldOut];
  const variants = mine.flatMap((x) =>
    x.job.part === 'variant' ? [{ policy: x.job.policy, runs: x.runs }] : [],
  );
  const bufferSweep = variants.flatMap(({ policy, runs }) =>
    policy.kind === 'auto' && policy.bufferGb !== undefined
      ? [{ bufferGb: policy.bufferGb, runs: withFixed(runs, reference) }]
      : [],
  );
  const settleSweep = variants.flatMap(({ policy, runs }) =>
    policy.kind === 'auto' && policy.settleTicks !== undefined
      ? [{ settleTicks: policy.settleTicks, runs: withFixed(runs, reference) }]
      : [],
  );
  const whatIfs = variants
    .filter(
      ({ policy }) =>
        !(policy.kind === 'auto' && (policy.bufferGb !== undefined || policy.settleTicks !== undefined)),
    )
    .map(({ policy, runs }) => ({ policy, runs: withFixed(runs, reference) }));
  return { host: HOSTS[hostIndex] as Host, judged, bufferSweep, settleSweep, heldOut, whatIfs };
}

async function main(): Promise<void> {
  const jobArg = process.argv.indexOf('--job');
  if (jobArg !== -1) {
    process.stdout.write(encode(runJob(decode<Job>(process.argv[jobArg + 1] ?? ''))));
    return;
  }
  const startMs = performance.now();
  const loadAtStart = loadavg();
  // The seeds under every policy first, the largest host first: the longest jobs, so no worker waits alone.
  const jobs = [...HOSTS.keys()]
    .reverse()
    .flatMap(jobsFor)
    .sort((a, b) => Number(a.part === 'variant') - Number(b.part === 'variant'));
  const answers = await runAll(jobs, WORKERS);
  const all = HOSTS.map((_, i) => assemble(i, jobs, answers));
  const { text, isMet } = markdown(all, performance.now() - startMs, loadAtStart);
  console.log(text);
  const resultsDir = join(import.meta.dirname, 'results');
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, 'capsim.md'), text);
  writeFileSync(join(resultsDir, 'capsim.svg'), svg(all));
  if (!isMet) process.exitCode = 1;
}

await main();
