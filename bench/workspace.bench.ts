/**
 * bench/workspace (issue 31): what a worktree and a sandbox cost per run, side by side in one run. The
 * same command agent (`node -e`, writes one file) runs N times, one at a time, through a real gateway
 * (real CommandRunner, real git repository of 500 files): plain in the repository, with
 * `isolation: "worktree"`, and with a worktree and `sandbox: true` (bubblewrap, the network bridge);
 * beside them the agent started bare with no Crew at all. Time = from `spawn` to the completion event
 * (for a worktree: made, agent run, changes committed and summarised, worktree removed).
 *
 * Goals: a worktree adds under 500 ms per run at p50 and a sandbox under 300 ms more on this 2-core
 * machine (a coding agent's run takes minutes; half a second is noise beside it).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { realClock } from '../src/clock/real-clock.js';
import type { AgentDef } from '../src/core/agent-def.js';
import { defaultConfig } from '../src/core/config-schema.js';
import { createGateway } from '../src/gateway/create-gateway.js';
import { CommandRunner } from '../src/runners/command-runner.js';
import { BwrapSandbox } from '../src/workspace/sandbox.js';
import { Workspaces } from '../src/workspace/workspaces.js';

const BUILT_BRIDGE = join(import.meta.dirname, '..', 'dist', 'workspace', 'net-bridge-main.js');
const N = Number(process.env.BENCH_WORKSPACE_RUNS ?? 15);
const WORKTREE_GOAL_MS = 500;
const SANDBOX_GOAL_MS = 300;
const SCRIPT = "require('fs').writeFileSync('out-' + process.argv[1] + '.txt', 'x'); console.log('done')";

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'crew-bench-ws-')));
const repo = join(dir, 'repo');
mkdirSync(join(repo, 'src'), { recursive: true });
execFileSync('git', ['init', '-q', '-b', 'main', repo]);
for (let i = 0; i < 500; i++)
  writeFileSync(join(repo, 'src', `f${i}.ts`), `export const v${i} = ${i};\n`.repeat(20));
const env = {
  ...process.env,
  GIT_AUTHOR_NAME: 'b',
  GIT_AUTHOR_EMAIL: 'b@b',
  GIT_COMMITTER_NAME: 'b',
  GIT_COMMITTER_EMAIL: 'b@b',
};
execFileSync('git', ['-C', repo, 'add', '.'], { env });
execFileSync('git', ['-C', repo, 'commit', '-qm', 'init'], { env });

const agent: AgentDef = {
  name: 'w',
  runner: 'command',
  command: [process.execPath, '-e', SCRIPT, '{task}'],
  shared: false,
  skills: [],
};
const config = {
  ...defaultConfig(),
  'agent.subagent_spawn_stagger_secs': 0,
  'agent.spawn_min_memory_gb': 0,
  'agent.subagent_cwd_allowed_roots': [dir],
  'agent.default_agent': 'w',
};
const runner = new CommandRunner({ clock: realClock, killGraceMs: 1000 });
const workspaces = new Workspaces({
  root: join(dir, 'worktrees'),
  clock: realClock,
  gitTimeoutMs: 30_000,
  unmergedKeepMs: 0,
  maxBranches: 10_000,
  conflictCheckMax: 0,
  // One allowed port, as the daemon always has (its own, the provider gateway's): the bridge starts each
  // time. From the build (`npm run build`), as the daemon runs it, when there is one.
  sandbox: new BwrapSandbox({
    bwrap: 'bwrap',
    crewHome: join(dir, 'crew'),
    hiddenPaths: [],
    allowedPorts: () => [9],
    ...(existsSync(BUILT_BRIDGE) ? { bridgeCommand: [process.execPath, BUILT_BRIDGE] } : {}),
  }),
});
const gateway = createGateway(config, {
  runner,
  agents: new Map([['w', agent]]),
  cap: 3,
  defaultCwd: dir,
  workspaces,
});

/** One run of the agent through the gateway, spawn to completion event, in ms. */
async function once(label: string, i: number, extra: Record<string, unknown>): Promise<number> {
  const start = performance.now();
  const spawned = gateway.spawn('mcp:bench', {
    task: `${label.replace(/\W/g, '')}${i}`,
    cwd: repo,
    ...extra,
  });
  if (!spawned.ok) throw new Error(JSON.stringify(spawned));
  const id = spawned.runs[0]?.id as string;
  for (;;) {
    const events = await gateway.waitForEvents('mcp:bench', 30_000);
    if (events.some((e) => e.run_ids.includes(id))) break;
  }
  return performance.now() - start;
}

function bare(i: number): number {
  const start = performance.now();
  spawnSync(process.execPath, ['-e', SCRIPT, `bare${i}`], { cwd: join(dir), stdio: 'ignore' });
  return performance.now() - start;
}

/**
 * The same agent under the sandbox's own bubblewrap argv, no Crew around it: with no allowed port (no
 * network bridge) and with one (the bridge, a second node, starts first and runs the agent). Splits the
 * sandbox's cost between bubblewrap and the bridge.
 */
function bwrapSandbox(ports: number[]): BwrapSandbox {
  return new BwrapSandbox({
    bwrap: 'bwrap',
    crewHome: join(dir, 'crew'),
    hiddenPaths: [],
    allowedPorts: () => ports,
    ...(existsSync(BUILT_BRIDGE) ? { bridgeCommand: [process.execPath, BUILT_BRIDGE] } : {}),
  });
}

async function bareSandbox(sandbox: BwrapSandbox, i: number): Promise<number> {
  const start = performance.now();
  const wrapped = await sandbox.wrap(
    `b${i}`,
    { ...agent, command: [...agent.command.slice(0, -1), `sb${i}`] },
    [repo],
  );
  const [file, ...args] = wrapped.agent.command as [string, ...string[]];
  const result = spawnSync(file, args, { cwd: repo, stdio: 'ignore' });
  await wrapped.close();
  if (result.status !== 0) throw new Error(`bubblewrap run failed (${result.status})`);
  return performance.now() - start;
}

const p = (xs: number[], q: number) => xs[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? Number.NaN;
const fmt = (n: number) => n.toFixed(0);

try {
  // The sides take turns, one run each, so a change in the machine's load falls on all of them alike.
  const noPort = bwrapSandbox([]);
  const onePort = bwrapSandbox([9]);
  const sides: [string, (i: number) => Promise<number>][] = [
    ['bare', async (i) => bare(i)],
    ['bwrap', (i) => bareSandbox(noPort, i)],
    ['bwrap+bridge', (i) => bareSandbox(onePort, i)],
    ['plain', (i) => once('plain', i, {})],
    ['worktree', (i) => once('worktree', i, { isolation: 'worktree' })],
    ['worktree+sandbox', (i) => once('worktree+sandbox', i, { isolation: 'worktree', sandbox: true })],
    ['sandbox', (i) => once('sandbox', i, { sandbox: true })],
  ];
  const times = new Map<string, number[]>(sides.map(([name]) => [name, []]));
  for (let i = 0; i < N + 2; i++)
    for (const [name, run] of sides) {
      const ms = await run(i);
      if (i >= 2) times.get(name)?.push(ms); // two warm-ups
    }
  const sorted = (name: string) => [...(times.get(name) ?? [])].sort((a, b) => a - b);
  const baseline = sorted('bare');
  const bwrapOnly = sorted('bwrap');
  const bwrapBridge = sorted('bwrap+bridge');
  const plain = sorted('plain');
  const worktree = sorted('worktree');
  const sandboxed = sorted('worktree+sandbox');
  const sandboxOnly = sorted('sandbox');
  const rows: [string, number[]][] = [
    ['bare node -e (no Crew)', baseline],
    ['bubblewrap around it, no port: no bridge (no Crew)', bwrapOnly],
    ['bubblewrap + network bridge around it (no Crew)', bwrapBridge],
    ['Crew, plain run', plain],
    ['Crew, isolation worktree', worktree],
    ['Crew, sandbox (in cwd)', sandboxOnly],
    ['Crew, worktree + sandbox', sandboxed],
  ];
  const worktreeCost = p(worktree, 0.5) - p(plain, 0.5);
  const sandboxCost = p(sandboxed, 0.5) - p(worktree, 0.5);
  const bwrapCost = p(bwrapOnly, 0.5) - p(baseline, 0.5);
  const bridgeCost = p(bwrapBridge, 0.5) - p(bwrapOnly, 0.5);
  const lines = [
    `# bench/workspace — ${new Date().toISOString()}`,
    '',
    `${N} runs per side, one at a time, the sides taking turns, after 2 warm-ups; a git repository of 500 files; ${availableParallelism()} CPUs; load ${loadavg()[0]?.toFixed(1)} at the end (other work on the machine inflates every side alike); network bridge ${existsSync(BUILT_BRIDGE) ? 'from dist/' : 'from source through tsx (slow start: run npm run build first)'}.`,
    '',
    '| side | p50 ms | p95 ms | ratio to plain (p50) |',
    '|---|---:|---:|---:|',
    ...rows.map(
      ([label, xs]) =>
        `| ${label} | ${fmt(p(xs, 0.5))} | ${fmt(p(xs, 0.95))} | ${(p(xs, 0.5) / p(plain, 0.5)).toFixed(2)}× |`,
    ),
    '',
    `A worktree adds ${fmt(worktreeCost)} ms per run at p50 (goal < ${WORKTREE_GOAL_MS} ms): **${worktreeCost < WORKTREE_GOAL_MS ? 'met' : 'missed'}**.`,
    `A sandbox adds ${fmt(sandboxCost)} ms more (goal < ${SANDBOX_GOAL_MS} ms): **${sandboxCost < SANDBOX_GOAL_MS ? 'met' : 'missed'}**.`,
    `Of a sandbox's start, bubblewrap alone is ${fmt(bwrapCost)} ms and the network bridge (a second node start) ${fmt(bridgeCost)} ms more, at p50 (no goal: the split).`,
    '',
  ];
  const text = lines.join('\n');
  console.log(text);
  mkdirSync(join(import.meta.dirname, 'results'), { recursive: true });
  writeFileSync(join(import.meta.dirname, 'results', 'workspace.md'), text);
  if (worktreeCost >= WORKTREE_GOAL_MS || sandboxCost >= SANDBOX_GOAL_MS) process.exitCode = 1;
} finally {
  await gateway.close();
  await runner.close();
  rmSync(dir, { recursive: true, force: true });
}
