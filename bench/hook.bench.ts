/**
 * Start-to-answer time of the Claude Code hook process (`crew hook claude`), which Claude Code waits
 * for before every `Agent` call, against `node -e ''` as the floor. 200 calls: PreToolUse then the
 * matching PostToolUse, so the ledger stays under the cap. Each call is a fresh process fed its
 * payload on stdin, timed from spawn to exit; hook and floor runs are interleaved so both see the
 * same machine. Target: p50 and p99 within 2x of the floor.
 *
 * The hook runs from compiled JS (`dist/hooks/claude-hook-bin.js`, built with tsconfig.build.json
 * when missing or older than its sources); if the build fails it falls back to `node --import tsx`
 * and says so in the results.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const CALLS = 200;
const WARMUP_CALLS = 6;
const CONFIG_EDIT_CALLS = 20;
const HELD_CALLS = 100;
const DIST_BIN = join(ROOT, 'dist/hooks/claude-hook-bin.js');
const SOURCE_BIN = join(ROOT, 'src/hooks/claude-hook-bin.ts');

interface Runner {
  label: string;
  argv: string[];
}

function isDistFresh(): boolean {
  if (!existsSync(DIST_BIN)) return false;
  const builtMs = statSync(DIST_BIN).mtimeMs;
  const sources = readdirSync(join(ROOT, 'src/hooks')).map((f) => join(ROOT, 'src/hooks', f));
  return sources.every((file) => statSync(file).mtimeMs <= builtMs);
}

function chooseRunner(): Runner {
  if (!isDistFresh()) {
    const build = spawnSync(
      process.execPath,
      [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
      {
        cwd: ROOT,
        encoding: 'utf8',
      },
    );
    if (build.status !== 0 || !existsSync(DIST_BIN)) {
      console.error(`build failed; measuring from source with tsx instead:\n${build.stdout}${build.stderr}`);
      return {
        label: 'node --import tsx src/hooks/claude-hook-bin.ts claude (build failed)',
        argv: ['--import', 'tsx', SOURCE_BIN, 'claude'],
      };
    }
  }
  return { label: 'node dist/hooks/claude-hook-bin.js claude', argv: [DIST_BIN, 'claude'] };
}

function timeProcess(
  argv: string[],
  input: string,
  env: NodeJS.ProcessEnv,
): { ms: number; stdout: string; status: number | null; stderr: string } {
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, argv, { input, env, cwd: ROOT, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  return { ms, stdout: result.stdout, status: result.status, stderr: result.stderr };
}

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] as number;
}

function payload(event: 'PreToolUse' | 'PostToolUse', toolUseId: string): string {
  return JSON.stringify({
    session_id: 'bench-session',
    transcript_path: '/tmp/bench.jsonl',
    cwd: ROOT,
    hook_event_name: event,
    tool_name: 'Agent',
    tool_input: { description: 'bench', prompt: 'bench', subagent_type: 'Explore' },
    tool_use_id: toolUseId,
    ...(event === 'PostToolUse' && { tool_response: { status: 'completed', agentId: `a-${toolUseId}` } }),
  });
}

const runner = chooseRunner();
const loadAtStart = loadavg()[0] ?? 0;
const crewHome = mkdtempSync(join(tmpdir(), 'crew-hook-bench-'));
const env = { ...process.env, CREW_HOME: crewHome };
writeFileSync(join(crewHome, 'config.json'), JSON.stringify({ 'hooks.claude.max_in_flight': 5 }));

try {
  const callHook = (event: 'PreToolUse' | 'PostToolUse', id: string) => {
    const run = timeProcess(runner.argv, payload(event, id), env);
    // Every call must be a silent allow; anything else means the numbers measure the wrong path.
    if (run.status !== 0 || run.stdout !== '' || run.stderr !== '') {
      throw new Error(`hook call ${event} ${id} answered ${run.status}: ${run.stdout}${run.stderr}`);
    }
    return run.ms;
  };
  for (let i = 0; i < WARMUP_CALLS / 2; i++) {
    callHook('PreToolUse', `warm-${i}`);
    callHook('PostToolUse', `warm-${i}`);
    timeProcess(['-e', ''], '', env);
  }

  const floor: number[] = [];
  const hookAll: number[] = [];
  const hookPre: number[] = [];
  const hookPost: number[] = [];
  for (let i = 0; i < CALLS / 2; i++) {
    floor.push(timeProcess(['-e', ''], '', env).ms);
    const pre = callHook('PreToolUse', `t-${i}`);
    floor.push(timeProcess(['-e', ''], '', env).ms);
    const post = callHook('PostToolUse', `t-${i}`);
    hookPre.push(pre);
    hookPost.push(post);
    hookAll.push(pre, post);
  }

  // With another connection holding crew.db open (a running gateway), closing the hook's connection
  // does not checkpoint the WAL; measured apart because both situations are common.
  const held: number[] = [];
  const heldFloor: number[] = [];
  const { default: Database } = await import('better-sqlite3');
  const gateway = new Database(join(crewHome, 'crew.db'));
  try {
    for (let i = 0; i < HELD_CALLS / 2; i++) {
      heldFloor.push(timeProcess(['-e', ''], '', env).ms);
      held.push(callHook('PreToolUse', `h-${i}`));
      heldFloor.push(timeProcess(['-e', ''], '', env).ms);
      held.push(callHook('PostToolUse', `h-${i}`));
    }
  } finally {
    gateway.close();
  }

  // The rare path: config.json was just edited, so the hook imports the config schema (zod).
  const edited: number[] = [];
  for (let i = 0; i < CONFIG_EDIT_CALLS; i++) {
    writeFileSync(
      join(crewHome, 'config.json'),
      JSON.stringify({ 'hooks.claude.max_in_flight': 5 + (i % 2) }),
    );
    edited.push(callHook('PreToolUse', `e-${i}`));
    callHook('PostToolUse', `e-${i}`);
  }

  const floorP50 = percentile(floor, 50);
  const floorP99 = percentile(floor, 99);
  const row = (name: string, samples: number[], against = floor) => {
    const p50 = percentile(samples, 50);
    const p99 = percentile(samples, 99);
    const base50 = percentile(against, 50);
    const base99 = percentile(against, 99);
    return `| ${name} | ${samples.length} | ${p50.toFixed(1)} | ${p99.toFixed(1)} | ${(p50 / base50).toFixed(2)}x | ${(p99 / base99).toFixed(2)}x |`;
  };
  const hookP50Ratio = percentile(hookAll, 50) / floorP50;
  const hookP99Ratio = percentile(hookAll, 99) / floorP99;
  const verdict = hookP50Ratio <= 2 && hookP99Ratio <= 2 ? 'met' : 'NOT met';
  const table = [
    '| process | calls | p50 ms | p99 ms | p50 / floor | p99 / floor |',
    '|---|---:|---:|---:|---:|---:|',
    row("floor: node -e ''", floor),
    row('hook, all calls', hookAll),
    row('hook, PreToolUse (reserve)', hookPre),
    row('hook, PostToolUse (release)', hookPost),
    row('hook, crew.db held open by another process (own floor runs)', held, heldFloor),
    row('hook, PreToolUse right after a config.json edit', edited),
  ].join('\n');

  const report = `# Claude Code hook: start-to-answer time

Run: ${new Date().toISOString()} · Node ${process.version} · ${process.platform}/${process.arch} · ${availableParallelism()} CPUs · 1-min load average ${loadAtStart.toFixed(1)} at start, ${(loadavg()[0] ?? 0).toFixed(1)} at end (other work on the machine inflates both columns alike)

Hook command: \`${runner.label}\`, fed one payload on stdin per process; the database is
\`$CREW_HOME/crew.db\` in a temp dir (WAL) and \`config.json\` sets \`hooks.claude.max_in_flight\`.
${CALLS} hook calls (PreToolUse then the matching PostToolUse), each interleaved with one floor run.

${table}

Target (p50 and p99 of all hook calls within 2x of the floor): **${verdict}**
(p50 ${hookP50Ratio.toFixed(2)}x, p99 ${hookP99Ratio.toFixed(2)}x).

The "held open" row measures the hook while another connection keeps \`crew.db\` open, as a running
gateway does (the hook's close then does not checkpoint the WAL); its ratio is against the floor
runs interleaved with it.

The last row is the rare path after \`config.json\` changed: the hook then imports the config schema
(zod) once to validate its keys and caches the result in the ledger's database for the next calls.
`;
  console.log(report);
  writeFileSync(join(ROOT, 'bench/results/hook.md'), report);
} finally {
  rmSync(crewHome, { recursive: true, force: true });
}
