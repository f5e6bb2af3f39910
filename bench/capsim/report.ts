/** The capsim result file (`bench/results/capsim.md`) and chart (`capsim.svg`), from the runs. */
import { loadavg } from 'node:os';
import { defaultConfig } from '../../src/core/config-schema.js';
import { SETTLE_TICKS } from '../../src/host/sampler.js';
import {
  CPU_CORES,
  DURATION_MEDIAN_SECS,
  DURATION_SIGMA,
  type Host,
  MEM_MAX_GB,
  MEM_MEDIAN_GB,
  MEM_P90_GB,
  MEM_START_GB,
  type Outcome,
  type Policy,
  policyName,
  RECOMPUTE_EVERY,
  SYSTEM_GB,
  TASKS,
} from './model.js';
import {
  bestSafeFixed,
  capSafeOnEverySeed,
  judgePolicy,
  median,
  type PolicyVerdict,
  pct,
  ratioTo,
  type SeedRun,
  safeOnEverySeed,
  seedsOwnBestSafe,
  THROUGHPUT_TARGET,
} from './verdict.js';

/** Everything one host was run through. */
export interface HostRuns {
  host: Host;
  /** Seeds 1–10 under every reference policy: what the verdict is judged on. */
  judged: SeedRun[];
  /** The same seeds under the auto policy with other buffers, for choosing the buffer. */
  bufferSweep: { bufferGb: number; runs: SeedRun[] }[];
  /** Judged and held-out seeds under the auto policy with other settle counts, for choosing `SETTLE_TICKS`. */
  settleSweep: { settleTicks: number; runs: SeedRun[] }[];
  /** Seeds not used to choose the buffer, under the reference policies: a check, not judged. */
  heldOut: SeedRun[];
  /** Other auto variants over the judged and held-out seeds, with the fixed caps: not judged. */
  whatIfs: { policy: Policy; runs: SeedRun[] }[];
}

/** The auto policy as the gateway runs it now: with the memory pause, the count cap by the mean (issue 28). */
const isAuto = (o: Outcome) => o.policy.kind === 'auto' && o.policy.pauseMarginGb !== null;
/** The auto policy with the memory pause off (`agent.pause_margin_gb` 0): the count cap by the p90. */
const isNoPause = (o: Outcome) => o.policy.kind === 'auto' && o.policy.pauseMarginGb === null;
const isCount = (o: Outcome) => o.policy.kind === 'count';
const isP90Gate = (o: Outcome) => o.policy.kind === 'p90gate';
const isSpreadGate = (o: Outcome) => o.policy.kind === 'spreadgate';
const isMeanCap = (o: Outcome) => o.policy.kind === 'meancap';
const samePolicy = (p: Policy) => (o: Outcome) => policyName(o.policy) === policyName(p);

function seedRange(runs: readonly SeedRun[]): string {
  return `${runs[0]?.seed}–${runs.at(-1)?.seed}`;
}

function seeds(n: number): string {
  return n === 1 ? '1 seed' : `${n} seeds`;
}

function sumOf(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

function killsLine(v: PolicyVerdict, runs: readonly SeedRun[]): string {
  if (v.seedsWithKills.length === 0) return `none on any of ${runs.length} seeds`;
  const perSeed = v.seedsWithKills.map(
    (seed) => `seed ${seed}: ${v.kills[runs.findIndex((r) => r.seed === seed)]}`,
  );
  return `${sumOf(v.kills)} on ${v.seedsWithKills.length} of ${runs.length} seeds (${perSeed.join(', ')})`;
}

function verdictSection(all: readonly HostRuns[]): { text: string; isMet: boolean } {
  const range = seedRange(all[0]?.judged ?? []);
  const lines = [
    '## Verdict',
    '',
    `Rule, per host over seeds ${range} (docs/decisions.md, "capsim's reference is the fixed cap safe on every ` +
      `seed"): the reference is the fixed cap an operator could pick without knowing the seed, the one with zero ` +
      `out-of-memory kills on every seed (of those, the most tasks per hour over the seeds). The auto policy meets ` +
      `the target on a seed when it has zero kills there and at least ${THROUGHPUT_TARGET * 100}% of the ` +
      `reference's tasks per hour on that seed; a host meets it only when auto meets it on every seed, the run ` +
      `only when every host does, and the bench exits 1 otherwise (fixed 1 never exceeds the memory of these ` +
      `hosts, so there is always a reference). The stricter reading, each seed against its own best safe fixed ` +
      `cap (a cap that may be safe on that seed by luck and kill on the others), is reported beside it with its ` +
      'misses; it is not the rule.',
    '',
    '| host | policy | OOM kills per seed | seeds with kills | vs the reference, min / median | vs each seed’s best safe fixed (stricter), min / median | zero kills on every seed | ≥ 90% of the reference on every seed | ≥ 90% of each seed’s best safe fixed (stricter) |',
    '|---|---|---|---:|---|---|---|---|---|',
  ];
  let isMet = true;
  const goals: string[] = [];
  for (const { host, judged } of all) {
    const reference = safeOnEverySeed(judged);
    for (const [label, pick] of [
      ['count cap only (before the gate)', isCount],
      ['p90 gate, buffer 2 GiB (before the spread margin)', isP90Gate],
      ['spread gate, every run at its mean (before settled runs)', isSpreadGate],
      ['auto before issue 28 (count cap by the mean peak)', isMeanCap],
      ['auto with the pause off (count cap by the p90)', isNoPause],
      ['auto (the memory pause; count cap by the mean peak)', isAuto],
    ] as const) {
      const v = judgePolicy(host, judged, pick, reference);
      const strict = judgePolicy(host, judged, pick, seedsOwnBestSafe);
      const goal = (misses: readonly number[]) =>
        misses.length === 0 ? 'met' : `**missed** (${seeds(misses.length)})`;
      lines.push(
        `| ${host.name} | ${label} | ${v.kills.join(' ')} | ${v.seedsWithKills.length} / ${judged.length} | ` +
          `${pct(v.minRatio)} / ${pct(v.medianRatio)} | ${pct(strict.minRatio)} / ${pct(strict.medianRatio)} | ` +
          `${goal(v.seedsWithKills)} | ${goal(v.seedsShort)} | ${goal(strict.seedsShort)} |`,
      );
      if (pick !== isAuto) continue;
      isMet &&= v.isMet;
      const shortOf = (ref: typeof reference, misses: readonly number[]) =>
        misses
          .map((seed) => {
            const run = judged.find((r) => r.seed === seed) as SeedRun;
            const best = ref(run);
            const auto = run.outcomes.find(isAuto) as Outcome;
            return `seed ${seed}: ${pct(ratioTo(auto, best))} of ${best ? policyName(best.policy) : 'n/a'}`;
          })
          .join(', ');
      const short = shortOf(reference, v.seedsShort);
      const strictShort = shortOf(seedsOwnBestSafe, strict.seedsShort);
      const before = judgePolicy(host, judged, isMeanCap, reference);
      const isNoWorse =
        (v.minRatio ?? 0) >= (before.minRatio ?? 0) - 1e-12 &&
        (v.medianRatio ?? 0) >= (before.medianRatio ?? 0) - 1e-12;
      isMet &&= isNoWorse;
      goals.push(
        `- **${host.name}, zero kills on every seed: ${v.seedsWithKills.length === 0 ? 'met' : 'missed'}.** ` +
          `Kills: ${killsLine(v, judged)}.`,
        `- **${host.name}, no worse than auto before issue 28 against the reference: ` +
          `${isNoWorse ? 'met' : 'missed'}** (min ${pct(v.minRatio)} vs ${pct(before.minRatio)}, median ` +
          `${pct(v.medianRatio)} vs ${pct(before.medianRatio)}).`,
        `- **${host.name}, ≥ ${THROUGHPUT_TARGET * 100}% of the reference (${referenceName(judged)}) on every seed: ` +
          `${v.seedsShort.length === 0 ? 'met' : 'missed'}** (min ${pct(v.minRatio)}, median ${pct(v.medianRatio)}` +
          `${short ? `; short on ${short}` : ''}).`,
        `- ${host.name}, the stricter reading, ≥ ${THROUGHPUT_TARGET * 100}% of each seed's best safe fixed cap ` +
          `(reported, not the rule): ${strict.seedsShort.length === 0 ? 'met' : '**missed**'} (min ` +
          `${pct(strict.minRatio)}, median ${pct(strict.medianRatio)}${strictShort ? `; short on ${strictShort}` : ''}).`,
      );
    }
  }
  lines.push('', ...goals, '', `Overall: **${isMet ? 'target met' : 'target missed'}**.`, '');
  lines.push(...heldOutLines(all), '');
  return { text: lines.join('\n'), isMet };
}

/** The same goals for auto on the held-out seeds: reported beside the verdict, not part of it. */
function heldOutLines(all: readonly HostRuns[]): string[] {
  const lines = [
    `Held out, seeds ${seedRange(all[0]?.heldOut ?? [])} (not judged: a check that the judged seeds were not ` +
      'fitted; the reference is the fixed cap safe on every held-out seed):',
    '',
  ];
  for (const { host, heldOut } of all) {
    const v = judgePolicy(host, heldOut, isAuto, safeOnEverySeed(heldOut));
    const before = judgePolicy(host, heldOut, isMeanCap, safeOnEverySeed(heldOut));
    const strict = judgePolicy(host, heldOut, isAuto, seedsOwnBestSafe);
    const shortOn = (misses: readonly number[]) =>
      misses.length > 0 ? `; short on seed${misses.length > 1 ? 's' : ''} ${misses.join(', ')}` : '';
    lines.push(
      `- ${host.name}: kills: ${killsLine(v, heldOut)}; ≥ ${THROUGHPUT_TARGET * 100}% of the reference ` +
        `(${referenceName(heldOut)}) on ${heldOut.length - v.seedsShort.length} of ${heldOut.length} seeds ` +
        `(min ${pct(v.minRatio)}, median ${pct(v.medianRatio)}${shortOn(v.seedsShort)}; auto before issue 28: ` +
        `min ${pct(before.minRatio)}, median ${pct(before.medianRatio)}, kills ${killsLine(before, heldOut)}); of each seed's best ` +
        `safe fixed cap (stricter) on ${heldOut.length - strict.seedsShort.length} of ${heldOut.length} (min ` +
        `${pct(strict.minRatio)}, median ${pct(strict.medianRatio)}${shortOn(strict.seedsShort)}).`,
    );
  }
  return lines;
}

/**
 * Every kill on the judged seeds under the auto policy with the pause off and on: which run died, how the
 * gate let it start, and which live runs were still growing (their true peak against what the gate charged).
 */
function killSection(all: readonly HostRuns[]): string {
  const lines = [
    `## Why runs were killed (judged seeds ${seedRange(all[0]?.judged ?? [])}, traced)`,
    '',
    'The killed run is the newest live one (as the model kills); "charged" is what the reservation gate took ' +
      "each growing run at (the learned mean peak, or what it held if more; a settled run's mark).",
    '',
  ];
  for (const { host, judged } of all) {
    for (const [label, pick] of [
      ['auto, pause off', isNoPause],
      ['auto', isAuto],
    ] as const) {
      const traced = judged.flatMap((run) =>
        (run.outcomes.find(pick) as Outcome).killTraces.map((k) => ({ seed: run.seed, k })),
      );
      lines.push(
        `- ${host.name}, ${label}: ${traced.length === 0 ? 'no kills.' : `${traced.length} kills:`}`,
      );
      for (const { seed, k } of traced) {
        lines.push(
          `  - seed ${seed}, at ${k.atSecs.toFixed(0)} s: ${k.killed}; ${k.liveRuns} live (${k.pausedRuns} paused), ` +
            `growing: ${k.growing.length === 0 ? 'none' : k.growing.join('; ')}.`,
        );
      }
    }
  }
  lines.push('');
  return lines.join('\n');
}

/**
 * For each judged seed where auto falls short of the throughput target: how many runs each policy kept in
 * flight and what held auto's queue back, beside the seed's best safe fixed cap and the judged rivals.
 */
function shortSeedSection(all: readonly HostRuns[]): string {
  const lines: string[] = [];
  for (const { host, judged } of all) {
    const v = judgePolicy(host, judged, isAuto, seedsOwnBestSafe);
    for (const seed of v.seedsShort) {
      const run = judged.find((r) => r.seed === seed) as SeedRun;
      const auto = run.outcomes.find(isAuto) as Outcome;
      const best = bestSafeFixed(run.outcomes);
      if (best === undefined) continue;
      const shown = [
        auto,
        run.outcomes.find(isSpreadGate) as Outcome,
        best,
        ...rivals(judged).map((p) => run.outcomes.find(samePolicy(p)) as Outcome),
      ].filter((o, i, list) => list.indexOf(o) === i);
      const most = Math.max(...shown.map((o) => o.secsInFlight.length - 1));
      // With work queued something always runs, so the counts start at 1.
      const counts = Array.from({ length: most }, (_, i) => i + 1);
      // Below the CPU limit a run's speed does not depend on the others, so tasks per hour go with the
      // runs in flight: the target needs about this many on average.
      const neededInFlight = (THROUGHPUT_TARGET * best.tasksPerHour * auto.meanRunning) / auto.tasksPerHour;
      lines.push(
        `## Why auto is short of the stricter reading on ${host.name}, seed ${seed} (traced)`,
        '',
        `Auto reached ${pct(ratioTo(auto, best))} of ${policyName(best.policy)}, the seed's best safe fixed cap. ` +
          `Share of the run's time with n runs in flight, and of the time with tasks queued, what held them: ` +
          `the count cap full, or the reservation and per-spawn memory gates with room under the count cap.`,
        '',
        `| policy | tasks/hour (kills) | mean in flight | ${counts.map((n) => `${n} in flight`).join(' | ')} | queued behind the count cap | queued behind the gates |`,
        `|---|---:|---:|${counts.map(() => '---:').join('|')}|---:|---:|`,
      );
      for (const o of shown) {
        const share = (secs: number) => `${((100 * secs) / o.makespanSecs).toFixed(1)}%`;
        lines.push(
          `| ${policyName(o.policy)} | ${o.tasksPerHour.toFixed(0)} (${o.kills}) | ${o.meanRunning.toFixed(2)} | ` +
            `${counts.map((n) => share(o.secsInFlight[n] ?? 0)).join(' | ')} | ${share(o.heldByCapSecs)} | ` +
            `${share(o.heldByGateSecs)} |`,
        );
      }
      lines.push(
        '',
        `${pct(THROUGHPUT_TARGET)} of ${policyName(best.policy)} takes about ${neededInFlight.toFixed(2)} runs in ` +
          `flight on average; auto kept ${auto.meanRunning.toFixed(2)}.`,
        '',
      );
    }
  }
  return lines.join('\n');
}

function referenceName(runs: readonly SeedRun[]): string {
  const cap = capSafeOnEverySeed(runs);
  return cap === undefined ? 'none' : `fixed ${cap}`;
}

function seedMatrix({ host, judged }: HostRuns): string {
  const policies = judged[0]?.outcomes.map((o) => o.policy) ?? [];
  const lines = [
    `### ${host.name}: tasks/hour (OOM kills) per seed`,
    '',
    `| policy | ${judged.map((r) => `seed ${r.seed}`).join(' | ')} |`,
    `|---|${judged.map(() => '---:').join('|')}|`,
  ];
  for (const policy of policies) {
    const cells = judged.map((run) => {
      const o = run.outcomes.find(samePolicy(policy)) as Outcome;
      const best = bestSafeFixed(run.outcomes) === o ? '**' : '';
      return `${best}${o.tasksPerHour.toFixed(0)}${best} (${o.kills})`;
    });
    lines.push(`| ${policyName(policy)} | ${cells.join(' | ')} |`);
  }
  const auto = judged.map((r) => r.outcomes.find(isAuto) as Outcome);
  const caps = auto.map((o) => `${Math.min(...o.caps)}–${Math.max(...o.caps)}`);
  const mean = auto.map((o) => o.meanRunning.toFixed(1));
  const before = judged.map((r) => (r.outcomes.find(isSpreadGate) as Outcome).meanRunning.toFixed(1));
  const rivalsInFlight = rivals(judged).map(
    (p) =>
      `${policyName(p)}: ${judged.map((r) => (r.outcomes.find(samePolicy(p)) as Outcome).meanRunning.toFixed(1)).join(', ')}`,
  );
  lines.push(
    '',
    `Bold: the seed's best safe fixed cap (the stricter reading's reference). The rule's reference, safe on ` +
      `every seed: ${referenceName(judged)}. Auto's count cap over the run, per seed: ${caps.join(', ')}. ` +
      `Mean runs in flight, per seed: auto ${mean.join(', ')}; spread gate (before) ${before.join(', ')}; ` +
      `${rivalsInFlight.join('; ')}.`,
    '',
  );
  return lines.join('\n');
}

/**
 * The buffer rule, kills first: the smallest buffer tried with zero kills on every seed of every host (a
 * kill is never traded for throughput, and past that point more buffer only gives throughput away); with
 * none kill-free, the largest buffer at which the smallest host's median seed still reaches the
 * throughput target. Only the smallest host is short of memory often enough for the buffer to matter.
 */
export function chooseBufferGb(all: readonly HostRuns[]): number | undefined {
  const small = all[0];
  if (small === undefined) return undefined;
  const killFree = small.bufferSweep.filter((b) =>
    all.every(
      (h) =>
        judgePolicy(
          h.host,
          h.bufferSweep.find((x) => x.bufferGb === b.bufferGb)?.runs ?? [],
          isAuto,
          seedsOwnBestSafe,
        ).seedsWithKills.length === 0,
    ),
  );
  if (killFree.length > 0) return killFree[0]?.bufferGb;
  const fits = small.bufferSweep.filter(
    (b) => (judgePolicy(small.host, b.runs, isAuto, seedsOwnBestSafe).medianRatio ?? 0) >= THROUGHPUT_TARGET,
  );
  return fits.at(-1)?.bufferGb;
}

function bufferSection(all: readonly HostRuns[], defaultGb: number): string {
  const chosenGb = chooseBufferGb(all);
  const agrees =
    chosenGb === defaultGb
      ? `The rule picks ${chosenGb} GiB, the default.`
      : `**The rule picks ${chosenGb ?? 'none'} GiB, but the default is ${defaultGb} GiB: revisit the default.**`;
  const small = all[0];
  const killFreeGb = small?.bufferSweep
    .filter((b) => b.runs.every((r) => (r.outcomes.find(isAuto) as Outcome).kills === 0))
    .map((b) => b.bufferGb);
  const killFree =
    killFreeGb === undefined || killFreeGb.length === 0
      ? `No buffer tried has zero kills on every seed there.`
      : `Zero kills on every seed there takes a buffer of ${killFreeGb.join(' or ')} GiB.`;
  const lines = [
    `## Choosing \`agent.reservation_buffer_gb\` (seeds ${seedRange(all[0]?.judged ?? [])})`,
    '',
    'The auto policy with other buffers, each against the same seeds and fixed caps. Rule, kills first: the ' +
      'smallest buffer tried with zero kills on every seed of every host; with none, the largest buffer at which ' +
      `the ${all[0]?.host.name} host's median seed still reaches ${THROUGHPUT_TARGET * 100}% of its best safe fixed ` +
      `cap. Only that host is short of memory often enough for the buffer to matter. ${killFree} ${agrees}`,
    '',
    '| buffer GiB | host | seeds with kills | kills | vs best safe fixed, min / median | seeds short of 90% |',
    '|---:|---|---:|---:|---|---:|',
  ];
  const buffers = all[0]?.bufferSweep.map((b) => b.bufferGb) ?? [];
  for (const bufferGb of buffers) {
    for (const h of all) {
      const runs = h.bufferSweep.find((b) => b.bufferGb === bufferGb)?.runs ?? [];
      const v = judgePolicy(h.host, runs, isAuto, seedsOwnBestSafe);
      const mark = bufferGb === defaultGb ? '**' : '';
      lines.push(
        `| ${mark}${bufferGb}${mark} | ${h.host.name} | ${v.seedsWithKills.length} | ${sumOf(v.kills)} | ` +
          `${pct(v.minRatio)} / ${pct(v.medianRatio)} | ${v.seedsShort.length} |`,
      );
    }
  }
  lines.push('');
  return lines.join('\n');
}

function settleSection(all: readonly HostRuns[]): string {
  const runs = all[0]?.settleSweep[0]?.runs ?? [];
  const lines = [
    `## Choosing \`SETTLE_TICKS\` (seeds ${seedRange(runs)}, judged and held-out apart)`,
    '',
    `The auto policy with a run counted as settled after 1, 2, 3 or 5 sampler ticks (` +
      `${defaultConfig()['host.sample_interval_secs']} s each) without a new high-water mark; ` +
      `\`SETTLE_TICKS\` = ${SETTLE_TICKS}. Fewer ticks settle runs sooner (more throughput); the kills do not ` +
      'fall steadily with more ticks, which is what a rare event looks like at this many seeds.',
    '',
    `| ticks | host | judged seeds ${seedRange(all[0]?.judged ?? [])}: seeds with kills / kills | min / median | short of 90% | held-out seeds ${seedRange(all[0]?.heldOut ?? [])}: seeds with kills / kills | min / median | short of 90% |`,
    '|---:|---|---|---|---:|---|---|---:|',
  ];
  for (const settleTicks of all[0]?.settleSweep.map((x) => x.settleTicks) ?? []) {
    for (const h of all) {
      const sweep = h.settleSweep.find((x) => x.settleTicks === settleTicks)?.runs ?? [];
      const lastJudged = h.judged.at(-1)?.seed ?? 0;
      const cells = [sweep.filter((r) => r.seed <= lastJudged), sweep.filter((r) => r.seed > lastJudged)].map(
        (part) => {
          const v = judgePolicy(h.host, part, isAuto, seedsOwnBestSafe);
          return `${v.seedsWithKills.length} / ${sumOf(v.kills)} | ${pct(v.minRatio)} / ${pct(v.medianRatio)} | ${v.seedsShort.length}`;
        },
      );
      const mark = settleTicks === SETTLE_TICKS ? '**' : '';
      lines.push(`| ${mark}${settleTicks}${mark} | ${h.host.name} | ${cells.join(' | ')} |`);
    }
  }
  lines.push('');
  return lines.join('\n');
}

/** The fixed caps that were most often a judged seed's best safe cap (at most two): auto's rivals. */
function rivals(judged: readonly SeedRun[]): Policy[] {
  const counts = new Map<string, { policy: Policy; n: number }>();
  for (const run of judged) {
    const best = bestSafeFixed(run.outcomes);
    if (best === undefined) continue;
    const entry = counts.get(policyName(best.policy)) ?? { policy: best.policy, n: 0 };
    entry.n++;
    counts.set(policyName(best.policy), entry);
  }
  return [...counts.values()]
    .sort((a, b) => b.n - a.n)
    .slice(0, 2)
    .map((e) => e.policy);
}

function heldOutSection(all: readonly HostRuns[]): string {
  const lines = [
    `## Held-out seeds ${seedRange(all[0]?.heldOut ?? [])} (not used to choose the buffer; reported, not judged)`,
    '',
    'Auto and the count cap alone, with the fixed caps that were most often the best safe one on the judged seeds.',
    '',
    '| host | policy | seeds with kills | kills | vs best safe fixed, min / median | seeds short of 90% |',
    '|---|---|---:|---:|---|---:|',
  ];
  for (const h of all) {
    const picks: [string, (o: Outcome) => boolean][] = [
      ['count cap only', isCount],
      ['p90 gate (before)', isP90Gate],
      ['spread gate (before)', isSpreadGate],
      ['auto before issue 28', isMeanCap],
      ['auto, pause off', isNoPause],
      ['auto', isAuto],
      ...rivals(h.judged).map((p): [string, (o: Outcome) => boolean] => [policyName(p), samePolicy(p)]),
    ];
    for (const [label, pick] of picks) {
      const v = judgePolicy(h.host, h.heldOut, pick, seedsOwnBestSafe);
      lines.push(
        `| ${h.host.name} | ${label} | ${v.seedsWithKills.length} / ${h.heldOut.length} | ${sumOf(v.kills)} | ` +
          `${pct(v.minRatio)} / ${pct(v.medianRatio)} | ${v.seedsShort.length} |`,
      );
    }
  }
  lines.push('');
  return lines.join('\n');
}

function whatIfSection(all: readonly HostRuns[]): string {
  const lines: string[] = [];
  for (const h of all.filter((x) => x.whatIfs.length > 0)) {
    const runs = [...h.judged, ...h.heldOut];
    lines.push(
      `## What-ifs on ${h.host.name} (seeds ${seedRange(runs)}, not judged)`,
      '',
      `- **Steadier learned costs**: the mean and spread learned over the last ` +
        `${defaultConfig()['agent.cost_samples_per_agent']} samples are noisy, and when they read low the gate ` +
        'packs more runs. Here the gate learns them over a longer log (the count cap keeps the default); the ' +
        'gateway would have to keep that many samples per agent.',
      `- **Oracle**: a bound, not a policy: it knows where every live run will peak, growing or not, and ` +
        `assumes each start may reach the ${MEM_MAX_GB} GiB maximum, so it cannot kill. What it gains over auto ` +
        "is what the gate loses by not knowing the growing runs' peaks.",
      '',
      '| policy | seeds with kills | kills | vs best safe fixed, min / median | seeds short of 90% |',
      '|---|---:|---:|---|---:|',
    );
    const rows: [string, readonly SeedRun[], (o: Outcome) => boolean][] = [
      ['count cap only', runs, isCount],
      ['spread gate (before)', runs, isSpreadGate],
      ['auto before issue 28', runs, isMeanCap],
      ['auto, pause off', runs, isNoPause],
      ['auto', runs, isAuto],
      ...h.whatIfs.map((w): [string, readonly SeedRun[], (o: Outcome) => boolean] => [
        policyName(w.policy),
        w.runs,
        samePolicy(w.policy),
      ]),
      ...rivals(h.judged).map((p): [string, readonly SeedRun[], (o: Outcome) => boolean] => [
        policyName(p),
        runs,
        samePolicy(p),
      ]),
    ];
    for (const [label, seedRuns, pick] of rows) {
      const v = judgePolicy(h.host, seedRuns, pick, seedsOwnBestSafe);
      lines.push(
        `| ${label} | ${v.seedsWithKills.length} / ${seedRuns.length} | ${sumOf(v.kills)} | ` +
          `${pct(v.minRatio)} / ${pct(v.medianRatio)} | ${v.seedsShort.length} |`,
      );
    }
    lines.push('');
  }
  return lines.join('\n');
}

/** Context: the fixed caps an operator who knew the workload could have pinned. */
function safeEverywhereSection(all: readonly HostRuns[]): string {
  const lines = [
    `## Fixed caps with zero kills on every seed, ${seedRange([...(all[0]?.judged ?? []), ...(all[0]?.heldOut ?? [])])} (context)`,
    '',
    '| host | largest fixed cap with zero kills on every seed, judged and held out | its tasks/hour, median | auto / it, min / median |',
    '|---|---|---:|---|',
  ];
  for (const h of all) {
    const runs = [...h.judged, ...h.heldOut];
    const fixed = (runs[0]?.outcomes ?? []).filter((o) => o.policy.kind === 'fixed').map((o) => o.policy);
    const safe = fixed.filter((p) =>
      runs.every((r) => (r.outcomes.find(samePolicy(p)) as Outcome).kills === 0),
    );
    const largest = safe.at(-1);
    if (largest === undefined) {
      lines.push(`| ${h.host.name} | none | n/a | n/a |`);
      continue;
    }
    const rates = runs.map((r) => (r.outcomes.find(samePolicy(largest)) as Outcome).tasksPerHour);
    const ratios = runs
      .map((r) => ratioTo(r.outcomes.find(isAuto) as Outcome, r.outcomes.find(samePolicy(largest))))
      .filter((x): x is number => x !== undefined)
      .sort((a, b) => a - b);
    lines.push(
      `| ${h.host.name} | ${policyName(largest)} | ${median([...rates].sort((a, b) => a - b))?.toFixed(0)} | ` +
        `${pct(ratios[0])} / ${pct(median(ratios))} |`,
    );
  }
  lines.push('');
  return lines.join('\n');
}

export function markdown(
  all: readonly HostRuns[],
  elapsedMs: number,
  loadAtStart: readonly number[],
): { text: string; isMet: boolean } {
  const loads = (values: readonly number[]) => values.map((x) => x.toFixed(2)).join(' / ');
  const config = defaultConfig();
  const verdict = verdictSection(all);
  const header = [
    '# capsim: the auto cap (count cap + reservation gate) against fixed caps',
    '',
    `${TASKS} tasks per seed: duration lognormal median ${DURATION_MEDIAN_SECS} s (σ ${DURATION_SIGMA}); peak memory ` +
      `lognormal median ${MEM_MEDIAN_GB} GiB, p90 ${MEM_P90_GB} GiB, capped at ${MEM_MAX_GB} GiB, ramping from ` +
      `${MEM_START_GB} GiB over the first half; ${CPU_CORES} cores each. ${SYSTEM_GB} GiB kept for the system; the ` +
      `per-spawn memory gate ${config['agent.spawn_min_memory_gb']} GiB at admission; design defaults otherwise ` +
      `(cap buffer ${config['agent.subagent_mem_buffer_pct']}%, fallbacks ${config['agent.subagent_cost_gb']} GiB / ` +
      `${config['agent.subagent_cpu_cost_cores']} core, p90 of the last ${config['agent.cost_samples_per_agent']} ` +
      `samples, auto max ${config['agent.subagent_auto_max']}). The count cap is recomputed every ` +
      `${RECOMPUTE_EVERY} completions, as a restart would.`,
    '',
    `- **auto**: the count cap and the reservation gate (\`reserveStarts\`, buffer ` +
      `${config['agent.reservation_buffer_gb']} GiB = \`agent.reservation_buffer_gb\`), consulted at every ` +
      `completion, kill and sampler tick (${config['host.sample_interval_secs']} s), seeing each run's memory at the ` +
      `last tick and the learned mean peak and spread relearned at each completion; its count cap divides by ` +
      'the mean peak with the pause on, the p90 with it off (`countCapMemCostGb`). A run whose high-water mark has not risen for ' +
      `${SETTLE_TICKS} ticks is settled: the gate takes it at that mark, with no expectation and no spread ` +
      '(`ProcessTreeSampler.settledGb`); the others at the mean peak with the spread margin.',
    `- **auto** also has the memory pause (issue 28, item 7; \`decidePauses\`, margin ` +
      `${config['agent.pause_margin_gb']} GiB = \`agent.pause_margin_gb\`): at each sampler tick, when the memory ` +
      'left is under the margin, every run still growing is paused (no work, no growth, no CPU; it keeps what ' +
      'it holds), one run always kept going: a settled one if any, else the growing run that holds the most; ' +
      'paused runs resume, oldest first, once what each may still grow (the mean peak less what it holds) fits ' +
      'above the margin, or when nothing else goes. No run starts while one is paused. With the pause on, the ' +
      'count cap divides by the mean peak (`isMemoryPauseOn`), as the gateway does. **Every run is pausable ' +
      'here**: the product pauses command runs, and ACP runs once they pause too (issue 28); a run the pause ' +
      'cannot stop is not modelled.',
    '- **auto, pause off**: the same rule with `agent.pause_margin_gb` 0: no pause, so the count cap divides by ' +
      'the p90 peak.',
    '- **auto before issue 28**: the same, with the count cap divided by the learned mean peak (DESIGN §5 says ' +
      'the p90; issue 28 restored it) and the buffer at 2.5 GiB (issue 28 raised the default to 3).',
    '- **spread gate (before)**: the auto policy before settled runs: every live run expected at the mean peak ' +
      '(or what it holds, if more) with its spread in the margin, buffer 2.5 GiB.',
    '- **p90 gate (before)**: the auto policy before the spread margin: the count cap by the p90, and a gate ' +
      'that expects every run at its p90, no spread, buffer 2 GiB.',
    '- **count cap only**: the auto cap before the reservation gate.',
    '- **fixed N**: N runs at most, no reservation gate (the per-spawn memory gate still applies).',
    '',
    'The model is the one the count cap was judged on before; the only addition is the sampler tick at which ' +
      "the gate sees memory (each run's RSS and its high-water mark over the ticks), and it changes nothing for " +
      'the policies without the gate. Issue 28 judges seeds 1–30 and holds out 31–50 (were 1–10 and 11–30), so ' +
      "the reference is the fixed cap safe on all 30 judged seeds, and a finished run's CPU sample is its peak " +
      "share (the sampler's windowed peak), not its mean. Changed in this run (item 7, docs/decisions.md " +
      'D-332): under the margin the pause keeps going the growing run that holds the most (was the oldest), the ' +
      'count cap divides by the mean peak while the pause is on (was the p90 always), and the reservation ' +
      'buffer is 2 GiB (was 3). The stricter reading (each seed against its own best safe fixed cap) is ' +
      'reported beside the rule.',
    '',
  ].join('\n');
  const text = [
    header,
    verdict.text,
    '## Per seed',
    '',
    killSection(all),
    ...all.map(seedMatrix),
    shortSeedSection(all),
    bufferSection(all, config['agent.reservation_buffer_gb']),
    settleSection(all),
    heldOutSection(all),
    whatIfSection(all),
    safeEverywhereSection(all),
    `Simulated in ${(elapsedMs / 1000).toFixed(1)} s; load average at the start ${loads(loadAtStart)}, at the ` +
      `end ${loads(loadavg())} (1 / 5 / 15 min, a shared machine). The simulation has no wall clock: its ` +
      'numbers do not depend on the load.',
    '',
  ].join('\n');
  return { text, isMet: verdict.isMet };
}

/** Median tasks per hour over the judged seeds; red when the policy killed on any seed. */
export function svg(all: readonly HostRuns[]): string {
  const width = 1100;
  const height = 440;
  const left = 70;
  const top = 50;
  const plotHeight = 280;
  const groupWidth = (width - left - 20) / all.length;
  const policies = all[0]?.judged[0]?.outcomes.map((o) => o.policy) ?? [];
  const barWidth = (groupWidth - 30) / Math.max(1, policies.length);
  const stats = all.map((h) =>
    policies.map((policy) => {
      const outcomes = h.judged.map((r) => r.outcomes.find(samePolicy(policy)) as Outcome);
      return {
        policy,
        rate: median(outcomes.map((o) => o.tasksPerHour).sort((a, b) => a - b)) ?? 0,
        seedsWithKills: outcomes.filter((o) => o.kills > 0).length,
        seeds: outcomes.length,
      };
    }),
  );
  const maxRate = Math.max(1, ...stats.flat().map((s) => s.rate));
  const y = (rate: number) => top + plotHeight - (rate / maxRate) * plotHeight;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="11">`,
    '<rect width="100%" height="100%" fill="white"/>',
    `<text x="${width / 2}" y="24" text-anchor="middle" font-size="15">Median tasks per hour over the seeds (red: OOM kills on some seed; above bar = seeds with kills)</text>`,
    `<line x1="${left}" y1="${top + plotHeight}" x2="${width - 20}" y2="${top + plotHeight}" stroke="black"/>`,
    `<line x1="${left}" y1="${top}" x2="${left}" y2="${top + plotHeight}" stroke="black"/>`,
  ];
  for (let i = 0; i <= 4; i++) {
    const rate = (maxRate * i) / 4;
    parts.push(
      `<line x1="${left - 4}" y1="${y(rate)}" x2="${width - 20}" y2="${y(rate)}" stroke="#ddd"/>`,
      `<text x="${left - 8}" y="${y(rate) + 4}" text-anchor="end">${rate.toFixed(0)}</text>`,
    );
  }
  all.forEach((h, g) => {
    const x0 = left + 15 + g * groupWidth;
    (stats[g] ?? []).forEach((s, i) => {
      const x = x0 + i * barWidth;
      const mid = (x + (barWidth - 3) / 2).toFixed(1);
      const base = s.policy.kind === 'auto' ? '#2b7bb9' : s.policy.kind === 'count' ? '#9ecae1' : '#8fbc8f';
      const fill = s.seedsWithKills > 0 ? (s.policy.kind === 'fixed' ? '#d9534f' : '#e8a09e') : base;
      const label =
        s.policy.kind === 'fixed'
          ? String(s.policy.cap)
          : { auto: 'A', count: 'C', p90gate: 'P', spreadgate: 'S', meancap: 'M', oracle: 'O' }[
              s.policy.kind
            ];
      parts.push(
        `<rect x="${x.toFixed(1)}" y="${y(s.rate).toFixed(1)}" width="${(barWidth - 3).toFixed(1)}" ` +
          `height="${(top + plotHeight - y(s.rate)).toFixed(1)}" fill="${fill}"${s.policy.kind === 'fixed' ? '' : ' stroke="#1f4e79"'}/>`,
        `<text x="${mid}" y="${top + plotHeight + 14}" text-anchor="middle">${label}</text>`,
      );
      if (s.seedsWithKills > 0) {
        parts.push(
          `<text x="${mid}" y="${(y(s.rate) - 4).toFixed(1)}" text-anchor="middle" fill="#d9534f">` +
            `${s.seedsWithKills}/${s.seeds}</text>`,
        );
      }
    });
    parts.push(
      `<text x="${(x0 + (policies.length * barWidth) / 2).toFixed(1)}" y="${top + plotHeight + 34}" ` +
        `text-anchor="middle" font-weight="bold">${h.host.name}</text>`,
    );
  });
  const legend: [string, string][] = [
    ['#2b7bb9', 'A: auto (count cap + reservation)'],
    ['#9ecae1', 'C / P / S: count cap only, p90 gate, spread gate (before)'],
    ['#8fbc8f', 'fixed N, no kills on any seed'],
    ['#d9534f', 'fixed N, kills on some seed'],
    ['#e8a09e', 'A or C with kills on some seed'],
  ];
  legend.forEach(([fill, text], i) => {
    const x = left + i * 205;
    parts.push(
      `<rect x="${x}" y="${height - 30}" width="12" height="12" fill="${fill}"/>` +
        `<text x="${x + 18}" y="${height - 20}">${text}</text>`,
    );
  });
  parts.push(
    `<text x="18" y="${top + plotHeight / 2}" transform="rotate(-90 18 ${top + plotHeight / 2})" text-anchor="middle">tasks / hour</text>`,
    '</svg>',
    '',
  );
  return parts.join('\n');
}
