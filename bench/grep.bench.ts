/**
 * bench/grep: the regex bombs of issue 13 over a 100k-line transcript of `a`/`b` lines, paged with grep
 * the old way (on the event loop, only the matcher's work budget to stop it) and the new way (a pool
 * thread within `agent.grep_budget_ms`), while a 2 ms interval timer measures how long the event loop
 * is held. An idle window first gives this machine's own noise.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realClock } from '../src/clock/real-clock.js';
import { FileTranscripts } from '../src/transcripts/file-transcripts.js';
import { abTranscript, REGEX_BOMBS } from '../test/helpers/regex-bombs.js';
import { buildGrepWorker } from './grep/build-worker.js';

const LINES = 100_000;
const BUDGET_MS = 1000;
const STALL_GOAL_MS = 50;

const home = mkdtempSync(join(tmpdir(), 'crew-bench-grep-'));
mkdirSync(join(home, 'subagents', 'r1'), { recursive: true });
writeFileSync(join(home, 'subagents', 'r1', 'result.txt'), abTranscript(LINES));
const workerFile = await buildGrepWorker(home);

interface Measured {
  tookMs: number;
  worstGapMs: number;
  toLine: number;
}

/** Runs `fn` while a 2 ms interval timer records its worst gap: how long the loop was held. */
async function measure(fn: () => Promise<number>): Promise<Measured> {
  let last = performance.now();
  let worstGapMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worstGapMs = Math.max(worstGapMs, now - last);
    last = now;
  }, 2);
  const started = performance.now();
  const toLine = await fn();
  const tookMs = performance.now() - started;
  clearInterval(timer);
  return { tookMs, worstGapMs: Math.max(worstGapMs, performance.now() - last), toLine };
}

const onLoop = new FileTranscripts(home, {
  maxBytes: Number.MAX_SAFE_INTEGER,
  clock: realClock,
  grepWorkerFile: null,
  grepBudgetMs: 600_000, // the old path had no wall-clock budget
});
const pooled = new FileTranscripts(home, {
  maxBytes: Number.MAX_SAFE_INTEGER,
  clock: realClock,
  grepWorkerFile: workerFile,
  grepBudgetMs: BUDGET_MS,
});
const grep = (store: FileTranscripts, pattern: string) => async () =>
  (await store.page('r1', { grep: pattern, limit: 1000, maxChars: 200_000 })).toLine ?? 0;

const idle = await measure(async () => {
  await new Promise((resolve) => setTimeout(resolve, 1500));
  return 0;
});
const rows: string[] = [];
const verdicts: string[] = [];
for (const pattern of REGEX_BOMBS) {
  const before = await measure(grep(onLoop, pattern));
  const after = await measure(grep(pooled, pattern));
  rows.push(
    `| \`${pattern}\` | on the event loop (before) | ${before.tookMs.toFixed(0)} | ${before.toLine} | ${before.worstGapMs.toFixed(1)} |`,
    `| \`${pattern}\` | pool thread, ${BUDGET_MS} ms budget | ${after.tookMs.toFixed(0)} | ${after.toLine} | ${after.worstGapMs.toFixed(1)} |`,
  );
  const stallAddedMs = after.worstGapMs - idle.worstGapMs;
  verdicts.push(
    `Verdict \`${pattern}\`, worst event-loop stall under ${STALL_GOAL_MS} ms: ${after.worstGapMs < STALL_GOAL_MS ? 'met' : stallAddedMs < STALL_GOAL_MS ? `met over this machine's idle noise (${after.worstGapMs.toFixed(1)} ms with ${idle.worstGapMs.toFixed(1)} ms idle)` : 'MISSED'}; before ${before.worstGapMs.toFixed(0)} ms.`,
    `Verdict \`${pattern}\`, answers within the budget (+ 500 ms for reading to count the lines): ${after.tookMs < BUDGET_MS + 500 ? 'met' : 'MISSED'} (${after.tookMs.toFixed(0)} ms).`,
  );
}
await pooled.close();
await onLoop.close();
rmSync(home, { recursive: true, force: true });

const out = [
  '# bench/grep',
  '',
  `${LINES.toLocaleString('en')} lines of 80 random \`a\`/\`b\`, \`limit=1000\`. "Lines scanned" is the page's last line: where the call stopped (the old path stops on the matcher's work budget, the new one on \`agent.grep_budget_ms\`). Worst gap: the longest a 2 ms timer on the caller's event loop waited. Idle window: ${idle.worstGapMs.toFixed(1)} ms (this machine's noise).`,
  '',
  '| pattern | where | ms | lines scanned | worst event-loop gap ms |',
  '|---|---|---:|---:|---:|',
  ...rows,
  '',
  ...verdicts,
];
console.log(out.join('\n'));
writeFileSync(join(import.meta.dirname, 'results', 'grep.md'), `${out.join('\n')}\n`);
