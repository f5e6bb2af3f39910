import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import { api, type DaemonProcess, startDaemonProcess } from '../test/helpers/daemon-process.js';
import { startRedisServer } from '../test/helpers/redis-server.js';
import { bundledCommand } from '../test/helpers/test-bundle.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 120);
const PROFILE_DIR = process.env.CREW_PROFILE_DIR;
const FROM_SOURCE = process.env.BENCH_FROM_SOURCE === '1';
/** bench/cluster.bench.ts runs its gateways at a 2000 ms stalled interval; the default is 30 s. */
const STALLED_MS = Number(process.env.BENCH_STALLED_MS ?? 30_000);
const AGENT = {
  'agents.ssim': { runner: 'acp', command: bundledCommand('sim/main'), shared: true },
  'agent.default_agent': 'ssim',
  'agent.subagent_max_queued': 10_000,
  'agent.max_subagents': 4,
};

async function throughput(g: DaemonProcess, parent: string): Promise<number> {
  const ids = new Set<string>();
  const begin = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < RUNS) {
        const k = next++;
        const answer = (
          await api(g, 'POST', '/api/spawn', { parent, args: { task: `#sim sleep=0ms bytes=64 run ${k}` } })
        ).body as { ok: boolean; runs?: { id: string }[] };
        if (!answer.ok) throw new Error(`refused: ${JSON.stringify(answer)}`);
        ids.add(answer.runs![0]!.id);
      }
    }),
  );
  while (ids.size > 0) {
    const answer = (await api(g, 'GET', `/api/events?parent=${encodeURIComponent(parent)}&timeout_secs=5`))
      .body as {
      events: { run_ids: string[] }[];
    };
    for (const e of answer.events) for (const id of e.run_ids) ids.delete(id);
  }
  return RUNS / ((performance.now() - begin) / 1000);
}

interface Timeline {
  id: string;
  admitted: number;
  taken: number;
  launched: number;
  started: number;
  copyEnded: number;
  proxyEnded: number;
}

function timelines(home: string): Timeline[] {
  const db = new Database(join(home, 'crew.db'), { readonly: true, fileMustExist: true });
  try {
    const runs = new Map<string, Record<string, number>>();
    for (const row of db.prepare('SELECT record FROM runs').all() as { record: string }[]) {
      const run = JSON.parse(row.record) as Record<string, number> & { id: string };
      runs.set(run.id, run);
    }
    const out: Timeline[] = [];
    for (const [id, copy] of runs) {
      if (!id.startsWith('x')) continue;
      const proxy = runs.get(id.slice(1));
      if (!proxy) continue;
      out.push({
        id: id.slice(1),
        admitted: proxy.createdAt!,
        taken: copy.createdAt!,
        launched: copy.launchedAt!,
        started: copy.startedAt!,
        copyEnded: copy.endedAt!,
        proxyEnded: proxy.endedAt!,
      });
    }
    return out;
  } finally {
    db.close();
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

/** The top self-time functions of the newest profile in `dir` whose process was the gateway. */
function topFunctions(dir: string, count: number): string[] {
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  let best: { total: number; lines: string[] } | undefined;
  for (const file of files) {
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as {
      nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
      samples: number[];
      timeDeltas: number[];
    };
    const byNode = new Map<number, number>();
    for (const [i, id] of profile.samples.entries())
      byNode.set(id, (byNode.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
    const byFunction = new Map<string, number>();
    let total = 0;
    for (const node of profile.nodes) {
      const us = byNode.get(node.id) ?? 0;
      total += us;
      const where = node.callFrame.url.replace(/^.*\/(node_modules|\.test-bundle)\//, '$1/');
      const key = `${node.callFrame.functionName || '(anonymous)'} ${where}:${node.callFrame.lineNumber}`;
      byFunction.set(key, (byFunction.get(key) ?? 0) + us);
    }
    if (!profile.nodes.some((n) => n.callFrame.url.includes('cli/main'))) continue;
    // Self time by where the code lives: a package, Crew's bundle, Node's internals or native work.
    const byPlace = new Map<string, number>();
    for (const node of profile.nodes) {
      const us = byNode.get(node.id) ?? 0;
      const { url, functionName } = node.callFrame;
      const place = url.includes('node_modules/')
        ? (/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1] ?? 'node_modules')
        : url.includes('.test-bundle')
          ? 'crew'
          : url.startsWith('node:')
            ? 'node internals'
            : url === ''
              ? `native ${functionName.startsWith('(') ? functionName : '(fs, net, crypto ...)'}`
              : url;
      byPlace.set(place, (byPlace.get(place) ?? 0) + us);
    }
    const busy = total - (byPlace.get('native (idle)') ?? 0);
    const places = [...byPlace]
      .filter(([place]) => place !== 'native (idle)')
      .sort((a, b) => b[1] - a[1])
      .slice(0, 12)
      .map(([place, us]) => `${((100 * us) / busy).toFixed(1).padStart(5)}% of busy  ${place}`);
    const lines = [...byFunction]
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(([key, us]) => `${((100 * us) / total).toFixed(1).padStart(5)}%  ${key}`);
    if (!best || total > best.total)
      best = {
        total,
        lines: [
          `total ${(total / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s busy`,
          ...places,
          ...lines,
        ],
      };
  }
  return best?.lines ?? [];
}

/**
 * `crew serve` from the test bundle, with `--cpu-prof` when `profileDir` is set (Node refuses that flag in
 * NODE_OPTIONS).
 */
function startGateway(
  config: Record<string, unknown>,
  profileDir: string | undefined,
): Promise<DaemonProcess> {
  const flags = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  // BENCH_FROM_SOURCE=1 starts it as bench/cluster.bench.ts does: from source through tsx.
  const [node, ...cli] = FROM_SOURCE
    ? [process.execPath, '--import', 'tsx', join(import.meta.dirname, '..', 'src/cli/main.ts')]
    : bundledCommand('cli/main');
  return startDaemonProcess({
    home: mkdtempSync(join(tmpdir(), 'crew-cluster-profile-')),
    config,
    crew: [node as string, ...flags, ...cli],
  });
}

/** User + system CPU of a process so far, ms (Linux `/proc`, 100 ticks a second). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Redis's own CPU so far, ms (`INFO cpu`), read on a connection of its own. */
async function redisCpuMs(client: Redis): Promise<number> {
  try {
    const info = await client.info('cpu');
    const value = (key: string) => Number(new RegExp(`${key}:([0-9.]+)`).exec(info)?.[1] ?? 0);
    return (value('used_cpu_user') + value('used_cpu_sys')) * 1000;
  } finally {
    client.disconnect();
  }
}

function monitorless(url: string): Redis {
  return new Redis(url);
}

async function main(): Promise<void> {
  const redis = await startRedisServer();
  const cluster = await startGateway(
    {
      ...AGENT,
      'cluster.redis_url': redis.url,
      'cluster.name': 'prof',
      'cluster.gateway_name': 'g0',
      'cluster.host_cap': 4,
      'cluster.provider_cap': 4,
      'cluster.stalled_interval_ms': STALLED_MS,
    },
    PROFILE_DIR,
  );
  const monitor = new Redis(redis.url);
  const commands = new Map<string, number>();
  const scripts = new Map<string, string>(); // sha → the key names of its first call, for reading
  let counting = false;
  let luaCommands = 0;
  const feed = await monitor.monitor();
  feed.on('monitor', (_time: string, args: string[], source: string) => {
    if (!counting) return;
    // Commands a script runs show as `lua`: they cost no round trip of their own.
    if (source === 'lua') {
      luaCommands++;
      return;
    }
    let name = (args[0] ?? '?').toLowerCase();
    if (name === 'evalsha' || name === 'eval') {
      const sha = name === 'evalsha' ? (args[1] ?? '?').slice(0, 8) : 'inline';
      const keys = Number(args[2] ?? 0);
      if (!scripts.has(sha)) scripts.set(sha, args.slice(3, 3 + Math.min(keys, 3)).join(' '));
      name = `${name} ${sha}`;
    }
    commands.set(name, (commands.get(name) ?? 0) + 1);
  });
  // Warm the runtime and the BullMQ scripts, then count.
  await throughput(cluster, 'cli:warm').catch((error: unknown) => {
    console.log(cluster.stderr().slice(-2000));
    throw error;
  });
  const warmed = new Set(timelines(cluster.home).map((t) => t.admitted));
  counting = true;
  const load0 = loadavg();
  const [cpu0, redis0] = [cpuMs(cluster.proc.pid!), await redisCpuMs(monitorless(redis.url))];
  const clusterRate = await throughput(cluster, 'cli:prof');
  const [cpu1, redis1] = [cpuMs(cluster.proc.pid!), await redisCpuMs(monitorless(redis.url))];
  counting = false;
  const lines = timelines(cluster.home).filter((t) => !warmed.has(t.admitted));
  // How long each job held its worker slot (BullMQ's processedOn → finishedOn), beside its copy's span.
  const jobs = new Redis(redis.url);
  const slots: { slot: number; copy: number; fromTaken: number; toFinished: number }[] = [];
  for (const t of lines) {
    const [processedOn, finishedOn] = await jobs.hmget(`crew:prof:${t.id}`, 'processedOn', 'finishedOn');
    if (!processedOn || !finishedOn) continue;
    slots.push({
      slot: Number(finishedOn) - Number(processedOn),
      copy: t.copyEnded - t.taken,
      fromTaken: t.taken - Number(processedOn),
      toFinished: Number(finishedOn) - t.copyEnded,
    });
  }
  jobs.disconnect();
  await cluster.stop('SIGTERM');
  feed.disconnect();
  monitor.disconnect();
  await redis.close();

  const single = await startGateway(AGENT, PROFILE_DIR && join(PROFILE_DIR, 'single'));
  await throughput(single, 'cli:warm');
  const single0 = cpuMs(single.proc.pid!);
  const singleRate = await throughput(single, 'cli:prof');
  const single1 = cpuMs(single.proc.pid!);
  await single.stop('SIGTERM');
  single.cleanup();

  console.log(
    `load ${load0.map((l) => l.toFixed(2)).join(' ')} at start, ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} at end`,
  );
  console.log(
    `runs/s: cluster of 1 ${clusterRate.toFixed(1)}, single host ${singleRate.toFixed(1)} (${(clusterRate / singleRate).toFixed(2)}×)`,
  );
  console.log(
    `gateway CPU per run: cluster ${((cpu1 - cpu0) / RUNS).toFixed(2)} ms, single host ${((single1 - single0) / RUNS).toFixed(2)} ms; Redis CPU per run ${((redis1 - redis0) / RUNS).toFixed(2)} ms`,
  );
  const total = [...commands.values()].reduce((a, b) => a + b, 0);
  console.log(
    `Redis round trips per run: ${(total / RUNS).toFixed(1)} (and ${(luaCommands / RUNS).toFixed(1)} commands inside scripts)`,
  );
  for (const [name, n] of [...commands].sort((a, b) => b[1] - a[1])) {
    const sha = name.split(' ')[1];
    console.log(
      `  ${(n / RUNS).toFixed(2).padStart(6)}  ${name}${sha && scripts.has(sha) ? `  (${scripts.get(sha)})` : ''}`,
    );
  }
  const phase = (f: (t: Timeline) => number) => median(lines.map(f)).toFixed(1);
  console.log(`per run, median ms over ${lines.length} runs:`);
  console.log(`  admitted → taken by the worker   ${phase((t) => t.taken - t.admitted)}`);
  console.log(`  taken → launched                 ${phase((t) => t.launched - t.taken)}`);
  console.log(`  launched → started               ${phase((t) => t.started - t.launched)}`);
  console.log(`  started → copy ended             ${phase((t) => t.copyEnded - t.started)}`);
  console.log(`  copy ended → proxy ended         ${phase((t) => t.proxyEnded - t.copyEnded)}`);
  console.log(`  admitted → proxy ended           ${phase((t) => t.proxyEnded - t.admitted)}`);
  const slotMs = (f: (s: (typeof slots)[0]) => number) => median(slots.map(f)).toFixed(1);
  console.log(`worker slot per job, median ms over ${slots.length} jobs: held ${slotMs((x) => x.slot)}`);
  console.log(`  fetched → copy admitted (the 'started' message first)   ${slotMs((x) => x.fromTaken)}`);
  console.log(`  copy admitted → copy ended                             ${slotMs((x) => x.copy)}`);
  console.log(`  copy ended → job finished (clean completion, BullMQ)   ${slotMs((x) => x.toFinished)}`);
  if (PROFILE_DIR) {
    console.log('the cluster gateway, its whole life (start, warm-up and measured runs):');
    for (const line of topFunctions(PROFILE_DIR, 25)) console.log(line);
    console.log('the single-host gateway, the same:');
    for (const line of topFunctions(join(PROFILE_DIR, 'single'), 25)) console.log(line);
  }
  cluster.cleanup();
}

await main();
