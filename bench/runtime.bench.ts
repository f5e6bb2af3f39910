/**
 * bench/runtime: 16 concurrent simulator runs (`#sim mem=20mb sleep=3s`) through the real AcpRunner, as
 * dedicated processes and as sessions of one shared runtime, side by side; each next to a bare ACP
 * client (the SDK alone, no gateway) doing the same, as the floor for latency.
 *
 * - Gateway memory per live run: this process's heap (+ external) and RSS growth, after a forced GC,
 *   from before a burst to the moment all 16 runs have sent output, divided by the runs live then. The
 *   gateway comes from `createGateway` with the AcpRunner and the in-memory store; transcripts are
 *   excluded (a store that keeps nothing, only the time of each run's first output).
 * - Spawn → first output: from the `spawn` call to the run's first `output` event reaching the gateway.
 * - Host memory: each dedicated process's RSS, against the shared runtime's RSS growth per session
 *   (`/proc/<pid>/status` VmRSS), both while all 16 runs hold their 20 MB.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import * as acp from '@agentclientprotocol/sdk';
import { realClock } from '../src/clock/real-clock.js';
import { defaultConfig } from '../src/core/config-schema.js';
import { type Truncated, truncate } from '../src/core/truncate.js';
import { createGateway } from '../src/gateway/create-gateway.js';
import { terminateGroup } from '../src/runners/acp-process.js';
import { AcpRunner } from '../src/runners/acp-runner.js';
import type { TranscriptStore, TranscriptWriter } from '../src/transcripts/transcript-store.js';
import { isAlive, rssBytes, simAgent, simCommand, waitUntil } from '../test/helpers/sim.js';

const RUNS = 16;
const ROUNDS = 3;
const TASK = '#sim mem=20mb sleep=3s';
const KB = 1024;
const MB = 1024 * 1024;
/** What `mem=20mb` makes each run's agent hold. */
const BALLAST = 20 * MB;

// A forced GC with or without --expose-gc (`npx tsx bench/runtime.bench.ts` has none).
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

type Mode = 'dedicated' | 'shared';

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
}

function median(values: number[]): number {
  return percentile(values, 0.5);
}

/** Keeps no text: only when each run's first output arrived. */
class FirstOutputTranscripts implements TranscriptStore {
  readonly firstOutputAt = new Map<string, number>();
  open(runId: string): TranscriptWriter {
    return {
      write: () => {
        if (!this.firstOutputAt.has(runId)) this.firstOutputAt.set(runId, performance.now());
      },
      close: async () => ({ chars: 0, bytes: 0, cut: false, gapBytes: 0 }),
    };
  }
  async preview(
    _runId: string,
    options: { keep: 'head' | 'tail' | 'both'; keepChars: number },
  ): Promise<Truncated> {
    return truncate('', options);
  }
  async page(): Promise<{ text: string }> {
    return { text: '' };
  }
  async prune(runId: string): Promise<void> {
    this.firstOutputAt.delete(runId);
  }
  pathOf(runId: string): string {
    return `discard://${runId}`;
  }
}

interface Memory {
  heap: number;
  rss: number;
}

function memory(): Memory {
  gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed + m.external, rss: m.rss };
}

interface Round {
  latenciesMs: number[];
  /** Runs still live when the last of the burst had sent output. */
  liveAtPeak: number;
  heapPerRun: number;
  rssPerRun: number;
  /** RSS of one more run on the host: a dedicated process's whole RSS, or the shared runtime's growth per session. */
  hostRssPerRun: number;
}

interface ModeResult {
  rounds: Round[];
  coldFirstOutputMs: number;
  /** The shared runtime's RSS with no session live (shared mode). */
  idleRuntimeRss?: number;
  pids: Set<number>;
}

async function crew(mode: Mode): Promise<ModeResult> {
  const config = {
    ...defaultConfig(),
    'agent.subagent_spawn_stagger_secs': 0,
    'agent.spawn_min_memory_gb': 0,
    'agent.max_subagents': RUNS,
  };
  const transcripts = new FirstOutputTranscripts();
  const runPid = new Map<string, number>();
  const ended = new Set<string>();
  const pids = new Set<number>();
  const runner = new AcpRunner({ clock: realClock, killGraceMs: 2000 });
  const gateway = createGateway(config, {
    clock: realClock,
    runner,
    cap: RUNS,
    transcripts,
    agents: new Map([['sim', simAgent({ shared: mode === 'shared' })]]),
    observer: {
      started: (runId, _agent, pid) => {
        if (pid === undefined) return;
        runPid.set(runId, pid);
        pids.add(pid);
      },
      ended: (runId) => {
        ended.add(runId);
        return undefined;
      },
    },
  });
  const spawnRun = (task: string): { id: string; at: number } => {
    const at = performance.now();
    const answer = gateway.spawn('mcp:bench', { task });
    if (!answer.ok) throw new Error(`refused: ${answer.refusal.message}`);
    return { id: answer.runs[0]!.id, at };
  };
  try {
    // Warm-up, and the cold start: the first run (for `shared`, it also starts the pooled runtime).
    const cold = spawnRun('#sim sleep=10ms warm-up');
    await waitUntil(() => ended.has(cold.id), 60_000, 'the warm-up run');
    const coldFirstOutputMs = (transcripts.firstOutputAt.get(cold.id) ?? Number.NaN) - cold.at;
    const warm = spawnRun('#sim sleep=10ms warm-up 2');
    await waitUntil(() => ended.has(warm.id), 60_000, 'the second warm-up run');
    const runtimePid = runPid.get(warm.id);
    const idleRuntimeRss = mode === 'shared' && runtimePid !== undefined ? rssBytes(runtimePid) : undefined;

    const rounds: Round[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      await waitUntil(() => gateway.counts().live === 0, 60_000, 'an idle gateway');
      const before = memory();
      const burst = Array.from({ length: RUNS }, (_, i) => spawnRun(`${TASK} round ${round} run ${i}`));
      await waitUntil(
        () => burst.every((r) => transcripts.firstOutputAt.has(r.id) || ended.has(r.id)),
        120_000,
        'first output from every run',
      );
      const silent = burst.filter((r) => !transcripts.firstOutputAt.has(r.id));
      if (silent.length > 0) throw new Error(`${silent.length} runs ended without output`);
      const liveAtPeak = burst.filter((r) => !ended.has(r.id)).length;
      const after = memory();
      let hostRssPerRun: number;
      if (mode === 'dedicated') {
        const rss = burst.flatMap((r) => {
          const pid = runPid.get(r.id);
          return pid !== undefined && !ended.has(r.id) ? [rssBytes(pid)] : [];
        });
        hostRssPerRun = median(rss);
      } else {
        // Against the runtime before any turn held memory: between bursts it keeps the freed ballast of the
        // last one until its GC runs, and reuses it for the next.
        hostRssPerRun = (rssBytes(runtimePid!) - idleRuntimeRss!) / liveAtPeak;
      }
      rounds.push({
        latenciesMs: burst.map((r) => (transcripts.firstOutputAt.get(r.id) ?? Number.NaN) - r.at),
        liveAtPeak,
        heapPerRun: (after.heap - before.heap) / liveAtPeak,
        rssPerRun: (after.rss - before.rss) / liveAtPeak,
        hostRssPerRun,
      });
      await waitUntil(() => burst.every((r) => ended.has(r.id)), 60_000, 'the burst to end');
    }
    return {
      rounds,
      coldFirstOutputMs,
      ...(idleRuntimeRss !== undefined && { idleRuntimeRss }),
      pids,
    };
  } finally {
    await gateway.close();
    await runner.close();
  }
}

/** A simulator process driven by the ACP SDK alone. */
interface BareProc {
  connection: acp.ClientConnection;
  ready: Promise<unknown>;
  /** Called with a session's first chunk. */
  firstChunk: Map<string, () => void>;
  /** Ends the process group; resolves when it is gone. */
  stop(): Promise<void>;
}

/** The floor: the ACP SDK alone starts the simulator(s) and prompts; time to the first chunk. */
async function bare(mode: Mode): Promise<{ latenciesMs: number[]; pids: Set<number> }> {
  const pids = new Set<number>();
  const procs: BareProc[] = [];
  function connect(): BareProc {
    const [file, ...args] = simCommand();
    const child = spawn(file!, args, { detached: true, stdio: ['pipe', 'pipe', 'ignore'] });
    const pid = child.pid!;
    pids.add(pid);
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => {
        exit = { code, signal };
        resolve(exit);
      }),
    );
    const firstChunk = new Map<string, () => void>();
    const connection = acp
      .client({ name: 'bench' })
      .onNotification(acp.methods.client.session.update, ({ params }) => {
        if (params.update.sessionUpdate === 'agent_message_chunk') firstChunk.get(params.sessionId)?.();
      })
      .connect(
        acp.ndJsonStream(
          Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>,
          Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>,
        ),
      );
    const ready = connection.agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: {},
    });
    const proc: BareProc = {
      connection,
      ready,
      firstChunk,
      stop: () =>
        terminateGroup(
          {
            child,
            pid,
            startTime: undefined,
            exited,
            get exit() {
              return exit;
            },
            stderrTail: () => '',
          },
          { clock: realClock, graceMs: 2000 },
        ),
    };
    procs.push(proc);
    return proc;
  }
  /** Opens a session and prompts; resolves with the time of the first chunk, after the turn ended. */
  async function run(proc: BareProc, task: string): Promise<number> {
    await proc.ready;
    const { sessionId } = await proc.connection.agent.request(acp.methods.agent.session.new, {
      cwd: process.cwd(),
      mcpServers: [],
    });
    let firstAt = Number.NaN;
    const first = new Promise<void>((resolve) =>
      proc.firstChunk.set(sessionId, () => {
        if (Number.isNaN(firstAt)) firstAt = performance.now();
        resolve();
      }),
    );
    const answered = proc.connection.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: 'text', text: task }],
    });
    await first;
    await answered;
    return firstAt;
  }
  try {
    const latenciesMs: number[] = [];
    let shared: BareProc | undefined;
    if (mode === 'shared') {
      // Two warm-up turns, as the gateway's runtime gets.
      shared = connect();
      await run(shared, '#sim sleep=10ms warm-up');
      await run(shared, '#sim sleep=10ms warm-up 2');
    }
    for (let round = 0; round < ROUNDS; round++) {
      const burst = Array.from({ length: RUNS }, async (_, i) => {
        // A dedicated process is started inside the timed span, as the gateway's are.
        const at = performance.now();
        const proc = shared ?? connect();
        const firstAt = await run(proc, `${TASK} round ${round} run ${i}`);
        if (!shared) await proc.stop();
        return firstAt - at;
      });
      latenciesMs.push(...(await Promise.all(burst)));
    }
    return { latenciesMs, pids };
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
  }
}

const fmtMs = (ms: number) => ms.toFixed(0);
const fmtKb = (bytes: number) => `${(bytes / KB).toFixed(0)} KB`;
const fmtMb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;
/** A difference of two RSS readings, which noise can push below zero. */
const fmtDiffMb = (bytes: number) => (bytes < 0 ? `≈ 0 (${fmtMb(bytes)}, noise)` : fmtMb(bytes));

const results = {} as Record<Mode, ModeResult>;
const floors = {} as Record<Mode, Awaited<ReturnType<typeof bare>>>;
const loadAverage = loadavg()[0] ?? Number.NaN;
for (const mode of ['dedicated', 'shared'] as const) {
  floors[mode] = await bare(mode);
  results[mode] = await crew(mode);
}

const leftovers = [
  ...results.dedicated.pids,
  ...results.shared.pids,
  ...floors.dedicated.pids,
  ...floors.shared.pids,
].filter(isAlive);
if (leftovers.length > 0) {
  for (const pid of leftovers) process.kill(pid, 'SIGKILL');
  throw new Error(`processes left behind: ${leftovers.join(', ')}`);
}

const summary = (mode: Mode) => {
  const r = results[mode];
  const lat = r.rounds.flatMap((x) => x.latenciesMs);
  return {
    p50: percentile(lat, 0.5),
    p99: percentile(lat, 0.99),
    floorP50: percentile(floors[mode].latenciesMs, 0.5),
    floorP99: percentile(floors[mode].latenciesMs, 0.99),
    heapPerRun: median(r.rounds.map((x) => x.heapPerRun)),
    rssPerRun: median(r.rounds.map((x) => x.rssPerRun)),
    hostRssPerRun: median(r.rounds.map((x) => x.hostRssPerRun)),
    liveAtPeak: Math.min(...r.rounds.map((x) => x.liveAtPeak)),
    cold: r.coldFirstOutputMs,
  };
};
const d = summary('dedicated');
const s = summary('shared');
/** A ratio, or a dash where a figure is within noise of zero (RSS growth can come out negative). */
const ratio = (a: number, b: number) => {
  if (!(a > 0 && b > 0)) return '—';
  return a / b < 0.1 ? (a / b).toPrecision(2) : (a / b).toFixed(2);
};
const gatewayPerRun = Math.max(d.heapPerRun, s.heapPerRun);

const lines = [
  '# bench/runtime',
  '',
  `${RUNS} concurrent runs of \`${TASK}\` through the real AcpRunner (simulator from source via tsx), ${ROUNDS} bursts per mode, in-memory store, transcripts excluded, stagger 0. Medians over the bursts; latency percentiles over all ${RUNS * ROUNDS} runs. Runtimes: dedicated = one process per run; shared = sessions of one pooled runtime (already running, as a pooled runtime is after its first run). Host load average at the start: ${loadAverage.toFixed(1)} on ${availableParallelism()} CPUs.`,
  '',
  '| | dedicated processes | shared runtime | ratio (shared / dedicated) |',
  '|---|---:|---:|---:|',
  `| spawn → first output p50 (ms) | ${fmtMs(d.p50)} | ${fmtMs(s.p50)} | ${ratio(s.p50, d.p50)} |`,
  `| spawn → first output p99 (ms) | ${fmtMs(d.p99)} | ${fmtMs(s.p99)} | ${ratio(s.p99, d.p99)} |`,
  `| floor: bare ACP SDK client, p50 / p99 (ms) | ${fmtMs(d.floorP50)} / ${fmtMs(d.floorP99)} | ${fmtMs(s.floorP50)} / ${fmtMs(s.floorP99)} | |`,
  `| ratio crew / bare, p50 | ${ratio(d.p50, d.floorP50)} | ${ratio(s.p50, s.floorP50)} | |`,
  `| host RSS of one more run | ${fmtMb(d.hostRssPerRun)} (a process) | ${fmtMb(s.hostRssPerRun)} (a session) | ${ratio(s.hostRssPerRun, d.hostRssPerRun)} |`,
  `| … less the 20 MB the task itself holds | ${fmtDiffMb(d.hostRssPerRun - BALLAST)} | ${fmtDiffMb(s.hostRssPerRun - BALLAST)} | ${ratio(s.hostRssPerRun - BALLAST, d.hostRssPerRun - BALLAST)} |`,
  `| gateway heap + external per live run | ${fmtKb(d.heapPerRun)} | ${fmtKb(s.heapPerRun)} | ${ratio(s.heapPerRun, d.heapPerRun)} |`,
  `| gateway RSS per live run | ${fmtKb(d.rssPerRun)} | ${fmtKb(s.rssPerRun)} | ${ratio(s.rssPerRun, d.rssPerRun)} |`,
  `| runs live when the last first output came (min over bursts) | ${d.liveAtPeak} | ${s.liveAtPeak} | |`,
  `| first run from cold (ms; shared: starts the runtime) | ${fmtMs(d.cold)} | ${fmtMs(s.cold)} | |`,
  '',
  `Each run holds 20 MB in its agent; the shared runtime's RSS with no session live was ${fmtMb(results.shared.idleRuntimeRss ?? Number.NaN)}. Gateway memory per live run (heap + external, the larger mode): ${fmtKb(gatewayPerRun)} (target < 200 KB: ${gatewayPerRun < 200 * KB ? 'met' : 'MISSED'}). RSS growth of this process includes the allocator's and V8's slack and is the noisier figure. Shared-session latency is set by the simulator itself, which allocates the burst's 16 × 20 MB (and collects the last burst's) on its one thread, so its crew / bare ratio is noise around 1. No agent process was left behind.`,
];
console.log(lines.join('\n'));
writeFileSync(join(import.meta.dirname, 'results', 'runtime.md'), `${lines.join('\n')}\n`);
