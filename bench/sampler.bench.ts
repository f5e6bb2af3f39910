/**
 * One sampling tick over 32 live process trees (an `sh` root with a `sleep` child each, started
 * detached as the runners start runs): Crew's `ProcessTreeSampler.sampleNow()`, which reads `/proc`
 * once, finds each tree (ppid walk ∪ session) and updates every run, against `pidusage` asked for the
 * same 64 pids (it is handed the pids; it discovers no trees). Ticks alternate so both see the same
 * machine. Target: the Crew tick under 5 ms at the median.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pidusage from 'pidusage';
import { realClock } from '../src/clock/real-clock.js';
import { listTree, readProcStat } from '../src/host/process-tree.js';
import { ProcessTreeSampler } from '../src/host/sampler.js';

const TREES = 32;
const WARMUP_TICKS = 20;
const TICKS = 300;
const TARGET_MS = 5;

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
}

async function timeMs(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

async function waitForTrees(roots: number[]): Promise<number[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const trees = roots.map((pid) => listTree('/', pid));
    if (trees.every((tree) => tree.length >= 2)) return trees.flat();
    if (Date.now() > deadline) throw new Error('the process trees did not come up');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function main(): Promise<void> {
  const children: ChildProcess[] = [];
  const sampler = new ProcessTreeSampler({ hostRoot: '/', clock: realClock, intervalMs: 3_600_000 });
  try {
    for (let i = 0; i < TREES; i++) {
      children.push(spawn('sh', ['-c', 'sleep 600 & wait'], { detached: true, stdio: 'ignore' }));
    }
    const roots = children.map((c) => c.pid as number);
    const pids = await waitForTrees(roots);
    roots.forEach((pid, i) => {
      sampler.track(`run-${i}`, pid, readProcStat('/', pid)?.starttime);
    });

    const crewMs: number[] = [];
    const baselineMs: number[] = [];
    for (let i = 0; i < WARMUP_TICKS + TICKS; i++) {
      const crew = await timeMs(() => sampler.sampleNow());
      const baseline = await timeMs(() => pidusage(pids));
      if (i >= WARMUP_TICKS) {
        crewMs.push(crew);
        baselineMs.push(baseline);
      }
    }
    const peek = sampler.peek('run-0');
    if (!peek || peek.peakMemGb <= 0) throw new Error('the sampler saw no memory for run-0');

    const row = (label: string, ms: number[]) => ({
      label,
      p50: percentile(ms, 50),
      p95: percentile(ms, 95),
      mean: ms.reduce((a, b) => a + b, 0) / ms.length,
    });
    const crew = row(`Crew ProcessTreeSampler tick (${TREES} trees, tree discovery included)`, crewMs);
    const base = row(`pidusage(${pids.length} pids) (baseline, pids handed to it)`, baselineMs);
    const ratio = crew.p50 / base.p50;
    const meets = crew.p50 < TARGET_MS;
    const fmt = (n: number) => n.toFixed(3);
    const lines = [
      `# sampler: one tick over ${TREES} live process trees`,
      '',
      `${TICKS} ticks after ${WARMUP_TICKS} warm-up ticks, Crew and baseline alternating; ${pids.length} processes ` +
        `in the trees, ${countProcs()} processes on the host; Node ${process.version}, ${process.platform}.`,
      '',
      '| sampler | p50 ms | p95 ms | mean ms |',
      '|---|---:|---:|---:|',
      `| ${crew.label} | ${fmt(crew.p50)} | ${fmt(crew.p95)} | ${fmt(crew.mean)} |`,
      `| ${base.label} | ${fmt(base.p50)} | ${fmt(base.p95)} | ${fmt(base.mean)} |`,
      '',
      `Ratio Crew / pidusage at p50: **${ratio.toFixed(2)}×** (below 1 = Crew faster).`,
      '',
      `Target: Crew tick p50 under ${TARGET_MS} ms: **${meets ? 'met' : 'missed'}** (${fmt(crew.p50)} ms).`,
      '',
    ];
    const text = lines.join('\n');
    console.log(text);
    const resultsDir = join(import.meta.dirname, 'results');
    mkdirSync(resultsDir, { recursive: true });
    writeFileSync(join(resultsDir, 'sampler.md'), text);
    if (!meets) process.exitCode = 1;
  } finally {
    await sampler.close();
    pidusage.clear();
    await Promise.all(
      children.map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = once(child, 'exit');
        try {
          process.kill(-(child.pid as number), 'SIGKILL');
        } catch {
          child.kill('SIGKILL');
        }
        await exited;
      }),
    );
  }
}

/** Processes visible in /proc, for context in the results. */
function countProcs(): number {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).length;
}

await main();
