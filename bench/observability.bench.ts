/**
 * bench/observability: what `GET /metrics` and OpenTelemetry tracing cost the spawn path (issue 32 §2).
 * 100,000 spawns through the gateway (instant runner, memory store, stagger 0, cap 8) in one process,
 * four sides in alternating rounds:
 *   - bare: the gateway as the admission benchmark measures it;
 *   - metrics: + what the daemon always wires for `/metrics` (the counting transcript store), never scraped;
 *   - metrics scraped: the same after a first scrape, which subscribes the run-end counter (reported);
 *   - tracing unset: + `createRunTracer` with no OTLP endpoint, wired as the daemon wires it (it answers
 *     undefined, so nothing is added; measured anyway, and checked to have imported no OpenTelemetry module);
 *   - tracing on: + the OpenTelemetry tracer exporting to a loopback OTLP/HTTP sink (a span per run and
 *     one per admission wait).
 * Goals: metrics ≤ 1.10× bare in CPU per run; tracing unset ≤ 1.02× metrics (i.e. nothing); tracing on
 * is reported, not judged.
 */

import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { realClock } from '../src/clock/real-clock.js';
import { defaultConfig } from '../src/core/config-schema.js';
import { createGateway } from '../src/gateway/create-gateway.js';
import { DaemonMetrics } from '../src/metrics/daemon-metrics.js';
import type { RunHandle, Runner, RunnerEvent, RunRequest } from '../src/runners/runner.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { createRunTracer, type RunTracer } from '../src/tracing/run-tracer.js';
import { MemoryTranscripts } from '../src/transcripts/memory-transcripts.js';

const N = 100_000;
const CAP = 8;
const ROUNDS = 3;
// The run-end watcher's bound on remembered ids (src/metrics/run-end-counts.ts) is 10,000, fine here: each
// run is counted at its end, before later changes could repeat it.
const agent = { name: 'sim', runner: 'acp' as const, command: ['fake'], shared: false, skills: [] };
const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);

class CountingSel {
  write(): void {}
  async close(): Promise<void> {}
}

/** Each run starts, prints `ok` and completes in the next microtask, keeping nothing. */
class InstantRunner implements Runner {
  start(_request: RunRequest, onEvent: (event: RunnerEvent) => void): RunHandle {
    queueMicrotask(() => {
      onEvent({ type: 'started', shared: false });
      onEvent({ type: 'output', text: 'ok' });
      onEvent({ type: 'ended', status: 'completed' });
    });
    return { stop: () => undefined, steer: async () => undefined };
  }
  async release(): Promise<void> {}
  async close(): Promise<void> {}
}

type Side = 'bare' | 'metrics' | 'metrics scraped' | 'tracing unset' | 'tracing on';

/** The OTLP sink for the "tracing on" side: accepts and drops. */
const sink = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
});
await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
const sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;

async function round(side: Side): Promise<{ ms: number; cpuMs: number }> {
  const config = {
    ...defaultConfig(),
    'agent.subagent_spawn_stagger_secs': 0,
    'agent.spawn_min_memory_gb': 0,
    'agent.subagent_max_queued': N,
  };
  const store = new MemoryStore();
  let transcripts = new MemoryTranscripts();
  let gatewayRef: ReturnType<typeof createGateway> | undefined;
  let metrics: DaemonMetrics | undefined;
  let tracer: RunTracer | undefined;
  if (side !== 'bare') {
    metrics = new DaemonMetrics({
      now: () => realClock.now(),
      counts: () => ({ queued: 0, queuedSingles: 0, starting: 0, running: 0, permitsHeld: 0 }),
      queueLimits: { singles: 32, waveMembers: 1000 },
      capStatus: () => ({
        cap: CAP,
        cap_source: 'pinned',
        mem_term: null,
        cpu_term: null,
        available_memory_gb: null,
        cpu_count: null,
      }),
      providerCaps: () => ({}),
      store,
      liveStatus: (id) => gatewayRef?.liveRun(id)?.status,
      treesGb: () => ({}),
      watch: (watcher) => gatewayRef?.watch(watcher) ?? (() => undefined),
    });
    transcripts = metrics.transcripts(transcripts) as MemoryTranscripts;
  }
  if (side === 'tracing unset' || side === 'tracing on') {
    const env =
      side === 'tracing on' ? { OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl, OTEL_BSP_MAX_QUEUE_SIZE: '2048' } : {};
    tracer = await createRunTracer(env, {
      liveRun: (id) => gatewayRef?.liveRun(id),
      store,
      now: () => realClock.now(),
      version: 'bench',
      log: () => undefined,
    });
  }
  const gateway = createGateway(config, {
    clock: realClock,
    runner: new InstantRunner(),
    cap: CAP,
    sel: new CountingSel(),
    agents: new Map([['sim', agent]]),
    store,
    transcripts,
  });
  gatewayRef = gateway;
  // The "scraped" side has been scraped once before the spawns: run ends are counted.
  if (side === 'metrics scraped') await metrics?.scrape();
  if (tracer) gateway.watch(tracer.watcher);
  gc();
  const start = performance.now();
  const cpu = process.cpuUsage();
  for (let i = 0; i < N; i++) {
    const r = gateway.spawn('mcp:bench', { task: `task ${i}` });
    if (!r.ok) throw new Error(`refused: ${r.refusal.message}`);
  }
  while (gateway.counts().live > 0) await new Promise((resolve) => setImmediate(resolve));
  const used = process.cpuUsage(cpu);
  const result = { ms: performance.now() - start, cpuMs: (used.user + used.system) / 1000 };
  await gateway.close();
  await tracer?.close();
  metrics?.close();
  if (side === 'metrics scraped') {
    const ended = metrics?.runEnds.entries().reduce((sum, e) => sum + e.count, 0);
    if (ended !== N) throw new Error(`the metrics side counted ${ended} ended runs of ${N}`);
  }
  return result;
}

const loadAtStart = loadavg()
  .map((l) => l.toFixed(2))
  .join(' / ');
const SIDES: Side[] = ['bare', 'metrics', 'metrics scraped', 'tracing unset', 'tracing on'];
const rounds = new Map<Side, { ms: number; cpuMs: number }[]>(SIDES.map((s) => [s, []]));
await round('bare'); // warm-up: JIT and module loading stay out of the timed rounds
for (let r = 0; r < ROUNDS; r++)
  for (let i = 0; i < SIDES.length; i++) {
    const side = SIDES[(i + r) % SIDES.length] as Side;
    rounds.get(side)?.push(await round(side));
  }
sink.close();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const stat = (side: Side) => {
  const rs = rounds.get(side) ?? [];
  return { ms: median(rs.map((r) => r.ms)), cpuMs: median(rs.map((r) => r.cpuMs)) };
};
const bare = stat('bare');
const metricsSide = stat('metrics');
const scraped = stat('metrics scraped');
const unset = stat('tracing unset');
const on = stat('tracing on');
const us = (ms: number) => ((ms * 1000) / N).toFixed(2);
const metricsRatio = metricsSide.cpuMs / bare.cpuMs;
const unsetRatio = unset.cpuMs / metricsSide.cpuMs;
const lines = [
  '# bench/observability',
  '',
  `Run: ${new Date().toISOString()} · Node ${process.version} · ${availableParallelism()} CPUs · load average at the start ${loadAtStart}`,
  '',
  `${N.toLocaleString('en')} spawns at cap ${CAP} through the gateway from source (tsx), instant runner, memory store; ${ROUNDS} rounds per side, alternating; medians.`,
  '',
  '| side | wall ms | CPU ms | wall µs per run | CPU µs per run | CPU ratio to bare |',
  '|---|---:|---:|---:|---:|---:|',
  ...SIDES.map((side) => {
    const s = stat(side);
    return `| ${side} | ${s.ms.toFixed(0)} | ${s.cpuMs.toFixed(0)} | ${us(s.ms)} | ${us(s.cpuMs)} | ${(s.cpuMs / bare.cpuMs).toFixed(3)} |`;
  }),
  '',
  `- Metrics wiring (never scraped) ≤ 1.10× bare in CPU: **${metricsRatio <= 1.1 ? 'met' : 'MISSED'}** (${metricsRatio.toFixed(3)}×, ${us(metricsSide.cpuMs - bare.cpuMs)} µs per run).`,
  `- Tracing with OTEL_EXPORTER_OTLP_ENDPOINT unset adds nothing (≤ 1.02× the metrics side): **${unsetRatio <= 1.02 ? 'met' : 'MISSED'}** (${unsetRatio.toFixed(3)}×; createRunTracer answered undefined and wired nothing).`,
  `- Metrics after a first scrape (run ends counted by a gateway watcher; reported, not judged): ${(scraped.cpuMs / bare.cpuMs).toFixed(3)}× bare, ${us(scraped.cpuMs - bare.cpuMs)} µs of CPU per run.`,
  `- Tracing on (reported, not judged): ${(on.cpuMs / bare.cpuMs).toFixed(3)}× bare, ${us(on.cpuMs - metricsSide.cpuMs)} µs of CPU per run beyond the metrics side (two spans per run, batched OTLP/HTTP JSON export).`,
];
console.log(lines.join('\n'));
writeFileSync(join(import.meta.dirname, 'results', 'observability.md'), `${lines.join('\n')}\n`);
