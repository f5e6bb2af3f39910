/**
 * bench/admission: 100,000 spawns through the gateway (fake instant runner, memory store, stagger 0)
 * against the same workload through p-limit at the same cap, in one run; then a flood of 100,000
 * single spawns against a saturated pool (queue bound, no records kept for refusals, heap growth).
 *
 * The gateway is measured as it ships (compiled by `tsc -p tsconfig.build.json` into `dist/`, what
 * `crew` runs) and from source through tsx, side by side: tsx's esbuild transform names every function
 * it creates (`__name`, a property definition per closure), which costs the source run several µs per
 * run that the shipped code does not pay. The goal is judged on the shipped code.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pLimit from 'p-limit';
import * as sourceClock from '../src/clock/real-clock.js';
import * as sourceConfig from '../src/core/config-schema.js';
import * as sourceGateway from '../src/gateway/create-gateway.js';
import * as sourceRunner from '../src/runners/fake-runner.js';
import type { RunHandle, Runner, RunnerEvent, RunRequest } from '../src/runners/runner.js';
import { cpuWaitMs, threadCpuMs } from './cpu-wait.js';

const N = 100_000;
/** What the profile of the crew side shows and what was done about it (kept beside this file). */
const PROFILE_NOTE = readFileSync(join(import.meta.dirname, 'admission-profile.md'), 'utf8').trim();

/** Counts SEL outcomes without keeping them, so heap growth measures the gateway, not a test sink. */
class CountingSel {
  readonly counts = new Map<string, number>();
  write(event: { outcome: string }): void {
    this.counts.set(event.outcome, (this.counts.get(event.outcome) ?? 0) + 1);
  }
  async close(): Promise<void> {}
}
const CAP = 8;
const agent = { name: 'sim', runner: 'acp' as const, command: ['fake'], shared: false, skills: [] };
const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
}

/**
 * Wall time, process CPU time (user + system) and the time the main thread waited for a CPU another
 * process held (see `cpu-wait.ts`; 0 where unknown) of one side, in milliseconds.
 */
interface Timing {
  ms: number;
  cpuMs: number;
  waitMs: number;
  /** CPU time of the main thread alone (0 where unknown). */
  mainCpuMs: number;
}

/** The gateway's modules the crew side needs: from source (tsx) or from the build. */
interface Subject {
  label: string;
  realClock: typeof sourceClock.realClock;
  defaultConfig: typeof sourceConfig.defaultConfig;
  createGateway: typeof sourceGateway.createGateway;
  FakeRunner: typeof sourceRunner.FakeRunner;
  /** Runs on the test suite's FakeRunner instead of {@link InstantRunner} (context, not judged). */
  fakeRunner?: boolean;
}

/**
 * The runner of the judged rounds: each run starts, prints `ok` and completes in the next microtask, as
 * the test suite's FakeRunner does with that plan, but it keeps nothing. The FakeRunner records every
 * request it is given (tests read them): ~150 B per run kept for the whole round, which p-limit's side has
 * no counterpart for and whose collection was counted against Crew. A side on the FakeRunner is measured
 * beside it.
 */
class InstantRunner implements Runner {
  start(_request: RunRequest, onEvent: (event: RunnerEvent) => void): RunHandle {
    let ended = false;
    const end = (event: Extract<RunnerEvent, { type: 'ended' }>) => {
      if (ended) return;
      ended = true;
      onEvent(event);
    };
    queueMicrotask(() => {
      if (ended) return;
      onEvent({ type: 'started', shared: false });
      onEvent({ type: 'output', text: 'ok' });
      end({ type: 'ended', status: 'completed' });
    });
    return {
      stop: () => queueMicrotask(() => end({ type: 'ended', status: 'cancelled', stop: 'cancelled' })),
      steer: async () => undefined,
    };
  }

  async release(): Promise<void> {}

  async close(): Promise<void> {}
}

const ROOT = join(import.meta.dirname, '..');
const SOURCE: Subject = {
  label: 'source (tsx)',
  realClock: sourceClock.realClock,
  defaultConfig: sourceConfig.defaultConfig,
  createGateway: sourceGateway.createGateway,
  FakeRunner: sourceRunner.FakeRunner,
};

/** Compiles `src` into `dist/` (as `npm run build` does) and loads the gateway from there. */
async function built(): Promise<Subject | undefined> {
  const tsc = spawnSync(
    process.execPath,
    [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
    { cwd: ROOT, encoding: 'utf8' },
  );
  if (tsc.status !== 0) {
    console.error(
      `tsc -p tsconfig.build.json failed; measuring from source only:\n${tsc.stdout}${tsc.stderr}`,
    );
    return undefined;
  }
  const load = (path: string) => import(pathToFileURL(join(ROOT, 'dist', path)).href);
  return {
    label: 'built (dist/)',
    realClock: (await load('clock/real-clock.js')).realClock,
    defaultConfig: (await load('core/config-schema.js')).defaultConfig,
    createGateway: (await load('gateway/create-gateway.js')).createGateway,
    FakeRunner: (await load('runners/fake-runner.js')).FakeRunner,
  };
}

/** What a side's timing needs at its start. */
function begin(): {
  start: number;
  cpu: NodeJS.CpuUsage;
  wait: number | undefined;
  main: number | undefined;
} {
  return { wait: cpuWaitMs(), main: threadCpuMs(), start: performance.now(), cpu: process.cpuUsage() };
}

function end(from: ReturnType<typeof begin>): Timing {
  const ms = performance.now() - from.start;
  const cpuMs = cpuMsSince(from.cpu);
  const wait = cpuWaitMs();
  const main = threadCpuMs();
  return {
    ms,
    cpuMs,
    waitMs: wait !== undefined && from.wait !== undefined ? wait - from.wait : 0,
    mainCpuMs: main !== undefined && from.main !== undefined ? main - from.main : 0,
  };
}

function cpuMsSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

async function baseline(): Promise<Timing> {
  const limit = pLimit(CAP);
  gc(); // what the previous side left is collected before this one is timed, not during it
  const from = begin();
  const all: Promise<void>[] = [];
  for (let i = 0; i < N; i++) all.push(limit(async () => {}));
  await Promise.all(all);
  return end(from);
}

/**
 * One round of the crew side. A timed round records no per-spawn latency: reading the clock twice per
 * spawn is the benchmark's cost, not Crew's, and p-limit's side pays none; a separate round measures it.
 */
async function crew(subject: Subject, measureLatency = false): Promise<Timing & { latencies: Float64Array }> {
  const { realClock, defaultConfig, createGateway, FakeRunner } = subject;
  const config = {
    ...defaultConfig(),
    'agent.subagent_spawn_stagger_secs': 0,
    'agent.spawn_min_memory_gb': 0,
    'agent.subagent_max_queued': N,
  };
  const runner = subject.fakeRunner
    ? new FakeRunner({ clock: realClock, plan: () => ({ output: ['ok'] }) })
    : new InstantRunner();
  const gateway = createGateway(config, {
    clock: realClock,
    runner,
    cap: CAP,
    sel: new CountingSel(),
    agents: new Map([['sim', agent]]),
  });
  const latencies = new Float64Array(measureLatency ? N : 0);
  gc(); // as in `baseline`
  const from = begin();
  for (let i = 0; i < N; i++) {
    const t0 = measureLatency ? process.hrtime.bigint() : 0n;
    const r = gateway.spawn('mcp:bench', { task: `task ${i}` });
    if (measureLatency) latencies[i] = Number(process.hrtime.bigint() - t0) / 1000;
    if (!r.ok) throw new Error(`refused: ${r.refusal.message}`);
  }
  while (gateway.counts().live > 0) await new Promise((resolve) => setImmediate(resolve));
  const timing = end(from);
  await gateway.close();
  return { ...timing, latencies: latencies.sort() };
}

async function flood(
  subject: Subject,
): Promise<{ queued: number; refused: number; records: number; heapGrowthMb: number }> {
  const { realClock, defaultConfig, createGateway, FakeRunner } = subject;
  const config = {
    ...defaultConfig(),
    'agent.subagent_spawn_stagger_secs': 0,
    'agent.spawn_min_memory_gb': 0,
  };
  const runner = new FakeRunner({ clock: realClock, plan: () => ({ hang: true }) });
  const sel = new CountingSel();
  const gateway = createGateway(config, {
    clock: realClock,
    runner,
    cap: 3,
    sel,
    agents: new Map([['sim', agent]]),
  });
  for (let i = 0; i < 35; i++) gateway.spawn('mcp:flood', { task: `fill ${i}` });
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  let refused = 0;
  for (let i = 0; i < N; i++) {
    const r = gateway.spawn('mcp:flood', { task: `flood ${i}` });
    if (!r.ok && r.refusal.code === 'queue_full') refused++;
  }
  gc();
  const heapGrowthMb = (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20;
  const queued = gateway.counts().queued;
  const records = gateway.list({ kind: 'operator' }, 1_000_000).runs.length;
  await gateway.close();
  return { queued, refused, records, heapGrowthMb };
}

/** Rounds per side, alternating; the median round of each is reported (the machine may be shared). */
const ROUNDS = 5;
/** Goal (issue 12 §3): what a run costs beyond p-limit, per run. */
const OVERHEAD_TARGET_US = 20;

function medianOf(rounds: number[]): number {
  return [...rounds].sort((a, b) => a - b)[Math.floor(rounds.length / 2)] as number;
}

/** One side's rounds and their medians (each measure's own median round). */
function summary(rounds: Timing[]) {
  return {
    ms: medianOf(rounds.map((r) => r.ms)),
    cpuMs: medianOf(rounds.map((r) => r.cpuMs)),
    waitMs: medianOf(rounds.map((r) => r.waitMs)),
    mainCpuMs: medianOf(rounds.map((r) => r.mainCpuMs)),
    /** Wall time less the time spent waiting for a CPU: the same work on an idle machine. */
    netMs: medianOf(rounds.map((r) => r.ms - r.waitMs)),
  };
}

const loadAtStart = loadavg()
  .map((l) => l.toFixed(2))
  .join(' / ');
const builtSubject = await built();
const subjects = builtSubject
  ? [
      builtSubject,
      { ...builtSubject, label: `${builtSubject.label} on the test FakeRunner`, fakeRunner: true },
      SOURCE,
    ]
  : [SOURCE];
const judged = subjects[0] as Subject;

// Warm up every path once, then alternate rounds of each side.
await baseline();
for (const subject of subjects) await crew(subject);
const baseRounds: Timing[] = [];
const crewRounds = subjects.map(() => [] as (Timing & { latencies: Float64Array })[]);
// Each round starts with a different side, so no side always follows the same one.
const order = [-1, ...subjects.keys()];
for (let r = 0; r < ROUNDS; r++) {
  for (let k = 0; k < order.length; k++) {
    const i = order[(r + k) % order.length] as number;
    if (i < 0) baseRounds.push(await baseline());
    else crewRounds[i]?.push(await crew(subjects[i] as Subject));
  }
}
const floodResult = await flood(judged);
const latencyRounds: Float64Array[] = [];
for (const subject of subjects) latencyRounds.push((await crew(subject, true)).latencies);

const base = summary(baseRounds);
const sides = subjects.map((subject, i) => {
  const rounds = crewRounds[i] as (Timing & { latencies: Float64Array })[];
  const s = summary(rounds);
  const latencies = latencyRounds[i] as Float64Array;
  return {
    subject,
    rounds,
    ...s,
    overheadUs: ((s.ms - base.ms) * 1000) / N,
    overheadNetUs: ((s.netMs - base.netMs) * 1000) / N,
    overheadCpuUs: ((s.cpuMs - base.cpuMs) * 1000) / N,
    overheadMainCpuUs: ((s.mainCpuMs - base.mainCpuMs) * 1000) / N,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
  };
});
const judgedSide = sides[0] as (typeof sides)[0];
const overheadMet =
  judgedSide.overheadNetUs < OVERHEAD_TARGET_US && judgedSide.overheadCpuUs < OVERHEAD_TARGET_US;
const perRun = (ms: number) => ((ms * 1000) / N).toFixed(1);
const row = (label: string, t: ReturnType<typeof summary>) =>
  `| ${label} | ${t.ms.toFixed(0)} | ${t.waitMs.toFixed(0)} | ${t.cpuMs.toFixed(0)} | ${(N / (t.ms / 1000)).toFixed(0)} | ${perRun(t.ms)} | ${perRun(t.netMs)} | ${perRun(t.cpuMs)} | ${perRun(t.mainCpuMs)} | ${(base.ms / t.ms).toFixed(3)} |`;
const loadAtEnd = loadavg()
  .map((l) => l.toFixed(2))
  .join(' / ');
const lines = [
  '# bench/admission',
  '',
  `Run: ${new Date().toISOString()} · Node ${process.version} · ${process.platform}/${process.arch} · ${availableParallelism()} CPUs · load average at the start ${loadAtStart}, at the end ${loadAtEnd}`,
  '',
  ...(Math.max(loadavg()[0] ?? 0, Number(loadAtStart.split(' / ')[0])) > availableParallelism() / 2
    ? [
        `The machine was shared (load average ${loadAtStart} at the start, ${loadAtEnd} at the end, on ${availableParallelism()} CPUs): wall times here are not those of a quiet run. The column "waited for a CPU" is the time the benchmark's thread was runnable while another process held the CPU (Linux schedstat); the wall time less that wait is what the same work takes on an idle CPU, and the goal is judged on it and on CPU time. A quiet rerun should show wall ≈ wall less wait.`,
        '',
      ]
    : []),
  `${N.toLocaleString('en')} spawns at cap ${CAP}, an instant runner that keeps nothing (\`InstantRunner\`; one side on the test suite's FakeRunner, which keeps every request, for comparison), memory store, stagger 0 (each Crew run: admitted, started, ended, announced to the outbox). ${ROUNDS} rounds per side, alternating, each round starting with a different side and each side timed after a full collection; each column is its median round (wall ms per round: p-limit ${baseRounds.map((r) => r.ms.toFixed(0)).join(', ')}; ${sides.map((x) => `crew ${x.subject.label} ${x.rounds.map((r) => r.ms.toFixed(0)).join(', ')}`).join('; ')}). The gateway is measured as it ships (${builtSubject ? 'compiled by `tsc -p tsconfig.build.json` into `dist/`' : 'the build failed, so from source only'}) and from source through tsx, whose transform adds a \`__name\` property definition per function it creates; the goal is judged on the ${judged.label} side.`,
  '',
  '| | total ms | waited for a CPU ms | CPU ms | runs/s | µs per run | µs per run less the wait | CPU µs per run | of it on the main thread | ratio (p-limit time / this) |',
  '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  row('p-limit (bare promise limiter)', base),
  ...sides.map((x) => row(`crew gateway, ${x.subject.label}`, x)),
  '',
  `- Overhead per run beyond p-limit < ${OVERHEAD_TARGET_US} µs (${judged.label}): **${overheadMet ? 'met' : 'MISSED'}** (${judgedSide.overheadNetUs.toFixed(1)} µs on the wall clock less the wait for a CPU, ${judgedSide.overheadCpuUs.toFixed(1)} µs of CPU time (${judgedSide.overheadMainCpuUs.toFixed(1)} µs of it on the main thread, the rest on V8's collector and compiler threads), ${judgedSide.overheadUs.toFixed(1)} µs on the raw wall clock${sides
    .slice(1)
    .map(
      (x) =>
        `; from ${x.subject.label}: ${x.overheadNetUs.toFixed(1)} µs less the wait, ${x.overheadCpuUs.toFixed(1)} µs of CPU`,
    )
    .join('')}).`,
  `- Admission latency (one \`spawn\` call, ${judged.label}, timed in a round of its own) p99 < 50 µs: **${judgedSide.p99 < 50 ? 'met' : 'MISSED'}** (p50 ${judgedSide.p50.toFixed(1)} µs, p99 ${judgedSide.p99.toFixed(1)} µs${sides
    .slice(1)
    .map((x) => `; ${x.subject.label}: p50 ${x.p50.toFixed(1)} µs, p99 ${x.p99.toFixed(1)} µs`)
    .join('')}).`,
  `- Flood (${judged.label}): ${N.toLocaleString('en')} single spawns against a saturated pool (cap 3, 32 queued): ${floodResult.refused.toLocaleString('en')} refused queue_full, queue stays at ${floodResult.queued}, ${floodResult.records} run records kept, heap growth ${floodResult.heapGrowthMb.toFixed(1)} MB (target < 20 MB: **${floodResult.heapGrowthMb < 20 ? 'met' : 'MISSED'}**).`,
  '',
  PROFILE_NOTE,
];
console.log(lines.join('\n'));
writeFileSync(join(import.meta.dirname, 'results', 'admission.md'), `${lines.join('\n')}\n`);
