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

async function side(label: string, extra: Record<string, unknown>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < N + 2; i++) {
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
    if (i >= 2) times.push(performance.now() - start); // two warm-ups
  }
  return times.sort((a, b) => a - b);
}

function bare(): number[] {
  const times: number[] = [];
  for (let i = 0; i < N + 2; i++) {
    const start = performance.now();
    spawnSync(process.execPath, ['-e', SCRIPT, `bare${i}`], { cwd: join(dir), stdio: 'ignore' });
    if (i >= 2) times.push(performance.now() - start);
  }
  return times.sort((a, b) => a - b);
}

const p = (xs: number[], q: number) => xs[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? Number.NaN;
const fmt = (n: number) => n.toFixed(0);

try {
  const baseline = bare();
  const plain = await side('plain', {});
  const worktree = await side('worktree', { isolation: 'worktree' });
  const sandboxed = await side('worktree+sandbox', { isolation: 'worktree', sandbox: true });
  const sandboxOnly = await side('sandbox', { sandbox: true });
  const rows: [string, number[]][] = [
    ['bare node -e (no Crew)', baseline],
    ['Crew, plain run', plain],
    ['Crew, isolation worktree', worktree],
    ['Crew, sandbox (in cwd)', sandboxOnly],
    ['Crew, worktree + sandbox', sandboxed],
  ];
  const worktreeCost = p(worktree, 0.5) - p(plain, 0.5);
  const sandboxCost = p(sandboxed, 0.5) - p(worktree, 0.5);
  const lines = [
    `# bench/workspace — ${new Date().toISOString()}`,
    '',
    `${N} runs per side, one at a time, after 2 warm-ups; a git repository of 500 files; ${availableParallelism()} CPUs; load ${loadavg()[0]?.toFixed(1)} at the end (other work on the machine inflates every side alike); network bridge ${existsSync(BUILT_BRIDGE) ? 'from dist/' : 'from source through tsx (slow start: run npm run build first)'}.`,
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
