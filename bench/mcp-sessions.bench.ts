/**
 * bench/mcp-sessions: a real `crew serve` process fed 10,000 abandoned MCP sessions (an `initialize` over
 * Streamable HTTP, then nothing: no call, no DELETE), side by side:
 *
 * - baseline: the daemon with the session bounds switched off (`mcp.max_sessions` 1,000,000,
 *   `mcp.session_idle_secs` one year), which is how every daemon behaved before the bounds;
 * - crew: the daemon with its defaults (`mcp.max_sessions` 512, `mcp.session_idle_secs` 3600).
 *
 * Measured from outside: the daemon's RSS (`/proc/<pid>/status`) before the sessions and after them,
 * and the sessions it reports open (`/api/health`). Goal (issue 12 §6): abandoned sessions are bounded,
 * so RSS after 10,000 of them stays near the idle daemon's, not ~47 KB per session above it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 10_000);
const CONCURRENCY = 16;
/** The daemon's V8 heap limit: the issue's report had 3,000 abandoned sessions kill a 48 MB heap. */
const HEAP_MB = Number(process.env.BENCH_HEAP_MB ?? 48);
const root = join(import.meta.dirname, '..');

interface Daemon {
  proc: ChildProcess;
  url: string;
  token: string;
  home: string;
}

async function startDaemon(config: Record<string, unknown>): Promise<Daemon> {
  const home = mkdtempSync(join(tmpdir(), 'crew-bench-sessions-'));
  writeFileSync(join(home, 'config.json'), JSON.stringify({ 'agent.spawn_min_memory_gb': 0, ...config }));
  const proc = spawn(
    process.execPath,
    [
      `--max-old-space-size=${HEAP_MB}`,
      '--import',
      'tsx',
      join(root, 'src/cli/main.ts'),
      'serve',
      '--port',
      '0',
    ],
    { env: { ...process.env, CREW_HOME: home }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let err = '';
  proc.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const file = JSON.parse(readFileSync(join(home, 'gateway.json'), 'utf8')) as { url: string };
      const token = readFileSync(join(home, 'token'), 'utf8').trim();
      return { proc, url: file.url, token, home };
    } catch {
      if (Date.now() > deadline || proc.exitCode !== null)
        throw new Error(`crew serve did not start: ${err}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN);
  return kb / 1024;
}

async function health(d: Daemon): Promise<{ open: number; expired: number; evicted: number }> {
  const response = await fetch(`${d.url}/api/health`, { headers: { authorization: `Bearer ${d.token}` } });
  const body = (await response.json()) as {
    mcp_sessions?: { open: number; expired: number; evicted: number };
  };
  if (!body.mcp_sessions) throw new Error('this daemon does not report its MCP sessions');
  return body.mcp_sessions;
}

/** One abandoned session: initialize, read the answer, never come back. */
async function abandonOne(d: Daemon): Promise<void> {
  const response = await fetch(`${d.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${d.token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-03-26',
        capabilities: {},
        clientInfo: { name: 'bench', version: '1' },
      },
    }),
  });
  await response.text();
  if (!response.ok || !response.headers.get('mcp-session-id'))
    throw new Error(`initialize: ${response.status}`);
}

async function measure(name: string, config: Record<string, unknown>) {
  const d = await startDaemon(config);
  try {
    await new Promise((r) => setTimeout(r, 1000)); // let start-up settle
    const before = rssMb(d.proc.pid as number);
    let next = 0;
    let done = 0;
    let peak = before;
    const t0 = performance.now();
    const died = new Promise<string>((resolve) =>
      d.proc.once('exit', (code, signal) => resolve(`died (${signal ?? `exit ${code}`})`)),
    );
    const fed = Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < SESSIONS) {
          next++;
          await abandonOne(d);
          done++;
          if (done % 500 === 0) peak = Math.max(peak, rssMb(d.proc.pid as number));
        }
      }),
    ).then(() => 'alive');
    const outcome = await Promise.race([fed.catch(() => died), died]);
    const secs = (performance.now() - t0) / 1000;
    if (outcome !== 'alive') {
      return {
        name,
        before,
        after: peak,
        secs,
        sessions: { open: done, expired: 0, evicted: 0 },
        outcome,
        done,
      };
    }
    await new Promise((r) => setTimeout(r, 2000)); // closed transports and their servers can be collected
    const after = rssMb(d.proc.pid as number);
    const sessions = await health(d);
    return { name, before, after, secs, sessions, outcome, done };
  } finally {
    if (d.proc.exitCode === null && d.proc.signalCode === null) {
      d.proc.kill('SIGTERM');
      await new Promise((r) => d.proc.once('exit', r));
    }
    rmSync(d.home, { recursive: true, force: true });
  }
}

const load = loadavg()[0]?.toFixed(1);
const baseline = await measure('baseline: bounds off (max 1,000,000, idle 1 year)', {
  'mcp.max_sessions': 1_000_000,
  'mcp.session_idle_secs': 365 * 86_400,
});
const crew = await measure('crew: defaults (max 512, idle 3600 s)', {});
const rows = [baseline, crew].map(
  (r) =>
    `| ${r.name} | ${r.outcome} after ${r.done.toLocaleString('en-US')} | ${r.before.toFixed(1)} | ${r.after.toFixed(1)} | ${(r.after - r.before).toFixed(1)} | ${r.sessions.open} | ${r.sessions.evicted} | ${r.secs.toFixed(1)} |`,
);
const verdictBound = crew.outcome === 'alive' && crew.sessions.open <= 512 ? 'met' : 'missed';
const verdictAlive = crew.outcome === 'alive' ? 'met' : 'missed';
const verdictRss = crew.after <= crew.before * 1.5 ? 'met' : 'missed';
const table = `# bench/mcp-sessions

A real \`crew serve\` process (run through tsx, SQLite store, a temp CREW_HOME) with a ${HEAP_MB} MB V8 heap (\`--max-old-space-size\`) fed ${SESSIONS.toLocaleString('en-US')} abandoned MCP sessions: an \`initialize\` POST over Streamable HTTP (${CONCURRENCY} at a time), then nothing. RSS from \`/proc/<pid>/status\` before the sessions and 2 s after the last (for a daemon that died: the highest reading, every 500 sessions); open sessions as the daemon reports them (\`/api/health\`). Host: ${availableParallelism()} CPUs, load average ${load} at the start.

| daemon | outcome | RSS before MB | RSS after MB | growth MB | sessions open | evicted | seconds |
|---|---|---:|---:|---:|---:|---:|---:|
${rows.join('\n')}

RSS after / before: baseline ${(baseline.after / baseline.before).toFixed(2)}×, crew ${(crew.after / crew.before).toFixed(2)}×.

The daemon survives ${SESSIONS.toLocaleString('en-US')} abandoned sessions on a ${HEAP_MB} MB heap: ${verdictAlive} (baseline: ${baseline.outcome} after ${baseline.done.toLocaleString('en-US')}).
Abandoned sessions bounded by \`mcp.max_sessions\` (open ≤ 512 after ${SESSIONS.toLocaleString('en-US')}): ${verdictBound} (${crew.sessions.open} open, ${crew.sessions.evicted} closed least recently used first).
RSS after ${SESSIONS.toLocaleString('en-US')} abandoned sessions within 1.5× the idle daemon's: ${verdictRss} (${crew.after.toFixed(1)} MB vs ${crew.before.toFixed(1)} MB idle; baseline ${baseline.after.toFixed(1)} MB).
`;
console.log(table);
writeFileSync(join(import.meta.dirname, 'results', 'mcp-sessions.md'), table);
