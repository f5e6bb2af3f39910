/**
 * The provider gateway (issue 17), two parts, each side by side in one run:
 *
 * 1. Overhead: a scripted upstream on 127.0.0.1 answering an SSE stream of 1 MB; time to first byte and
 *    throughput, called directly and through Crew's pass-through (`src/provider/provider-proxy.ts`),
 *    alternating, 200 calls each after 20 warm-up calls. The upstream and the pass-through are processes
 *    of their own, as the provider and the daemon are.
 * 2. Policy: a simulated provider with a hidden concurrency limit N (429 above N requests in flight) for
 *    N = 4, 12, 40, seeds 1–5: goodput (completed runs per minute) and 429 rate for the adaptive cap
 *    (`src/core/provider-cap.ts`, with and without the gateway's adaptive request bound) against fixed
 *    caps 3, 8 and 32. The model is in `bench/provider/model.ts`.
 *
 * Goals (the verdict states each): per-request overhead small beside a model call (TTFB added < 5 ms p50,
 * throughput ≥ 80 % of direct); adaptive goodput ≥ 90 % of the best fixed cap's for every N with a 429 rate
 * under 5 %; each fixed cap wins for one N only.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Outcome, type Policy, simulate } from './provider/model.js';

const RESPONSE_BYTES = 1024 * 1024;
const CALLS = 200;
const WARMUP = 20;
const SEEDS = [1, 2, 3, 4, 5];
const LIMITS = [4, 12, 40];
const FIXED = [3, 8, 32];
const SAFE_SHARE = 0.05;

/** Starts one of `bench/provider/servers.ts`'s processes; resolves with its port. */
function startServer(...args: string[]): Promise<{ port: number; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(import.meta.dirname, 'provider', 'servers.ts'), ...args],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.stdout?.once('data', (data: Buffer) => resolve({ port: Number(String(data).trim()), child }));
  });
}

async function overhead() {
  const upstream = await startServer('upstream', String(RESPONSE_BYTES));
  const upstreamUrl = `http://127.0.0.1:${upstream.port}`;
  const proxy = await startServer('proxy', upstreamUrl);
  const proxyUrl = `http://127.0.0.1:${proxy.port}/p/tok/openai`;
  let expected = 0;

  async function call(base: string) {
    const started = performance.now();
    const response = await fetch(`${base}/v1/chat/completions`, { method: 'POST', body: '{}' });
    expected = Number(response.headers.get('x-body-bytes'));
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let first: number | undefined;
    let bytes = 0;
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      first ??= performance.now();
      bytes += r.value.byteLength;
    }
    const total = performance.now() - started;
    if (bytes !== expected) throw new Error(`Expected ${expected} bytes, got ${bytes}`);
    return { ttfbMs: (first ?? started) - started, totalMs: total };
  }
  const direct: { ttfbMs: number; totalMs: number }[] = [];
  const through: { ttfbMs: number; totalMs: number }[] = [];
  try {
    for (let i = 0; i < WARMUP + CALLS; i++) {
      const d = await call(upstreamUrl);
      const t = await call(proxyUrl);
      if (i >= WARMUP) {
        direct.push(d);
        through.push(t);
      }
    }
  } finally {
    proxy.child.kill();
    upstream.child.kill();
  }
  return { direct, through, bytes: expected };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};
const p90 = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil(sorted.length * 0.9) - 1] ?? 0;
};
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

function policyName(policy: Policy): string {
  if (policy.kind === 'fixed') return `fixed ${policy.cap}`;
  return policy.kind === 'adaptive'
    ? 'adaptive (Crew: start cap + request bound)'
    : 'adaptive, start cap only';
}

async function main() {
  const lines: string[] = ['# bench/provider', ''];
  lines.push(
    `Run: ${new Date().toISOString()} · Node ${process.version} · ${process.platform}/${process.arch}`,
    '',
    '## 1. Gateway overhead',
    '',
  );
  const o = await overhead();
  const mb = o.bytes / (1024 * 1024);
  const rows = [
    { name: 'direct', s: o.direct },
    { name: 'through Crew', s: o.through },
  ].map(({ name, s }) => ({
    name,
    ttfb50: median(s.map((x) => x.ttfbMs)),
    ttfb90: p90(s.map((x) => x.ttfbMs)),
    total50: median(s.map((x) => x.totalMs)),
    mbps: mb / (median(s.map((x) => x.totalMs)) / 1000),
  }));
  lines.push(
    `${CALLS} calls each (after ${WARMUP} warm-up), alternating, an SSE response of ${mb.toFixed(2)} MB from a loopback upstream.`,
    '',
    '| path | TTFB p50 ms | TTFB p90 ms | total p50 ms | MB/s | ratio (crew / direct) |',
    '|---|---:|---:|---:|---:|---:|',
  );
  const [d, t] = rows as [(typeof rows)[0], (typeof rows)[0]];
  for (const r of rows) {
    lines.push(
      `| ${r.name} | ${r.ttfb50.toFixed(2)} | ${r.ttfb90.toFixed(2)} | ${r.total50.toFixed(2)} | ${r.mbps.toFixed(0)} | ${(r.mbps / d.mbps).toFixed(2)} |`,
    );
  }
  const addedTtfb = t.ttfb50 - d.ttfb50;
  const throughputShare = t.mbps / d.mbps;
  const ttfbMet = addedTtfb < 5;
  const throughputMet = throughputShare >= 0.8;

  lines.push('', '## 2. Adaptive cap against a hidden provider limit', '');
  const policies: Policy[] = [
    ...FIXED.map((cap) => ({ kind: 'fixed' as const, cap })),
    { kind: 'adaptive-starts' },
    { kind: 'adaptive' },
  ];
  const results = new Map<number, Map<string, Outcome[]>>();
  for (const n of LIMITS) {
    const byPolicy = new Map<string, Outcome[]>();
    for (const policy of policies)
      byPolicy.set(
        policyName(policy),
        SEEDS.map((seed) => simulate(n, policy, seed)),
      );
    results.set(n, byPolicy);
  }
  lines.push(
    'Seeds 1–5, 30 simulated minutes each; the mean over seeds. Goodput: completed runs per minute; 429 rate: 429s per request sent; failed: runs whose agent gave up after 4 429s on one request.',
    '',
    `| policy | ${LIMITS.map((n) => `N=${n} goodput | N=${n} 429 rate | N=${n} failed`).join(' | ')} |`,
    `|---|${LIMITS.map(() => '---:|---:|---:').join('|')}|`,
  );
  for (const policy of policies) {
    const name = policyName(policy);
    const cells = LIMITS.map((n) => {
      const outs = results.get(n)?.get(name) ?? [];
      return `${mean(outs.map((x) => x.goodputPerMin)).toFixed(2)} | ${(100 * mean(outs.map((x) => x.rateLimitedShare))).toFixed(2)} % | ${mean(outs.map((x) => x.failed)).toFixed(1)}`;
    });
    lines.push(`| ${name} | ${cells.join(' | ')} |`);
  }

  const verdicts: string[] = [];
  let allMet = ttfbMet && throughputMet;
  verdicts.push(
    `- **Gateway TTFB overhead < 5 ms (p50): ${ttfbMet ? 'met' : 'missed'}** (+${addedTtfb.toFixed(2)} ms).`,
    `- **Gateway throughput ≥ 80 % of direct for a 1 MB stream: ${throughputMet ? 'met' : 'missed'}** (${(100 * throughputShare).toFixed(0)} %).`,
  );
  const winners: string[] = [];
  const rawWinners: string[] = [];
  for (const n of LIMITS) {
    const byPolicy = results.get(n) as Map<string, Outcome[]>;
    const stats = (name: string) => {
      const outs = byPolicy.get(name) ?? [];
      return {
        goodput: mean(outs.map((x) => x.goodputPerMin)),
        share: mean(outs.map((x) => x.rateLimitedShare)),
      };
    };
    const fixed = FIXED.map((cap) => ({ cap, ...stats(`fixed ${cap}`) }));
    const safe = fixed.filter((f) => f.share < SAFE_SHARE).sort((a, b) => b.goodput - a.goodput)[0];
    const raw = [...fixed].sort((a, b) => b.goodput - a.goodput)[0];
    const adaptive = stats(policyName({ kind: 'adaptive' }));
    const vsSafe = safe ? adaptive.goodput / safe.goodput : 0;
    const vsRaw = raw ? adaptive.goodput / raw.goodput : 0;
    const met = vsSafe >= 0.9 && adaptive.share < SAFE_SHARE;
    allMet &&= met;
    winners.push(`N=${n}: fixed ${safe?.cap}`);
    rawWinners.push(`N=${n}: fixed ${raw?.cap}`);
    verdicts.push(
      `- **N=${n}: adaptive ≥ 90 % of the best fixed cap with a 429 rate under 5 %, and itself under 5 %: ${met ? 'met' : 'missed'}** — ${adaptive.goodput.toFixed(2)}/min at ${(100 * adaptive.share).toFixed(2)} % 429s = ${(100 * vsSafe).toFixed(0)} % of fixed ${safe?.cap} (${safe?.goodput.toFixed(2)}/min). Against the best fixed cap by goodput alone, whatever its 429s (fixed ${raw?.cap}, ${raw?.goodput.toFixed(2)}/min at ${(100 * (raw?.share ?? 0)).toFixed(1)} % 429s): ${(100 * vsRaw).toFixed(0)} %${vsRaw >= 0.9 ? '' : ' (missed on that reading)'}.`,
    );
  }
  const distinct = new Set(winners.map((w) => w.split(': ')[1])).size === LIMITS.length;
  allMet &&= distinct;
  verdicts.push(
    `- **Each fixed cap wins for one N only: ${distinct ? 'met' : 'missed'}** (best fixed cap under 5 % 429s: ${winners.join(', ')}; by goodput alone: ${rawWinners.join(', ')}).`,
  );
  lines.push(
    '',
    '## Verdict',
    '',
    ...verdicts,
    '',
    `Overall: **${allMet ? 'all goals met' : 'goals missed'}**.`,
  );
  const text = `${lines.join('\n')}\n`;
  console.log(text);
  const dir = join(import.meta.dirname, 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'provider.md'), text);
  if (!allMet) process.exitCode = 1;
}

await main();
