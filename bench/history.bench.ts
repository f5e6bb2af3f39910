/**
 * bench/history: what a long history costs a real daemon (issue 12 §2). Three homes: empty, 1,000 runs
 * and 100,000 runs, the histories written in bulk through the SQLite store (real `crew.db`, the rows a
 * gateway writes: run, spec, completion event, delivered; transcripts pruned except the newest 1,000,
 * as the reaper leaves them an hour after delivery). For each home, alternating, several rounds of a
 * real `crew serve` process (the test bundle, plain node): restart time (process start to the first
 * answered `GET /api/runs`), RSS after it idles, `GET /api/runs?limit=50` latency, and SIGTERM to exit.
 * A fourth home holds 100,000 runs whose transcripts are all still on disk (issue 32 §4: a daemon that was
 * down past the transcripts' TTL, or a long `subagent_result_ttl_secs`): start-up must not pay for them.
 */
import { type ChildProcess, spawn as startProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Run, RunSpec } from '../src/core/types.js';
import { readGatewayFile } from '../src/daemon/daemon-address.js';
import { SqliteStore } from '../src/store/sqlite-store.js';
import type { OutboxEvent, StoreTx } from '../src/store/store.js';
import { buildTestBundle } from '../test/global-setup/build-test-bundle.js';
import { bundledCommand } from '../test/helpers/test-bundle.js';

const HISTORY = 100_000;
const SMALL = 1_000;
const ROUNDS = 3;
const IDLE_MS = 3_000;
const LIST_CALLS = 50;
const BATCH = 5_000;
/** Transcripts not yet pruned: the newest runs (the reaper prunes an hour after delivery). */
const UNPRUNED = 1_000;
const PARENTS = 16;
/** Issue 32 §4: ≤ 1.2× an empty home at 100,000 runs in any pruning state (was 1.5×, pruned only). */
const RESTART_TARGET = 1.2;
const RSS_TARGET = 1.2;
/** "Flat": the list at 100,000 runs within this factor of the list at 1,000. */
const LIST_TARGET = 1.5;

const TASK =
  'Read the repository layout under src/ and summarise, for each top-level folder, what it is for and which files are its entry points; keep it under 300 words.';

/**
 * Writes `count` ended, delivered runs into `home/crew.db`, as a gateway would have, in bulk; the newest
 * `unpruned` keep their transcripts (a `result.txt` each is written on disk), the rest are pruned.
 */
function populate(home: string, count: number, unpruned: number): void {
  const store = new SqliteStore(join(home, 'crew.db'));
  try {
    const epoch = store.nextEpoch();
    // Spread over the last 6 days: inside the default 7-day retention, so the daemon keeps them all.
    const now = Date.now();
    const span = 6 * 24 * 3600_000;
    for (let from = 0; from < count; from += BATCH) {
      const tx: Required<Pick<StoreTx, 'newRuns' | 'outbox' | 'settle' | 'runInfo'>> & StoreTx = {
        epoch,
        newRuns: [],
        outbox: [],
        settle: [],
        runInfo: [],
      };
      for (let i = from; i < Math.min(count, from + BATCH); i++) {
        const id = `h${i.toString(36).padStart(6, '0')}`;
        const created = now - span + Math.floor((i / count) * span);
        const run: Run = {
          id,
          parent: `mcp:p${i % PARENTS}`,
          agent: 'sim',
          depth: 1,
          rootId: id,
          keep: false,
          maxTurns: 100,
          createdAt: created,
          seq: i,
          status: 'completed',
          launchedAt: created,
          startedAt: created + 50,
          endedAt: created + 30_000,
        } as Run;
        const spec: RunSpec = {
          task: `${TASK} (${i})`,
          preview: TASK.slice(0, 120),
          agent: 'sim',
          cwd: home,
        };
        const event: OutboxEvent = {
          id: `e${id}`,
          parent: run.parent,
          kind: 'completion',
          runIds: [id],
          createdAt: created + 30_000,
          state: 'pending',
          attempts: 0,
        };
        tx.newRuns.push({ run, spec });
        tx.outbox.push(event);
        tx.settle.push({ eventId: event.id, state: 'delivered', at: created + 30_010 });
        tx.runInfo.push({
          id,
          pid: 10_000 + (i % 50_000),
          startTime: created,
          resultPath: join(home, 'subagents', id, 'result.txt'),
          resultChars: 2_000 + (i % 5_000),
          peakMemGb: 0.2,
          ...(i < count - unpruned ? { prunedAt: created + 3_630_000 } : {}),
        });
        if (i >= count - unpruned) {
          mkdirSync(join(home, 'subagents', id), { recursive: true });
          writeFileSync(join(home, 'subagents', id, 'result.txt'), `${TASK}\n`.repeat(8), { mode: 0o600 });
        }
      }
      store.apply(tx);
    }
  } finally {
    store.close();
  }
}

interface Round {
  restartMs: number;
  rssMb: number;
  listMs: number[];
  sigtermMs: number;
  runs: number;
}

function rssMbOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1]);
  return kb / 1024;
}

async function get(url: string, token: string, path: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  return (await response.json()) as Record<string, unknown>;
}

async function sleep(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

async function exited(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  await new Promise((resolve) => proc.once('exit', resolve));
}

/** One daemon life on `home`: start, first answer, idle, list calls, SIGTERM. */
async function round(home: string): Promise<Round> {
  rmSync(join(home, 'gateway.json'), { force: true });
  const [node, ...args] = bundledCommand('cli/main', 'serve', '--port', '0') as [string, ...string[]];
  const t0 = performance.now();
  const proc = startProcess(node, args, {
    env: { ...process.env, CREW_HOME: home },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  proc.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  try {
    let file: ReturnType<typeof readGatewayFile>;
    for (;;) {
      file = readGatewayFile(home);
      if (file) break;
      if (proc.exitCode !== null) throw new Error(`crew serve exited: ${err}`);
      await sleep(2);
    }
    const token = readFileSync(join(home, 'token'), 'utf8').trim();
    const first = await get(file.url, token, '/api/runs?limit=50');
    const restartMs = performance.now() - t0;
    await sleep(IDLE_MS);
    const rssMb = rssMbOf(proc.pid as number);
    const listMs: number[] = [];
    for (let i = 0; i < LIST_CALLS; i++) {
      const t = performance.now();
      await get(file.url, token, '/api/runs?limit=50');
      listMs.push(performance.now() - t);
    }
    const t1 = performance.now();
    proc.kill('SIGTERM');
    await exited(proc);
    const sigtermMs = performance.now() - t1;
    return { restartMs, rssMb, listMs, sigtermMs, runs: (first.runs as unknown[]).length };
  } finally {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGKILL');
      await exited(proc);
    }
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

await buildTestBundle();
const loadAtStart = loadavg()
  .map((l) => l.toFixed(2))
  .join(' / ');
const homes = [
  { name: 'empty home', runs: 0, unpruned: 0, dir: mkdtempSync(join(tmpdir(), 'crew-hist-0-')) },
  {
    name: `${SMALL.toLocaleString('en-US')} runs`,
    runs: SMALL,
    unpruned: UNPRUNED,
    dir: mkdtempSync(join(tmpdir(), 'crew-hist-1k-')),
  },
  {
    name: `${HISTORY.toLocaleString('en-US')} runs`,
    runs: HISTORY,
    unpruned: UNPRUNED,
    dir: mkdtempSync(join(tmpdir(), 'crew-hist-100k-')),
  },
  {
    name: `${HISTORY.toLocaleString('en-US')} runs, transcripts not yet pruned`,
    runs: HISTORY,
    unpruned: HISTORY,
    dir: mkdtempSync(join(tmpdir(), 'crew-hist-100k-unpruned-')),
  },
];
try {
  const populateMs: number[] = [];
  for (const home of homes) {
    writeFileSync(join(home.dir, 'config.json'), JSON.stringify({ 'agent.spawn_min_memory_gb': 0 }));
    const t = performance.now();
    if (home.runs > 0) populate(home.dir, home.runs, home.unpruned);
    populateMs.push(performance.now() - t);
  }
  // One throwaway start per home (page cache, the bundle's first compile), then alternate.
  for (const home of homes) await round(home.dir);
  const rounds = homes.map(() => [] as Round[]);
  for (let r = 0; r < ROUNDS; r++) {
    for (const [i, home] of homes.entries()) (rounds[i] as Round[]).push(await round(home.dir));
  }
  const rows = homes.map((home, i) => {
    const rs = rounds[i] as Round[];
    return {
      name: home.name,
      restartMs: median(rs.map((x) => x.restartMs)),
      rssMb: median(rs.map((x) => x.rssMb)),
      listMs: median(rs.flatMap((x) => x.listMs)),
      sigtermMs: median(rs.map((x) => x.sigtermMs)),
      listed: rs[0]?.runs ?? 0,
    };
  });
  type Row = (typeof rows)[0];
  const [empty, small, big, unpruned] = rows as [Row, Row, Row, Row];
  const restartRatio = big.restartMs / empty.restartMs;
  const rssRatio = big.rssMb / empty.rssMb;
  const unprunedRestartRatio = unpruned.restartMs / empty.restartMs;
  const unprunedRssRatio = unpruned.rssMb / empty.rssMb;
  const listRatio = big.listMs / small.listMs;
  const sigtermRatio = big.sigtermMs / empty.sigtermMs;
  const verdict = (ok: boolean) => (ok ? '**met**' : '**MISSED**');
  const lines = [
    '# bench/history',
    '',
    `Run: ${new Date().toISOString()} · Node ${process.version} · ${process.platform}/${process.arch} · ${availableParallelism()} CPUs · load average at start ${loadAtStart}`,
    '',
    `A real \`crew serve\` process (the test bundle, plain node) on a real \`crew.db\`, per home: restart = process start to the first answered \`GET /api/runs?limit=50\`; RSS = VmRSS after ${IDLE_MS / 1000} s idle; list = \`GET /api/runs?limit=50\` over HTTP, median of ${LIST_CALLS} calls per round; SIGTERM = signal to exit (no live runs). Histories written in bulk through \`SqliteStore.apply\` (${BATCH.toLocaleString('en-US')} runs a transaction; ${populateMs.map((ms) => `${(ms / 1000).toFixed(1)} s`).join(' / ')}): every run ended, its completion event delivered, ${PARENTS} parents, spread over the last 6 days (inside the 7-day retention, and exactly \`agent.run_history_max\` at 100,000, so the daemon keeps them all), transcripts pruned but for the newest ${UNPRUNED.toLocaleString('en-US')} (the last home: none pruned, all ${HISTORY.toLocaleString('en-US')} \`result.txt\` files on disk, every one already due for pruning). One throwaway start per home, then ${ROUNDS} rounds alternating homes; medians.`,
    '',
    '| home | restart ms | idle RSS MB | list p50 ms | SIGTERM ms | runs listed |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.name} | ${r.restartMs.toFixed(0)} | ${r.rssMb.toFixed(1)} | ${r.listMs.toFixed(2)} | ${r.sigtermMs.toFixed(0)} | ${r.listed} |`,
    ),
    '',
    `- Restart at ${HISTORY.toLocaleString('en-US')} runs (pruned) within ${RESTART_TARGET}× an empty home: ${verdict(restartRatio <= RESTART_TARGET)} (${restartRatio.toFixed(2)}×).`,
    `- Idle RSS at ${HISTORY.toLocaleString('en-US')} runs (pruned) within ${RSS_TARGET}× an empty home: ${verdict(rssRatio <= RSS_TARGET)} (${rssRatio.toFixed(2)}×).`,
    `- Restart at ${HISTORY.toLocaleString('en-US')} runs, transcripts not yet pruned, within ${RESTART_TARGET}× an empty home: ${verdict(unprunedRestartRatio <= RESTART_TARGET)} (${unprunedRestartRatio.toFixed(2)}×).`,
    `- Idle RSS at ${HISTORY.toLocaleString('en-US')} runs, transcripts not yet pruned, within ${RSS_TARGET}× an empty home: ${verdict(unprunedRssRatio <= RSS_TARGET)} (${unprunedRssRatio.toFixed(2)}×).`,
    `- A list call flat in history size (${HISTORY.toLocaleString('en-US')} runs within ${LIST_TARGET}× of ${SMALL.toLocaleString('en-US')}; both list 50): ${verdict(listRatio <= LIST_TARGET)} (${listRatio.toFixed(2)}×).`,
    `- SIGTERM (issue: 4–8 s at 50,000 runs before): ${big.sigtermMs.toFixed(0)} ms at ${HISTORY.toLocaleString('en-US')} runs, ${sigtermRatio.toFixed(2)}× an empty home (no target beyond "not proportional to history").`,
    '',
  ];
  const text = lines.join('\n');
  console.log(text);
  writeFileSync(join(import.meta.dirname, 'results', 'history.md'), text);
} finally {
  for (const home of homes) rmSync(home.dir, { recursive: true, force: true });
}
