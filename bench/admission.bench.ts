/**
 * bench/admission: 100,000 spawns through the gateway (fake instant runner, memory store, stagger 0)
 * against the same workload through p-limit at the same cap, in one run; then a flood of 100,000
 * single spawns against a saturated pool (queue bound, no records kept for refusals, heap growth).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { realClock } from '../src/clock/real-clock.js';
import { defaultConfig } from '../src/core/config-schema.js';
import { createGateway } from '../src/gateway/create-gateway.js';
import { FakeRunner } from '../src/runners/fake-runner.js';

const N = 100_000;

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

async function baseline(): Promise<number> {
  const limit = pLimit(CAP);
  const start = performance.now();
  const all: Promise<void>[] = [];
  for (let i = 0; i < N; i++) all.push(limit(async () => {}));
  await Promise.all(all);
  return performance.now() - start;
}

async function crew(): Promise<{ ms: number; latencies: Float64Array }> {
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
  for (let i = 0; i < N; i++) {
    const t0 = process.hrtime.bigint();
    const r = gateway.spawn('mcp:bench', { task: `task ${i}` });
    latencies[i] = Number(process.hrtime.bigint() - t0) / 1000;
    if (!r.ok) throw new Error(`refused: ${r.refusal.message}`);
  }
  while (gateway.counts().live > 0) await new Promise((resolve) => setImmediate(resolve));
  const ms = performance.now() - start;
  await gateway.close();
  return { ms, latencies: latencies.sort() };
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

// Warm up both paths once, then measure each side by side.
await baseline();
await crew();
const baseMs = await baseline();
const crewRun = await crew();
const floodResult = await flood();

const baseRate = N / (baseMs / 1000);
const crewRate = N / (crewRun.ms / 1000);
const p50 = percentile(crewRun.latencies, 0.5);
const p99 = percentile(crewRun.latencies, 0.99);
const lines = [
  '# bench/admission',
  '',
  `${N.toLocaleString('en')} spawns at cap ${CAP}, instant fake runner, memory store, stagger 0 (each Crew run: admitted, started, ended, announced to the outbox).`,
  '',
  '| | total ms | runs/s | ratio (crew / p-limit) |',
  '|---|---:|---:|---:|',
  `| p-limit (bare promise limiter) | ${baseMs.toFixed(0)} | ${baseRate.toFixed(0)} | 1.00 |`,
  `| crew gateway | ${crewRun.ms.toFixed(0)} | ${crewRate.toFixed(0)} | ${(crewRate / baseRate).toFixed(3)} |`,
  '',
  `Admission latency (one \`spawn\` call): p50 ${p50.toFixed(1)} µs, p99 ${p99.toFixed(1)} µs (target p99 < 50 µs: ${p99 < 50 ? 'met' : 'MISSED'}).`,
  '',
  `Flood: ${N.toLocaleString('en')} single spawns against a saturated pool (cap 3, 32 queued): ${floodResult.refused.toLocaleString('en')} refused queue_full, queue stays at ${floodResult.queued}, ${floodResult.records} run records kept, heap growth ${floodResult.heapGrowthMb.toFixed(1)} MB (target < 20 MB: ${floodResult.heapGrowthMb < 20 ? 'met' : 'MISSED'}).`,
];
console.log(lines.join('\n'));
writeFileSync(join(import.meta.dirname, 'results', 'admission.md'), `${lines.join('\n')}\n`);
