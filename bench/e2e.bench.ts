/**
 * bench/e2e: what an instant run costs end to end (issue 32 §4). A real `crew serve` process (the test
 * bundle, plain node; real HTTP and MCP, a real `crew.db`, file transcripts, the host's containment) runs a
 * command agent whose command is `true`, against Node's own `child_process.spawn('true')` under
 * `p-limit(8)` in a bare Node process of its own (bench/e2e-floor.mjs; forking from this benchmark's
 * process, loaded with tsx and the MCP client, would make the floor slower than Crew): the floor. Both sides run interleaved in the same rounds, so load from the
 * rest of the host touches both alike; the verdicts are ratios and differences within one round.
 *
 * - Wave: 1,000 tasks in one `spawn_run` at cap 8, call to the wave's digest through `spawn_wait`; the
 *   floor spawns 1,000 `true` eight at a time, each until its `close` (exit and pipes drained).
 * - Singles: one `spawn_run` of one task, then `spawn_wait` for its event, one after another; the floor
 *   spawns one `true` after another.
 * - The daemon's CPU per run: its utime + stime (every thread) over the wave, from `/proc/<pid>/stat`.
 * - Two daemons side by side: the default one (`host.spawner: auto`, which starts runs from the native
 *   helper once it is built: checked, not assumed, by the helper process's executable) and one on the Node
 *   helper (`host.spawner: node`), so the native helper's share of the result is measured in the same run.
 */
import { type ChildProcess, spawnSync, spawn as startProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { readGatewayFile } from '../src/daemon/daemon-address.js';
import { buildTestBundle } from '../test/global-setup/build-test-bundle.js';
import { bundledCommand } from '../test/helpers/test-bundle.js';

process.removeAllListeners('warning');
process.on('warning', (warning) => {
  if (warning.name !== 'MaxListenersExceededWarning') console.warn(warning);
});

const CAP = 8;
const WAVE = Number(process.env.BENCH_WAVE ?? 1000);
const SINGLES = Number(process.env.BENCH_SINGLES ?? 100);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** The goal: what a run costs beyond the floor's spawn, per run of a wave. */
const WAVE_OVERHEAD_TARGET_MS = 0.5;
const CLK_TCK = 100;

interface Body {
  ok: boolean;
  runs?: { id: string; status: string }[];
  events?: { run_ids: string[]; kind: string }[];
  refusal?: { code: string; message: string };
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Body> {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
  const body = (result.structuredContent ?? { ok: !result.isError }) as Body;
  if (!body.ok) throw new Error(`${name} refused: ${body.refusal?.message}`);
  return body;
}

/** A floor's process: answers "wave N" / "singles N" with the ms and CPU ms it took. */
function startFloor(
  command: string,
  args: string[],
): {
  ask: (line: string) => Promise<{ ms: number; cpuMs: number }>;
  close: () => void;
} {
  const proc = startProcess(command, [...args, String(CAP)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const answers = createInterface({ input: proc.stdout as NodeJS.ReadableStream })[Symbol.asyncIterator]();
  return {
    ask: async (line) => {
      proc.stdin?.write(`${line}\n`);
      const next = await answers.next();
      if (next.done) throw new Error('the floor process exited');
      return JSON.parse(next.value as string) as { ms: number; cpuMs: number };
    },
    close: () => proc.stdin?.end(),
  };
}
const floor = startFloor(process.execPath, [join(import.meta.dirname, 'e2e-floor.mjs')]);
const floorWave = async (count: number) => (await floor.ask(`wave ${count}`)).ms;
const floorSingles = async (count: number) => (await floor.ask(`singles ${count}`)).ms;

/**
 * The native floor, for reference (no goal is judged on it): bench/e2e-floor.c, `posix_spawn` from a C
 * program, built with the host's cc; undefined where there is none.
 */
const nativeFloorDir = mkdtempSync(join(tmpdir(), 'crew-bench-floor-'));
function startNativeFloor(): ReturnType<typeof startFloor> | undefined {
  const binary = join(nativeFloorDir, 'e2e-floor');
  const built = spawnSync('cc', ['-O2', '-o', binary, join(import.meta.dirname, 'e2e-floor.c')], {
    stdio: 'inherit',
  });
  return built.status === 0 ? startFloor(binary, []) : undefined;
}
const nativeFloor = startNativeFloor();

/** Waits through `spawn_wait` until events for every id in `ids` have come. */
async function waitForAll(client: Client, ids: string[]): Promise<void> {
  const left = new Set(ids);
  while (left.size > 0) {
    const body = await call(client, 'spawn_wait', { timeout_secs: 50 });
    for (const event of body.events ?? []) for (const id of event.run_ids) left.delete(id);
  }
}

async function crewWave(client: Client, count: number): Promise<number> {
  const tasks = Array.from({ length: count }, (_, i) => `instant ${i}`);
  const t0 = performance.now();
  const body = await call(client, 'spawn_run', { tasks, agent: 'instant' });
  await waitForAll(
    client,
    (body.runs ?? []).map((r) => r.id),
  );
  return performance.now() - t0;
}

async function crewSingles(client: Client, count: number): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < count; i++) {
    const body = await call(client, 'spawn_run', { task: `single ${i}`, agent: 'instant' });
    await waitForAll(
      client,
      (body.runs ?? []).map((r) => r.id),
    );
  }
  return performance.now() - t0;
}

/** utime + stime of every thread of `pid`, in ms. */
function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
}

async function sleep(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

async function startServe(home: string): Promise<{ proc: ChildProcess; url: string; token: string }> {
  const [node, ...args] = bundledCommand('cli/main', 'serve', '--port', '0') as [string, ...string[]];
  const proc = startProcess(node, args, {
    env: { ...process.env, CREW_HOME: home },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  proc.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    const file = readGatewayFile(home);
    if (file) return { proc, url: file.url, token: readFileSync(join(home, 'token'), 'utf8').trim() };
    if (proc.exitCode !== null) throw new Error(`crew serve exited: ${err}`);
    if (Date.now() > deadline) throw new Error(`crew serve did not start: ${err}`);
    await sleep(5);
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

await buildTestBundle();
const loadAtStart = loadavg().map((l) => l.toFixed(2));

interface Side {
  label: string;
  home: string;
  serve: { proc: ChildProcess; url: string; token: string };
  client: Client;
}

async function startSide(label: string, spawner: 'auto' | 'node'): Promise<Side> {
  const home = mkdtempSync(join(tmpdir(), 'crew-bench-e2e-'));
  writeFileSync(
    join(home, 'config.json'),
    JSON.stringify({
      'agent.max_subagents': CAP,
      'agent.spawn_min_memory_gb': 0,
      'agent.subagent_spawn_stagger_secs': 0,
      'agent.subagent_max_queued_wave_members': WAVE,
      'host.spawner': spawner,
      'agents.instant': { runner: 'command', command: ['true'], description: 'exits at once' },
    }),
  );
  const serve = await startServe(home);
  const client = new Client({ name: 'bench-e2e', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${serve.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${serve.token}` } },
    }),
  );
  await client.listTools();
  return { label, home, serve, client };
}

/** The executable of the daemon's helper that starts runs (its one child that is not a run). */
function helperExe(daemonPid: number): string {
  for (const task of readdirSync(`/proc/${daemonPid}/task`)) {
    const children = readFileSync(`/proc/${daemonPid}/task/${task}/children`, 'utf8').trim().split(' ');
    for (const child of children.filter(Boolean)) {
      try {
        const exe = readlinkSync(`/proc/${child}/exe`);
        if (exe.includes('crew-spawner-')) return 'native';
        const cmdline = readFileSync(`/proc/${child}/cmdline`, 'utf8');
        if (cmdline.includes('-e')) return 'node';
      } catch {}
    }
  }
  return 'none found';
}

const sides: Side[] = [];
let lines: string[] = [];
try {
  sides.push(await startSide('crew', 'auto'), await startSide('crew, Node helper', 'node'));
  // Warm every side: the daemons' first spawns (and the native helper's build), the floor's first forks,
  // the JIT of all.
  for (const side of sides) await crewWave(side.client, 100);
  await floorWave(100);
  for (const side of sides) await crewSingles(side.client, 20);
  await floorSingles(20);
  await nativeFloor?.ask('wave 100');
  // The default daemon must be on the native helper by now (its build ran at start, and a Node helper
  // holding no run gives way); the other on Node's.
  const helpers = sides.map((side) => helperExe(side.serve.proc.pid as number));
  if (helpers[0] !== 'native' || helpers[1] !== 'node')
    throw new Error(`the daemons' helpers are ${helpers.join(' and ')}, not native and node`);

  interface Round {
    nativeWave?: number;
    nativeSingles?: number;
    floorWave: number;
    floorSingles: number;
    floorCpuPerRun: number;
    wave: number[];
    singles: number[];
    daemonCpuPerRun: number[];
  }
  const rounds: Round[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const round: Round = {
      floorWave: 0,
      floorSingles: 0,
      floorCpuPerRun: 0,
      wave: [],
      singles: [],
      daemonCpuPerRun: [],
    };
    // Rotate which side goes first, so none always meets another's aftermath (the native floor, for
    // reference only, runs last).
    const order = [-1, 0, 1];
    for (let k = 0; k < r % order.length; k++) order.push(order.shift() as number);
    for (const who of order) {
      if (who < 0) {
        const answer = await floor.ask(`wave ${WAVE}`);
        round.floorWave = answer.ms;
        round.floorCpuPerRun = answer.cpuMs / WAVE;
        continue;
      }
      const side = sides[who] as Side;
      const c0 = cpuMsOf(side.serve.proc.pid as number);
      round.wave[who] = await crewWave(side.client, WAVE);
      round.daemonCpuPerRun[who] = (cpuMsOf(side.serve.proc.pid as number) - c0) / WAVE;
    }
    for (const who of order) {
      if (who < 0) round.floorSingles = await floorSingles(SINGLES);
      else round.singles[who] = await crewSingles((sides[who] as Side).client, SINGLES);
    }
    if (nativeFloor) {
      round.nativeWave = (await nativeFloor.ask(`wave ${WAVE}`)).ms;
      round.nativeSingles = (await nativeFloor.ask(`singles ${SINGLES}`)).ms;
    }
    rounds.push(round);
    console.log(
      `round ${r + 1}: wave floor ${round.floorWave.toFixed(0)} ms, crew ${round.wave.map((x) => x.toFixed(0)).join(' / ')} ms; singles floor ${round.floorSingles.toFixed(0)} ms, crew ${round.singles.map((x) => x.toFixed(0)).join(' / ')} ms; daemon CPU ${round.daemonCpuPerRun.map((x) => x.toFixed(2)).join(' / ')} ms/run`,
    );
  }
  const loadAtEnd = loadavg().map((l) => l.toFixed(2));
  const perRun = (ms: number, n: number) => ms / n;
  const waveOverheadsOf = (who: number) =>
    rounds.map((x) => perRun((x.wave[who] as number) - x.floorWave, WAVE));
  const waveRatiosOf = (who: number) => rounds.map((x) => (x.wave[who] as number) / x.floorWave);
  const singleOverheadsOf = (who: number) =>
    rounds.map((x) => perRun((x.singles[who] as number) - x.floorSingles, SINGLES));
  const singleRatiosOf = (who: number) => rounds.map((x) => (x.singles[who] as number) / x.floorSingles);
  const waveOverheads = waveOverheadsOf(0);
  const waveRatios = waveRatiosOf(0);
  const singleOverheads = singleOverheadsOf(0);
  const singleRatios = singleRatiosOf(0);
  const waveOverhead = median(waveOverheads);
  // On a host too loaded to measure, concurrent forks queue behind each other and the floor's wave runs
  // slower per run than its serial spawns: no verdict is honest then.
  const floorWavePerRun = median(rounds.map((x) => x.floorWave)) / WAVE;
  const floorSinglePerRun = median(rounds.map((x) => x.floorSingles)) / SINGLES;
  // Nor is it when the host runs more than it has CPUs for: every process hop of Crew's path (client,
  // daemon, spawner, the run) then waits its turn, and the floor's spawns queue too (at load 28 on 2 CPUs
  // the floor's wave took 101 ms per `true`, 50× a quiet host, and Crew came out "faster" than it).
  const cpus = availableParallelism();
  const busiest = Math.max(loadavg()[0] ?? 0, Number(loadAtStart[0]));
  const quiet = busiest <= cpus;
  const judged = floorWavePerRun < floorSinglePerRun && quiet;
  const verdict = (ok: boolean) =>
    !judged
      ? `**not judged** (host too loaded: ${quiet ? '' : `1-minute load average up to ${busiest.toFixed(1)} on ${cpus} CPUs; `}the floor's wave took ${floorWavePerRun.toFixed(1)} ms/run, its serial spawns ${floorSinglePerRun.toFixed(1)} ms/run; rerun on a quieter host)`
      : ok
        ? '**met**'
        : '**MISSED**';
  const row = (
    label: string,
    floorMs: number[],
    crewMs: number[],
    n: number,
    overhead: number[],
    ratio: number[],
  ) =>
    `| ${label} | ${median(floorMs).toFixed(0)} (${(median(floorMs) / n).toFixed(2)}/run) | ${median(crewMs).toFixed(0)} (${(median(crewMs) / n).toFixed(2)}/run) | ${median(ratio).toFixed(2)}× | ${signed(median(overhead))} |`;
  const signed = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(2)}`;
  /** The native floor's figures beside crew's, for reference: what a run costs beyond the cheapest start. */
  const nativeLine = () => {
    if (!nativeFloor) return 'Native floor: not measured (no C compiler).';
    const wave = median(rounds.map((x) => x.nativeWave as number));
    const singles = median(rounds.map((x) => x.nativeSingles as number));
    const beyond = median(rounds.map((x) => ((x.wave[0] as number) - (x.nativeWave as number)) / WAVE));
    return `For reference, no goal: a C program that \`posix_spawn\`s \`true\` the same way (bench/e2e-floor.c) takes ${(wave / WAVE).toFixed(2)} ms/run in the wave and ${(singles / SINGLES).toFixed(2)} ms/run one after another; crew's wave is ${signed(beyond)} ms/run beyond it (what Crew itself costs per run once starting a process is cheap).`;
  };
  const both = (values: (who: number) => number[]) => [0, 1].map((who) => median(values(who)));
  const [cpuNative, cpuNode] = both((who) => rounds.map((x) => x.daemonCpuPerRun[who] as number));
  lines = [
    '# bench/e2e',
    '',
    `Run: ${new Date().toISOString()} · Node ${process.version} · ${process.platform}/${process.arch} · ${availableParallelism()} CPUs · load average at start ${loadAtStart.join(' / ')}, at end ${loadAtEnd.join(' / ')}`,
    '',
    `Two real \`crew serve\` processes (test bundle, plain node, real \`crew.db\`, file transcripts, the host's containment), each driven by an MCP SDK client over Streamable HTTP, running a command agent whose command is \`true\`, cap pinned to ${CAP}, stagger 0: **crew** as a user gets it (\`host.spawner: auto\`: runs start from the native helper, checked by the helper process's executable: ${helpers[0]}) and **crew, Node helper** (\`host.spawner: node\`: ${helpers[1]}), the state before the native helper. The floor, in a bare Node process of its own (bench/e2e-floor.mjs): Node's \`child_process.spawn('true')\` (default stdio: pipes), each until \`close\`, under \`p-limit(${CAP})\` for the wave and one after another for singles. Wave = one \`spawn_run\` of ${WAVE.toLocaleString('en-US')} tasks to the wave's digest read through \`spawn_wait\`; singles = ${SINGLES} × (\`spawn_run\` of one task, \`spawn_wait\` for its event). ${ROUNDS} rounds after a warm-up, the three sides interleaved within each round (order rotating); medians of per-round figures. Overhead per run = (crew − floor) / runs within the same round.`,
    '',
    '| scenario | floor ms | crew ms | ratio | overhead ms/run |',
    '|---|---:|---:|---:|---:|',
    ...[0, 1].flatMap((who) => [
      row(
        `${sides[who]?.label}: wave of ${WAVE.toLocaleString('en-US')} at cap ${CAP}`,
        rounds.map((x) => x.floorWave),
        rounds.map((x) => x.wave[who] as number),
        WAVE,
        waveOverheadsOf(who),
        waveRatiosOf(who),
      ),
      row(
        `${sides[who]?.label}: ${SINGLES} single spawns, one after another`,
        rounds.map((x) => x.floorSingles),
        rounds.map((x) => x.singles[who] as number),
        SINGLES,
        singleOverheadsOf(who),
        singleRatiosOf(who),
      ),
    ]),
    '',
    `Per-round wave overheads, crew: ${waveOverheads.map((x) => x.toFixed(2)).join(' / ')} ms/run (Node helper: ${waveOverheadsOf(
      1,
    )
      .map((x) => x.toFixed(2))
      .join(' / ')}); singles: ${singleOverheads.map((x) => x.toFixed(2)).join(' / ')} ms/run.`,
    nativeLine(),
    `CPU per run of the wave: the daemon (every thread) ${cpuNative?.toFixed(2)} ms (Node helper: ${cpuNode?.toFixed(2)} ms; the helper's own CPU is not in it); the floor's bare Node process ${median(rounds.map((x) => x.floorCpuPerRun)).toFixed(2)} ms.`,
    '',
    `- End-to-end overhead per instant run of a wave at cap ${CAP} within ${WAVE_OVERHEAD_TARGET_MS} ms of \`spawn\` under p-limit: ${verdict(waveOverhead <= WAVE_OVERHEAD_TARGET_MS)} (${signed(waveOverhead)} ms/run, ${median(waveRatios).toFixed(2)}× the floor; on the Node helper ${signed(median(waveOverheadsOf(1)))} ms/run, ${median(waveRatiosOf(1)).toFixed(2)}×).`,
    `- Single spawns (no target of their own): ${signed(median(singleOverheads))} ms/run, ${median(singleRatios).toFixed(2)}× the floor.`,
    '',
  ];
} finally {
  for (const side of sides) {
    await side.client.close().catch(() => undefined);
    side.serve.proc.kill('SIGTERM');
    if (side.serve.proc.exitCode === null && side.serve.proc.signalCode === null)
      await new Promise((resolve) => side.serve.proc.once('exit', resolve));
    rmSync(side.home, { recursive: true, force: true });
  }
  floor.close();
  nativeFloor?.close();
  rmSync(nativeFloorDir, { recursive: true, force: true });
}
const text = lines.join('\n');
console.log(text);
writeFileSync(join(import.meta.dirname, 'results', 'e2e.md'), text);
