/**
 * bench/dashboard: the dashboard's server side with 50,000 runs in history (a real SQLite store) and 50
 * live, in process: time to the first page (`GET /` with a session: the newest runs and the live ones
 * into the read model, the counts, the snapshot, the HTML) beside the same page when all of history is
 * read at once (the baseline, as before), the fill of the rest of history, the next page, and time from a transition to its live message; then the
 * gateway's CPU per 1,000 transitions with no dashboard vs one live-feed subscriber that serializes every
 * message as the socket does, side by side. The browser's own layout time is not in these numbers.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../src/clock/fake-clock.js';
import { defaultConfig } from '../src/core/config-schema.js';
import type { Run } from '../src/core/types.js';
import { Dashboard } from '../src/dashboard/dashboard.js';
import { FILL_RUNS, FIRST_RUNS } from '../src/dashboard/history-fill.js';
import { createGateway } from '../src/gateway/create-gateway.js';
import type { Gateway } from '../src/gateway/gateway.js';
import { toRunView } from '../src/gateway/run-view.js';
import { createApp } from '../src/http/app.js';
import { dashboardAuthenticator, mountDashboardRoutes } from '../src/http/dashboard-routes.js';
import { Tokens } from '../src/http/tokens.js';
import { FakeRunner } from '../src/runners/fake-runner.js';
import { MemorySelSink } from '../src/sel/memory-sel-sink.js';
import { SqliteStore } from '../src/store/sqlite-store.js';
import { MemoryTranscripts } from '../src/transcripts/memory-transcripts.js';

const HISTORY = 50_000;
const LIVE = 50;
/** Transitions per measured round (reported per 1,000). */
const TRANSITIONS = 4_000;
const ROUNDS = 5;
const HOST = '127.0.0.1:7878';
const TARGET_FIRST_PAGE_MS = 1_000;
const TARGET_LIVE_MS = 50;
const TARGET_CPU_RATIO = 1.5;

function world(dir: string) {
  const store = new SqliteStore(join(dir, 'crew.db'));
  const clock = new FakeClock();
  const config = {
    ...defaultConfig(),
    'agent.subagent_spawn_stagger_secs': 0,
    'agent.spawn_min_memory_gb': 0,
  };
  const runner = new FakeRunner({
    clock,
    plan: (r) => ({ durationMs: r.prompt.includes('hang') ? 1e12 : 10, output: ['ok'] }),
  });
  const agent = { name: 'sim', runner: 'acp' as const, command: ['fake'], shared: false, skills: [] };
  const gateway = createGateway(config, {
    clock,
    runner,
    store,
    sel: new MemorySelSink(clock),
    transcripts: new MemoryTranscripts(),
    agents: new Map([['sim', agent]]),
    cap: 1000,
    defaultCwd: '/tmp',
  });
  return { store, clock, gateway, config };
}

function loadHistory(store: SqliteStore): void {
  const t0 = 1_700_000_000_000;
  for (let start = 0; start < HISTORY; start += 1000) {
    const newRuns = [];
    for (let i = start; i < Math.min(HISTORY, start + 1000); i++) {
      const id = `h${i}`;
      const run: Run = {
        id,
        parent: `mcp:p${i % 16}`,
        agent: 'sim',
        depth: 1,
        rootId: id,
        keep: false,
        createdAt: t0 + i,
        seq: i,
        status: 'completed',
        startedAt: t0 + i,
        launchedAt: t0 + i,
        endedAt: t0 + i + 500,
      };
      newRuns.push({ run, spec: { task: `history task ${i}`, preview: `history task ${i}`, agent: 'sim' } });
    }
    store.apply({ epoch: 0, newRuns });
  }
}

function dashboardOf(w: ReturnType<typeof world>, dir: string, paged = true): Dashboard {
  return new Dashboard({
    gateway: w.gateway,
    viewsOf: (ids) => w.store.runs({ ids: [...ids], limit: ids.length }).map(toRunView),
    resources: () => ({ cap: 1000, cap_source: 'pinned', posture: 'ok' }),
    selPath: join(dir, 'security_events.jsonl'),
    clock: w.clock,
    readOnly: false,
    historyMax: 100_000,
    queueBounds: { singles: 32, waveMembers: 5000 },
    // One page of history per tick of the fake clock, so each turn is timed on its own.
    fillIntervalMs: 1,
    ...(paged
      ? {
          history: {
            runs: (query: Parameters<SqliteStore['runs']>[0]) => w.store.runs(query).map(toRunView),
            statusCounts: () => w.store.statusCounts(),
          },
        }
      : {}),
  });
}

async function transitions(gateway: Gateway, clock: FakeClock): Promise<number> {
  // Each run: admitted, started, ended (each a committed change the dashboard hears of).
  const before = process.cpuUsage();
  for (let i = 0; i < TRANSITIONS / 4; i++) gateway.spawn('cli:bench', { task: `bench ${i}` });
  await clock.advance(1);
  await clock.advance(20);
  await clock.advance(20);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / (TRANSITIONS / 1000);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

const dir = mkdtempSync(join(tmpdir(), 'crew-bench-dash-'));
try {
  const w = world(dir);
  loadHistory(w.store);
  for (let i = 0; i < LIVE; i++) w.gateway.spawn('mcp:live', { task: `hang live ${i}` });
  await w.clock.advance(1);
  const dashboard = dashboardOf(w, dir);
  const { app } = createApp({
    gateway: w.gateway,
    tokens: new Tokens('operator-token-0123456789abcdef'),
    allowedHosts: () => [HOST],
    resources: () => ({}),
    setConfig: () => undefined,
    authenticate: dashboardAuthenticator(dashboard, () => 'c'),
  });
  mountDashboardRoutes(app, {
    dashboard,
    gateway: w.gateway,
    cookieName: () => 'c',
    baseUrl: () => `http://${HOST}`,
  });
  const session = dashboard.sessions.create();
  const get = async (path: string) =>
    (
      await app.request(`http://${HOST}${path}`, { headers: { host: HOST, cookie: `c=${session.id}` } })
    ).text();

  let t = performance.now();
  const firstHtml = await get('/');
  const firstPageMs = performance.now() - t;
  // The rest of history fills in a page per turn of the event loop (here: of the fake clock).
  const fillSteps: number[] = [];
  while (!dashboard.historyComplete) {
    t = performance.now();
    await w.clock.advance(1);
    fillSteps.push(performance.now() - t);
  }
  const fillTotalMs = fillSteps.reduce((a, b) => a + b, 0);
  const fillMaxMs = Math.max(...fillSteps);
  // Baseline, side by side: the read model as it was filled before, all of history at once on first use.
  const warmDir = mkdtempSync(join(dir, 'warm'));
  const w2 = world(warmDir);
  loadHistory(w2.store);
  for (let i = 0; i < LIVE; i++) w2.gateway.spawn('mcp:live', { task: `hang live ${i}` });
  await w2.clock.advance(1);
  const dash2 = dashboardOf(w2, warmDir, false);
  const s2 = dash2.sessions.create();
  const app2 = createApp({
    gateway: w2.gateway,
    tokens: new Tokens('operator-token-0123456789abcdef'),
    allowedHosts: () => [HOST],
    resources: () => ({}),
    setConfig: () => undefined,
    authenticate: dashboardAuthenticator(dash2, () => 'c'),
  }).app;
  mountDashboardRoutes(app2, {
    dashboard: dash2,
    gateway: w2.gateway,
    cookieName: () => 'c',
    baseUrl: () => '',
  });
  t = performance.now();
  await app2.request(`http://${HOST}/`, { headers: { host: HOST, cookie: `c=${s2.id}` } });
  const wholePageMs = performance.now() - t;
  dash2.close();
  await w2.gateway.close();
  w2.store.close();
  t = performance.now();
  await get('/');
  const nextPageMs = performance.now() - t;
  const runsPageMs: number[] = [];
  for (let i = 0; i < 5; i++) {
    t = performance.now();
    await get('/api/dashboard/runs?tab=completed&offset=25000&limit=50');
    runsPageMs.push(performance.now() - t);
  }

  // From a spawn to its live message, serialized as the socket sends it.
  const liveMs: number[] = [];
  for (let i = 0; i < 20; i++) {
    let got = 0;
    const off = dashboard.feed.subscribe((m) => {
      JSON.stringify(m);
      if (!got) got = performance.now();
    });
    const start = performance.now();
    w.gateway.spawn('cli:probe', { task: `probe ${i}` });
    // Changes are flushed on the next turn of the event loop (a timer of 0 on the gateway's clock).
    await w.clock.advance(0);
    liveMs.push(got - start);
    off();
  }

  // CPU per 1,000 transitions: a fresh gateway on the same history without a dashboard, and with one
  // subscriber; rounds alternate.
  const none: number[] = [];
  const one: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const withClient of [false, true]) {
      const roundDir = mkdtempSync(join(dir, 'r'));
      const r = world(roundDir);
      let dash: Dashboard | undefined;
      let bytes = 0;
      if (withClient) {
        dash = dashboardOf(r, roundDir);
        dash.activate();
        dash.feed.subscribe((m) => {
          bytes += JSON.stringify(m).length;
        });
      }
      await transitions(r.gateway, r.clock); // warm-up
      const cpu = await transitions(r.gateway, r.clock);
      (withClient ? one : none).push(cpu);
      dash?.close();
      await r.gateway.close();
      r.store.close();
      void bytes;
    }
  }
  const cpuNone = median(none);
  const cpuOne = median(one);
  const ratio = cpuOne / cpuNone;
  const live = median(liveMs);
  const verdict = (ok: boolean) => (ok ? '**met**' : '**missed**');
  const lines = [
    '# bench/dashboard',
    '',
    `Run: ${new Date().toISOString()} · Node ${process.version} · ${process.platform}/${process.arch} · ${availableParallelism()} CPUs · load average at start ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' / ')}`,
    '',
    `${HISTORY.toLocaleString('en')} runs in history in a SQLite store, ${LIVE} live; the dashboard server in process (Hono \`app.request\`), a fake runner on a fake clock. The page's first HTML is ${(firstHtml.length / 1024).toFixed(0)} KiB (shell + snapshot of one page of 50 rows).`,
    '',
    '| measure | value | goal | verdict |',
    '|---|---:|---:|---|',
    `| first \`GET /\` cold (reads the newest ${FIRST_RUNS} runs and the live ones, counts per status, snapshot, HTML) | ${firstPageMs.toFixed(1)} ms | < ${TARGET_FIRST_PAGE_MS} ms | ${verdict(firstPageMs < TARGET_FIRST_PAGE_MS)} |`,
    `| baseline, same run: first \`GET /\` cold reading all ${HISTORY.toLocaleString('en')} runs into the read model at once (as before) | ${wholePageMs.toFixed(0)} ms | | ${(wholePageMs / firstPageMs).toFixed(0)}× the paged first page |`,
    `| the rest of history filling in after the first page: ${fillSteps.length} turns of ${FILL_RUNS.toLocaleString('en')} runs, total / longest turn | ${fillTotalMs.toFixed(0)} ms / ${fillMaxMs.toFixed(0)} ms | | |`,
    `| next \`GET /\` | ${nextPageMs.toFixed(1)} ms | | |`,
    `| \`/api/dashboard/runs\` page 501 of 1,000 (median of 5) | ${median(runsPageMs).toFixed(1)} ms | | |`,
    `| spawn → its live message serialized (median of 20) | ${live.toFixed(2)} ms | < ${TARGET_LIVE_MS} ms | ${verdict(live < TARGET_LIVE_MS)} |`,
    '',
    `CPU per 1,000 transitions, measured over ${TRANSITIONS.toLocaleString('en')} (${TRANSITIONS / 4} runs: admitted, started, ended, delivered), median of ${ROUNDS} alternating rounds (none: ${none.map((x) => x.toFixed(0)).join(', ')} ms; one: ${one.map((x) => x.toFixed(0)).join(', ')} ms):`,
    '',
    '| dashboard | CPU ms per 1,000 transitions | ratio |',
    '|---|---:|---:|',
    `| none (not activated) | ${cpuNone.toFixed(0)} | 1.00 |`,
    `| one live-feed client | ${cpuOne.toFixed(0)} | ${ratio.toFixed(2)} |`,
    '',
    `Goal (one client costs at most ${TARGET_CPU_RATIO}× the gateway alone): ${verdict(ratio <= TARGET_CPU_RATIO)} (${ratio.toFixed(2)}×).`,
    '',
    'Not measured here: the browser side (first paint and the socket hop). The browser tests see a CLI-spawned run appear live and complete without a reload; their timings include process starts and are not a benchmark.',
    '',
  ];
  const text = lines.join('\n');
  console.log(text);
  writeFileSync(join(import.meta.dirname, 'results', 'dashboard.md'), text);
  dashboard.close();
  await w.gateway.close();
  w.store.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
