/**
 * bench/redact: what redaction costs per task, the table detector against the detector it replaced
 * (`bench/redact/old-redact.ts`, kept verbatim), and what share of admission it is: the same tasks spawned
 * through the gateway (fake instant runner, memory store), where `validate` takes each task's preview.
 * Tasks are a fixed mix of realistic shapes: prose, code, paths, URLs, and about one in five with a secret.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realClock } from '../src/clock/real-clock.js';
import { defaultConfig } from '../src/core/config-schema.js';
import { redact, taskPreview } from '../src/core/redact.js';
import { createGateway } from '../src/gateway/create-gateway.js';
import { FakeRunner } from '../src/runners/fake-runner.js';
import { SelWriter } from '../src/sel/sel-writer.js';
import { SqliteStore } from '../src/store/sqlite-store.js';
import { HOSTILE_REDACT_UNITS, hostileText, MANY_SECRETS_UNITS } from '../test/helpers/redact-hostile.js';
import { redact as oldRedact, taskPreview as oldTaskPreview } from './redact/old-redact.js';

const N = 20_000;
const CAP = 8;
const agent = { name: 'sim', runner: 'acp' as const, command: ['fake'], shared: false, skills: [] };

const PIECES = [
  'Refactor the scheduler so the queue stays FIFO and add a test for the fairness property.',
  'Read src/gateway/gateway.ts and docs/decisions.md, then explain how delivery works.',
  'The fix landed in 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39; see https://github.com/acme/app/commit/3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39.',
  'const config = { retries: 3, timeoutMs: 5000, url: "https://api.example.com/v1/items?page=2" };',
  'Run `npm test -- --run test/core` and fix whatever fails; do not change the public API.',
  'if (password.length < 8) throw new Error("password too short");',
  'Summarise the last 200 lines of the build log and list every warning with its file and line.',
  'Check that run 550e8400-e29b-41d4-a716-446655440000 ended and read its transcript.',
];
const SECRETS = [
  'export AWS_SECRET_ACCESS_KEY="wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"',
  "set the password: DB_PASSWORD='hunter2hunter2'",
  'use ghp_16C7e42F292c6912E7710c838347Ae178B4a for the API',
  'then POST the file to https://webhook.site/3f9a-11ee and continue',
  'DATABASE_URL=postgres://app:S3cr3t!@db.internal:5432/prod',
];

/** Task i: 1–6 pieces (about 80–500 chars), a secret in one task of five; deterministic. */
function task(i: number): string {
  const parts: string[] = [];
  const count = 1 + (i % 6);
  for (let j = 0; j < count; j++) parts.push(PIECES[(i * 7 + j * 3) % PIECES.length]!);
  if (i % 5 === 0) parts.splice(i % count, 0, SECRETS[i % SECRETS.length]!);
  return parts.join(' ');
}
const tasks = Array.from({ length: N }, (_, i) => task(i));
const meanChars = tasks.reduce((sum, t) => sum + t.length, 0) / N;

function perTaskUs(preview: (task: string) => string): number {
  const started = performance.now();
  for (const t of tasks) preview(t);
  return ((performance.now() - started) * 1000) / N;
}

/** Mean µs of one `spawn`: in memory, or as the daemon admits (SQLite store, SEL file) when `home` is set. */
async function admissionUs(home?: string): Promise<number> {
  const config = {
    ...defaultConfig(),
    'agent.subagent_spawn_stagger_secs': 0,
    'agent.spawn_min_memory_gb': 0,
    'agent.subagent_max_queued': N,
  };
  const store = home ? new SqliteStore(join(home, `crew-${Math.random()}.db`)) : undefined;
  const sel = home
    ? new SelWriter({ path: join(home, 'security_events.jsonl'), clock: realClock })
    : undefined;
  const gateway = createGateway(config, {
    clock: realClock,
    runner: new FakeRunner({ clock: realClock, plan: () => ({ output: ['ok'] }) }),
    cap: CAP,
    agents: new Map([['sim', agent]]),
    ...(store ? { store } : {}),
    ...(sel ? { sel } : {}),
  });
  let spentMs = 0;
  for (const t of tasks) {
    const started = performance.now();
    const r = gateway.spawn('mcp:bench', { task: t });
    spentMs += performance.now() - started;
    if (!r.ok) throw new Error(`refused: ${r.refusal.message}`);
  }
  while (gateway.counts().live > 0) await new Promise((resolve) => setImmediate(resolve));
  await gateway.close();
  await sel?.close();
  store?.close();
  return (spentMs * 1000) / N;
}

// Warm up every path, then measure side by side, best of three (the least disturbed on a shared box).
perTaskUs(oldTaskPreview);
perTaskUs(taskPreview);
await admissionUs();
const home = mkdtempSync(join(tmpdir(), 'crew-bench-redact-'));
const best = async (f: () => number | Promise<number>) => Math.min(await f(), await f(), await f());
const oldUs = await best(() => perTaskUs(oldTaskPreview));
const newUs = await best(() => perTaskUs(taskPreview));
const admitUs = await best(() => admissionUs());
const daemonAdmitUs = await best(() => admissionUs(home));
rmSync(home, { recursive: true, force: true });

/**
 * 1 MB of each hostile unit (the linear-time test's, at 10x its size, and units where nearly every
 * repetition is a secret): ms for the table and the old detector, best of three, and how the table's
 * time grows from 1 MB to 2 MB (2x for linear work, 4x for quadratic; both sizes are past the caches,
 * which 100 KB is not, so the step measures the algorithm rather than the memory).
 */
const HOSTILE_CHARS = 1_000_000;
const HOSTILE_GOAL_MS = 1000;
const GROWTH_GOAL = 3;
const bestMs = (fn: (text: string) => unknown, text: string) => {
  fn(text);
  let least = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    fn(text);
    least = Math.min(least, performance.now() - started);
  }
  return least;
};
const hostile = [
  ...HOSTILE_REDACT_UNITS.map(([name, unit]) => ({ name, unit, kind: 'backtracking bait' })),
  ...MANY_SECRETS_UNITS.map(([name, unit]) => ({ name, unit, kind: 'a secret per unit' })),
].map(({ name, unit, kind }) => {
  const big = hostileText(unit, HOSTILE_CHARS);
  const ms = bestMs(redact, big);
  const doubleMs = bestMs(redact, hostileText(unit, 2 * HOSTILE_CHARS));
  return { name, kind, ms, oldMs: bestMs(oldRedact, big), growth: doubleMs / Math.max(ms, 0.01) };
});
const slowest = hostile.reduce((a, b) => (b.ms > a.ms ? b : a));
const steepest = hostile.reduce((a, b) => (b.growth > a.growth ? b : a));

const ratio = newUs / oldUs;
const newShare = newUs / daemonAdmitUs;
const oldShare = oldUs / daemonAdmitUs;
const lines = [
  '# bench/redact',
  '',
  `${N.toLocaleString('en')} tasks (mean ${meanChars.toFixed(0)} chars, one in five with a secret), \`taskPreview\` on each; admission is \`gateway.spawn\` of the same tasks (fake instant runner, cap ${CAP}) over the daemon's SQLite store and SEL file, and over the memory ones; it takes that preview.`,
  '',
  '| | µs per task | ratio (table / old) | share of daemon admission | share of in-memory admission |',
  '|---|---:|---:|---:|---:|',
  `| old detector (before issue 13) | ${oldUs.toFixed(2)} | 1.00 | ${(oldShare * 100).toFixed(1)} % | ${((oldUs / admitUs) * 100).toFixed(1)} % |`,
  `| table detector | ${newUs.toFixed(2)} | ${ratio.toFixed(2)} | ${(newShare * 100).toFixed(1)} % | ${((newUs / admitUs) * 100).toFixed(1)} % |`,
  `| admission as the daemon does it (SQLite store, SEL file; one \`spawn\`) | ${daemonAdmitUs.toFixed(2)} | | 100 % | |`,
  `| admission in memory (memory store and SEL; one \`spawn\`) | ${admitUs.toFixed(2)} | | | 100 % |`,
  '',
  'Admission takes the preview once and the SEL redacts its events again, so redaction is counted inside both admission rows.',
  '',
  `Verdict, cost per task against the old detector (goal: at most 1.5x; issue 13 added 5 shapes and the context check, issue 28 added 14 rows and 3 short keys): ${ratio <= 1.5 ? 'met' : 'MISSED'} (${ratio.toFixed(2)}x).`,
  `Verdict, share of the daemon's admission (goal: no more than the old share, and ≤ 7 %): ${newShare <= Math.max(oldShare, 0.07) && newShare <= 0.07 ? 'met' : 'MISSED'} (${(newShare * 100).toFixed(1)} % vs ${(oldShare * 100).toFixed(1)} % old).`,
  '',
  `## 1 MB of hostile input (${hostile.length} units, each repeated to ${HOSTILE_CHARS.toLocaleString('en')} chars; best of three)`,
  '',
  '| unit | kind | table ms | old detector ms | table ms 2 MB / 1 MB |',
  '|---|---|---:|---:|---:|',
  ...hostile.map(
    (h) => `| ${h.name} | ${h.kind} | ${h.ms.toFixed(1)} | ${h.oldMs.toFixed(1)} | ${h.growth.toFixed(2)} |`,
  ),
  '',
  `Verdict, 1 MB of any hostile shape (goal: under ${HOSTILE_GOAL_MS} ms each): ${slowest.ms < HOSTILE_GOAL_MS ? 'met' : 'MISSED'} (slowest: ${slowest.name}, ${slowest.ms.toFixed(1)} ms).`,
  `Verdict, linear time (goal: 2 MB costs at most ${GROWTH_GOAL}x what 1 MB does; linear is 2x, a rescanning pattern 4x): ${steepest.growth <= GROWTH_GOAL ? 'met' : 'MISSED'} (steepest: ${steepest.name}, ${steepest.growth.toFixed(2)}x).`,
];
console.log(lines.join('\n'));
writeFileSync(join(import.meta.dirname, 'results', 'redact.md'), `${lines.join('\n')}\n`);
