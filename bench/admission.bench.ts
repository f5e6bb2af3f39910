/**
 * bench/admission: 100,000 spawns through the gateway (fake instant runner, memory store, stagger 0)
 * against the same workload through p-limit at the same cap, in one run; then a flood of 100,000
 * single spawns against a saturated pool (queue bound, no records kept for refusals, heap growth).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { realClock } from '../src/clock/real-clock.js';
import { defaultConfig } from '../src/core/config-schema.js';
import { createGateway } from '../src/gateway/create-gateway.js';
import { FakeRunner } from '../src/runners/fake-runner.js';

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

/** Wall time and process CPU time (user + system) of one side, in milliseconds. */
interface Timing {
  ms: number;
  cpuMs: number;
}

function cpuMsSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

async function baseline(): Promise<Timing> {
  const limit = pLimit(CAP);
  const start = performance.now();
  const cpu = process.cpuUsage();
  const all: Promise<void>[] = [];
  for (let i = 0; i < N; i++) all.push(limit(async () => {}));
  await Promise.all(all);
  return { ms: performance.now() - start, cpuMs: cpuMsSince(cpu) };
}

async function crew(): Promise<Timing & { latencies: Float64Array }> {
  const config = {
    ...defaultConfig(),
    'agent.subagent_spawn_stagger_secs': 0,
    'agent.spawn_min_memory_gb': 0,
    'agent.subagent_max_queued': N,
  };
  const runner = new FakeRunner({ clock: realClock, plan: () => ({ output: ['ok'] }) });
  const gateway = createGateway(config, {
    clock: realClock,
    runner,
    cap: CAP,
    sel: new CountingSel(),
    agents: new Map([['sim', agent]]),
  });
  const latencies = new Float64Array(N);
  const start = performance.now();
  const cpu = process.cpuUsage();
  for (let i = 0; i < N; i++) {
    const t0 = process.hrtime.bigint();
    const r = gateway.spawn('mcp:bench', { task: `task ${i}` });
    latencies[i] = Number(process.hrtime.bigint() - t0) / 1000;
    if (!r.ok) throw new Error(`refused: ${r.refusal.message}`);
  }
  while (gateway.counts().live > 0) await new Promise((resolve) => setImmediate(resolve));
  const ms = performance.now() - start;
  const cpuMs = cpuMsSince(cpu);
  await gateway.close();
  return { ms, cpuMs, latencies: latencies.sort() };
}

async function flood(): Promise<{ queued: number; refused: number; records: number; heapGrowthMb: number }> {
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
const ROUNDS = 3;
/** Goal (issue 12 §3): what a run costs beyond p-limit, per run. */
const OVERHEAD_TARGET_US = 20;

function medianOf<T extends Timing>(rounds: T[], key: 'ms' | 'cpuMs'): T {
  return [...rounds].sort((a, b) => a[key] - b[key])[Math.floor(rounds.length / 2)] as T;
}

// Warm up both paths once, then alternate rounds of each side.
await baseline();
await crew();
const baseRounds: Timing[] = [];
const crewRounds: (Timing & { latencies: Float64Array })[] = [];
for (let r = 0; r < ROUNDS; r++) {
  baseRounds.push(await baseline());
  crewRounds.push(await crew());
}
const floodResult = await flood();

const base = medianOf(baseRounds, 'ms');
const crewRun = medianOf(crewRounds, 'ms');
const baseCpu = medianOf(baseRounds, 'cpuMs').cpuMs;
const crewCpu = medianOf(crewRounds, 'cpuMs').cpuMs;
const baseRate = N / (base.ms / 1000);
const crewRate = N / (crewRun.ms / 1000);
const overheadUs = ((crewRun.ms - base.ms) * 1000) / N;
const overheadCpuUs = ((crewCpu - baseCpu) * 1000) / N;
const p50 = percentile(crewRun.latencies, 0.5);
const p99 = percentile(crewRun.latencies, 0.99);
const loadAtEnd = loadavg()
  .map((l) => l.toFixed(2))
  .join(' / ');
const lines = [
  '# bench/admission',
  '',
  `Run: ${new Date().toISOString()} · Node ${process.version} · ${process.platform}/${process.arch} · ${availableParallelism()} CPUs · load average at the end ${loadAtEnd}`,
  '',
  ...(loadavg()[0]! > availableParallelism()
    ? [
        `The machine was loaded (other sessions share it; load average ${loadAtEnd} on ${availableParallelism()} CPUs): wall times here are not comparable with a quiet run, CPU times less so.`,
        '',
      ]
    : []),
  `${N.toLocaleString('en')} spawns at cap ${CAP}, instant fake runner, memory store, stagger 0 (each Crew run: admitted, started, ended, announced to the outbox). ${ROUNDS} rounds per side, alternating; the median round (wall ms per round: p-limit ${baseRounds.map((r) => r.ms.toFixed(0)).join(', ')}; crew ${crewRounds.map((r) => r.ms.toFixed(0)).join(', ')}).`,
  '',
  '| | total ms | CPU ms | runs/s | µs per run | ratio (crew / p-limit) |',
  '|---|---:|---:|---:|---:|---:|',
  `| p-limit (bare promise limiter) | ${base.ms.toFixed(0)} | ${baseCpu.toFixed(0)} | ${baseRate.toFixed(0)} | ${((base.ms * 1000) / N).toFixed(1)} | 1.00 |`,
  `| crew gateway | ${crewRun.ms.toFixed(0)} | ${crewCpu.toFixed(0)} | ${crewRate.toFixed(0)} | ${((crewRun.ms * 1000) / N).toFixed(1)} | ${(crewRate / baseRate).toFixed(3)} |`,
  '',
  `- Overhead per run beyond p-limit < ${OVERHEAD_TARGET_US} µs: **${overheadUs < OVERHEAD_TARGET_US ? 'met' : 'MISSED'}** (${overheadUs.toFixed(1)} µs on the wall clock; ${overheadCpuUs.toFixed(1)} µs of CPU time${overheadCpuUs < OVERHEAD_TARGET_US ? ', which meets it' : ''}; before this change 62.1 µs on the wall clock and 68.5 µs of CPU time on a quiet machine).`,
  `- Admission latency (one \`spawn\` call) p99 < 50 µs: **${p99 < 50 ? 'met' : 'MISSED'}** (p50 ${p50.toFixed(1)} µs, p99 ${p99.toFixed(1)} µs).`,
  `- Flood: ${N.toLocaleString('en')} single spawns against a saturated pool (cap 3, 32 queued): ${floodResult.refused.toLocaleString('en')} refused queue_full, queue stays at ${floodResult.queued}, ${floodResult.records} run records kept, heap growth ${floodResult.heapGrowthMb.toFixed(1)} MB (target < 20 MB: **${floodResult.heapGrowthMb < 20 ? 'met' : 'MISSED'}**).`,
  '',
  PROFILE_NOTE,
];
console.log(lines.join('\n'));
writeFileSync(join(import.meta.dirname, 'results', 'admission.md'), `${lines.join('\n')}\n`);
