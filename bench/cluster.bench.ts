/**
 * bench/cluster: cluster mode (issue 18) beside single-host SQLite mode, in one run on one machine.
 *
 * 1. Admission latency (one spawn at a time, HTTP `POST /api/spawn` to its answer) and throughput (runs/s:
 *    N simulator runs admitted 8 at a time, until the last completion event is read) for single-host SQLite
 *    and for clusters of 1, 2 and 3 gateways on one Redis. Every gateway has host cap 4; the cluster's
 *    provider cap is 4 × gateways, so more gateways may run more at once. On one 2-core machine more
 *    gateways share the same cores, so the throughput column shows the coordination cost, not a speed-up.
 * 2. Time from a gateway's SIGKILL to its runs being declared `lost` on their origin, against the target
 *    of 2 × `cluster.stalled_interval_ms`.
 *
 * Every gateway is a real `crew serve` (from source through tsx) with its own CREW_HOME; the runs are the
 * simulator as a shared runtime (one process per gateway), `#sim sleep=0ms`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { type RedisServer, startRedisServer } from '../test/helpers/redis-server.js';

const root = join(import.meta.dirname, '..');
const RUNS = Number(process.env.BENCH_RUNS ?? 120);
const LATENCY_SAMPLES = Number(process.env.BENCH_LATENCY_SAMPLES ?? 40);
const HOST_CAP = 4;
const STALLED_MS = Number(process.env.BENCH_STALLED_MS ?? 2000);
const KILL_ROUNDS = Number(process.env.BENCH_KILL_ROUNDS ?? 3);
const SIM = {
  runner: 'acp',
  command: [process.execPath, '--import', 'tsx', join(root, 'src/sim/main.ts')],
  shared: true,
};

interface Daemon {
  proc: ChildProcess;
  url: string;
  token: string;
  home: string;
}

async function startDaemon(config: Record<string, unknown>, home?: string): Promise<Daemon> {
  const dir = home ?? mkdtempSync(join(tmpdir(), 'crew-bench-cluster-'));
  writeFileSync(
    join(dir, 'config.json'),
    JSON.stringify({
      'agent.spawn_min_memory_gb': 0,
      'agent.subagent_spawn_stagger_secs': 0,
      'agent.max_subagents': HOST_CAP,
      'agent.subagent_max_queued': 10_000,
      'agents.ssim': SIM,
      'agent.default_agent': 'ssim',
      ...config,
    }),
  );
  rmSync(join(dir, 'gateway.json'), { force: true });
  const proc = spawn(
    process.execPath,
    ['--import', 'tsx', join(root, 'src/cli/main.ts'), 'serve', '--port', '0'],
    {
      env: { ...process.env, CREW_HOME: dir },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let err = '';
  proc.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const file = JSON.parse(readFileSync(join(dir, 'gateway.json'), 'utf8')) as { url: string };
      const token = readFileSync(join(dir, 'token'), 'utf8').trim();
      return { proc, url: file.url, token, home: dir };
    } catch {
      if (Date.now() > deadline || proc.exitCode !== null)
        throw new Error(`crew serve did not start: ${err}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

async function stop(d: Daemon, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (d.proc.exitCode !== null || d.proc.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    d.proc.once('exit', () => resolve());
    d.proc.kill(signal);
  });
}

async function call(
  d: Daemon,
  method: string,
  path: string,
  body?: unknown,
): Promise<Record<string, unknown>> {
  const response = await fetch(`${d.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${d.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return (await response.json()) as Record<string, unknown>;
}

async function spawnRun(d: Daemon, parent: string, task: string): Promise<string> {
  const answer = (await call(d, 'POST', '/api/spawn', { parent, args: { task } })) as {
    ok: boolean;
    runs?: { id: string }[];
    refusal?: unknown;
  };
  if (!answer.ok) throw new Error(`spawn refused: ${JSON.stringify(answer.refusal)}`);
  return answer.runs![0]!.id;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? Number.NaN;
}

interface Row {
  mode: string;
  p50: number;
  p95: number;
  runsPerSec: number;
}

/** Latency (sequential spawns) and throughput (RUNS runs, 8 admissions in flight) over `gateways`. */
async function measure(mode: string, gateways: Daemon[]): Promise<Row> {
  const latencies: number[] = [];
  const parentOf = (i: number) => `cli:bench-${mode}-${i}`;
  const latencyIds = new Map<number, string[]>();
  for (let k = 0; k < LATENCY_SAMPLES; k++) {
    const i = k % gateways.length;
    const started = performance.now();
    const id = await spawnRun(gateways[i]!, parentOf(i), `#sim sleep=0ms latency ${k}`);
    latencies.push(performance.now() - started);
    latencyIds.set(i, [...(latencyIds.get(i) ?? []), id]);
  }
  await drainEvents(gateways, parentOf, latencyIds);

  const ids = new Map<number, string[]>();
  const begin = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < RUNS) {
        const k = next++;
        const i = k % gateways.length;
        const id = await spawnRun(gateways[i]!, parentOf(i), `#sim sleep=0ms bytes=64 run ${k}`);
        ids.set(i, [...(ids.get(i) ?? []), id]);
      }
    }),
  );
  await drainEvents(gateways, parentOf, ids);
  const seconds = (performance.now() - begin) / 1000;
  return {
    mode,
    p50: percentile(latencies, 0.5),
    p95: percentile(latencies, 0.95),
    runsPerSec: RUNS / seconds,
  };
}

/** Reads each parent's events until every one of its runs was announced. */
async function drainEvents(
  gateways: Daemon[],
  parentOf: (i: number) => string,
  ids: Map<number, string[]>,
): Promise<void> {
  await Promise.all(
    gateways.map(async (g, i) => {
      const wanted = new Set(ids.get(i) ?? []);
      const deadline = Date.now() + 300_000;
      while (wanted.size > 0) {
        if (Date.now() > deadline) throw new Error(`${wanted.size} runs never reported on gateway ${i}`);
        const answer = (await call(
          g,
          'GET',
          `/api/events?parent=${encodeURIComponent(parentOf(i))}&timeout_secs=5`,
        )) as {
          events: { run_ids: string[] }[];
        };
        for (const e of answer.events) for (const id of e.run_ids) wanted.delete(id);
      }
    }),
  );
}

function clusterConfig(
  redis: RedisServer,
  name: string,
  i: number,
  providerCap: number,
): Record<string, unknown> {
  return {
    'cluster.redis_url': redis.url,
    'cluster.name': name,
    'cluster.gateway_name': `g${i}`,
    'cluster.host_cap': HOST_CAP,
    'cluster.provider_cap': providerCap,
    'cluster.stalled_interval_ms': STALLED_MS,
  };
}

/**
 * Kill one of two gateways while it holds runs of the other's parent: ms until the origin says `lost`, and
 * how each victim was found (its lost claim's value: `<gateway> silent` for Crew's failure detector,
 * `<gateway> stalled` for BullMQ's stalled check).
 */
async function timeToLost(redis: RedisServer, round: number): Promise<{ ms: number; findings: string[] }> {
  const name = `kill${round}`;
  const gateways = [
    await startDaemon(clusterConfig(redis, name, 0, 2 * HOST_CAP)),
    await startDaemon(clusterConfig(redis, name, 1, 2 * HOST_CAP)),
  ];
  const client = new Redis(redis.url);
  try {
    const ids: string[] = [];
    for (let k = 0; k < 2 * HOST_CAP; k++)
      ids.push(await spawnRun(gateways[0]!, 'cli:kill', `#sim sleep=60000ms ${k}`));
    // Wait until g1 holds runs (BullMQ's `pb` names the worker).
    let victims: string[] = [];
    for (const deadline = Date.now() + 30_000; victims.length === 0 && Date.now() < deadline; ) {
      victims = [];
      for (const id of await client.lrange(`crew:${name}:active`, 0, -1))
        if ((await client.hget(`crew:${name}:${id}`, 'pb')) === 'g1') victims.push(id);
      const statuses = await statusesOn(gateways[0]!, victims);
      if (!statuses.every((s) => s === 'running')) victims = [];
      await new Promise((r) => setTimeout(r, 50));
    }
    if (victims.length === 0) throw new Error('g1 never held a run');
    const killedAt = performance.now();
    await stop(gateways[1]!, 'SIGKILL');
    for (;;) {
      const statuses = await statusesOn(gateways[0]!, victims);
      if (statuses.every((s) => s === 'lost')) {
        const ms = performance.now() - killedAt;
        const findings: string[] = [];
        for (const id of victims) findings.push((await client.get(`crew:${name}:lost:${id}`)) ?? '?');
        return { ms, findings };
      }
      if (performance.now() - killedAt > 20 * STALLED_MS)
        throw new Error(`not lost after ${20 * STALLED_MS} ms`);
      await new Promise((r) => setTimeout(r, 25));
    }
  } finally {
    client.disconnect();
    for (const g of gateways) {
      await stop(g, 'SIGKILL');
      rmSync(g.home, { recursive: true, force: true });
    }
  }
}

async function main(): Promise<void> {
  const loadAtStart = loadavg();
  const redis = await startRedisServer();
  const rows: Row[] = [];
  const lost: number[] = [];
  /** Victims by who reported them: `silent` (the failure detector) or `stalled` (BullMQ's check). */
  const foundBy = new Map<string, number>();
  try {
    // Single host, SQLite, no Redis.
    const single = await startDaemon({});
    try {
      rows.push(await measure('single-host SQLite', [single]));
    } finally {
      await stop(single);
      rmSync(single.home, { recursive: true, force: true });
    }
    for (const n of [1, 2, 3]) {
      const name = `bench${n}`;
      const gateways = await Promise.all(
        Array.from({ length: n }, (_, i) => startDaemon(clusterConfig(redis, name, i, n * HOST_CAP))),
      );
      try {
        rows.push(await measure(`cluster, ${n} gateway${n > 1 ? 's' : ''}`, gateways));
      } finally {
        for (const g of gateways) {
          await stop(g);
          rmSync(g.home, { recursive: true, force: true });
        }
      }
    }
    for (let round = 0; round < KILL_ROUNDS; round++) {
      const { ms, findings } = await timeToLost(redis, round);
      lost.push(ms);
      for (const finding of findings) {
        const how = finding.split(' ')[1] ?? '?';
        foundBy.set(how, (foundBy.get(how) ?? 0) + 1);
      }
    }
  } finally {
    await redis.close();
  }

  const base = rows[0]!;
  const table = [
    '| mode | admission p50 (ms) | admission p95 (ms) | runs/s | runs/s vs single host |',
    '|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.mode} | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} | ${r.runsPerSec.toFixed(1)} | ${(r.runsPerSec / base.runsPerSec).toFixed(2)}× |`,
    ),
  ].join('\n');
  const worstLost = Math.max(...lost);
  const target = 2 * STALLED_MS;
  const lostLine = `SIGKILL → lost on the origin: ${lost.map((ms) => `${ms.toFixed(0)} ms`).join(', ')} (worst ${worstLost.toFixed(0)} ms; target ≤ 2 × ${STALLED_MS} = ${target} ms: **${worstLost <= target ? 'met' : 'missed'}**); victims reported by the failure detector ${foundBy.get('silent') ?? 0}, by BullMQ's stalled check ${foundBy.get('stalled') ?? 0}`;
  const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
  const machine = `${availableParallelism()} CPUs, load ${load(loadAtStart)} at the start, ${load(loadavg())} at the end; ${RUNS} runs per mode, ${LATENCY_SAMPLES} latency samples`;
  console.log(`${table}\n\n${lostLine}\n${machine}`);
  writeFileSync(
    join(root, 'bench/results/cluster.md'),
    [
      '# bench/cluster',
      '',
      `${machine}.`,
      '',
      table,
      '',
      lostLine,
      '',
      '## Goals (issue 18)',
      '',
      `- Admission latency and runs/s for 1, 2 and 3 gateways beside single-host SQLite, side by side: **met** (measured above; cluster admission p50 ${rows
        .slice(1)
        .map((r) => r.p50.toFixed(1))
        .join(' / ')} ms against ${base.p50.toFixed(1)} ms on one host).`,
      `- A dead gateway's runs declared lost within 2 × the stalled interval (${target} ms): **${worstLost <= target ? 'met' : 'missed'}** (worst of ${lost.length}: ${worstLost.toFixed(0)} ms).`,
      '',
    ].join('\n'),
  );
}

await main();

/**
 * The runs' statuses from the list, not spawn_status: a run executing on a gateway that died has its
 * transcript there, so its status call would wait for that gateway and answer not_here.
 */
async function statusesOn(g: Daemon, ids: readonly string[]): Promise<(string | undefined)[]> {
  const runs = (await call(g, 'GET', '/api/runs?limit=100000')).runs as { id: string; status: string }[];
  return ids.map((id) => runs.find((r) => r.id === id)?.status);
}
