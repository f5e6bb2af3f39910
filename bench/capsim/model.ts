/**
 * The capsim model: a discrete-event simulation (no real processes, seeded PRNG) of one host running a
 * list of tasks under one policy. The decisions are the real ones: `computeCap`, `learnCosts` and
 * `reserveStarts`; only the host and the runs are simulated.
 *
 * Model, per the issue:
 * - task duration lognormal, median 60 s (σ = 0.5: the issue gives no spread); peak memory lognormal,
 *   median 0.6 GiB, p90 1.5 GiB, capped at 4 GiB (floored at the 0.1 GiB a run starts with); 0.3 cores.
 * - a run's memory ramps linearly from 0.1 GiB to its peak over the first half of its work, then holds.
 * - the per-spawn memory gate (`agent.spawn_min_memory_gb`, default 4) runs at admission on what
 *   MemAvailable would show: host memory − 1 GiB for the system − live run memory.
 * - out of memory: when live memory exceeds host memory − 1 GiB, the newest run is killed, its work
 *   lost, the kill counted and the task queued again at the back.
 * - CPU: runs share the cores; with more demand than cores every run slows in proportion
 *   (processor sharing), so a cap above what the CPUs carry buys nothing.
 * - the count cap (auto policies): `computeCap` on the idle host (as at a gateway start, when no runs
 *   are live) with costs from `learnCosts` over the finished runs' samples (high-water memory, peak
 *   cores), starting from the fallbacks and recomputed every 100 completions, as a restart would.
 * - the reservation gate (the auto policy): `reserveStarts` at every chance to start (a completion, a
 *   kill, a sampler tick) on what the gateway would see: the fresh MemAvailable above, each run's memory
 *   at the last sampler tick (`host.sample_interval_secs`; 0 before its first), and as every run's
 *   expectation and spread the agent's learned mean peak and its standard deviation now (relearned at each
 *   completion; the fallback `agent.subagent_cost_gb` and no spread until `agent.cost_min_samples`
 *   samples). The auto policy's count cap divides as the gateway's does (`countCapMemCostGb` with
 *   `isMemoryPauseOn`): by the mean peak with the memory pause on, by the p90 peak with it off.
 * - the memory pause (the auto policy unless `pauseMarginGb: null`): `decidePauses` at each sampler tick.
 *   Every run can be paused, as in the product once ACP runs pause like command runs (issue 28).
 * - what the sampler tells the gate of a run that has stopped growing (the auto policy): its high-water
 *   mark over the ticks, once that has not risen for `SETTLE_TICKS` ticks in a row (`settledGb`), as
 *   `ProcessTreeSampler.settledGb` does; the gate then takes the run at that mark with no spread.
 */

import { computeCap, countCapMemCostGb, isMemoryPauseOn } from '../../src/core/cap.js';
import { type CrewConfig, defaultConfig } from '../../src/core/config-schema.js';
import { type CostSample, compactSamples, learnCosts } from '../../src/core/cost.js';
import { decidePauses } from '../../src/core/pause-policy.js';
import { reserveStarts } from '../../src/core/reservation.js';
import { SETTLE_TICKS } from '../../src/host/sampler.js';
import { normal, prng } from '../random.js';

export const TASKS = 2000;
export const DURATION_MEDIAN_SECS = 60;
export const DURATION_SIGMA = 0.5;
export const MEM_MEDIAN_GB = 0.6;
export const MEM_P90_GB = 1.5;
export const MEM_MAX_GB = 4;
export const MEM_START_GB = 0.1;
export const CPU_CORES = 0.3;
export const SYSTEM_GB = 1;
export const RECOMPUTE_EVERY = 100;
export const HOSTS = [
  { name: '8 GiB / 4 CPUs', memGb: 8, cpus: 4 },
  { name: '16 GiB / 8 CPUs', memGb: 16, cpus: 8 },
  { name: '64 GiB / 32 CPUs', memGb: 64, cpus: 32 },
] as const;
const Z90 = 1.2815515655446004;
const EPS = 1e-9;

export type Host = (typeof HOSTS)[number];
/**
 * `count`: the count cap alone (auto before the reservation gate). `auto`: the count cap and the
 * reservation gate with `bufferGb` (the config default when absent), told which runs have settled after
 * `settleTicks` ticks (`SETTLE_TICKS` when absent); `gateSamples` learns the gate's mean and spread over
 * that many samples instead of `agent.cost_samples_per_agent` (the count cap keeps the default): a what-if
 * for steadier costs, which the gateway would need a longer sample log for. `spreadgate`: the auto policy
 * before settled runs (every live run expected at the mean peak with its spread, buffer 2.5 GiB).
 * `meancap`: the auto policy as it was before issue 28: its count cap divided by the learned mean peak, and
 * the reservation buffer 2.5 GiB.
 */
export type Policy =
  | { kind: 'fixed'; cap: number }
  | { kind: 'count' }
  | {
      kind: 'auto';
      bufferGb?: number;
      gateSamples?: number;
      settleTicks?: number;
      /** The memory pause's margin, GiB (`agent.pause_margin_gb` when absent); `null`: no pause. */
      pauseMarginGb?: number | null;
      /** What the count cap divides by; absent: the product's rule (the mean with the pause on, else the p90). */
      countBy?: 'p90' | 'mean';
    }
  | { kind: 'spreadgate' }
  | { kind: 'meancap' }
  | { kind: 'p90gate' }
  | { kind: 'oracle' };

/**
 * `p90gate`: the auto policy as it was before the spread margin (the reference for "before"): the count
 * cap by the p90, and a gate that expects every run to peak at the p90, with no spread and a 2 GiB buffer.
 */
const P90_GATE_BUFFER_GB = 2;
/**
 * `oracle`: not a policy a gateway can run, a bound on what the gate's information costs. It knows every
 * live run's true peak (growing or not) and lets a run start only while those peaks plus the largest peak
 * any task can have (`MEM_MAX_GB`) for each start fit under the limit: it never kills, since a new run
 * is assumed at the worst. The gap between it and auto is the price of not knowing where the growing runs
 * will peak. No count cap (the CPUs still share).
 */
/** `meancap`'s buffer: the default before issue 28. */
const MEAN_CAP_BUFFER_GB = 2.5;
/** `spreadgate`'s buffer: the default when it was the auto policy. */
const SPREAD_GATE_BUFFER_GB = 2.5;

export interface Task {
  id: number;
  durationSecs: number;
  peakGb: number;
}

export function makeTasks(seed: number): Task[] {
  const random = prng(seed);
  const memSigma = Math.log(MEM_P90_GB / MEM_MEDIAN_GB) / Z90;
  return Array.from({ length: TASKS }, (_, id) => ({
    id,
    durationSecs: DURATION_MEDIAN_SECS * Math.exp(DURATION_SIGMA * normal(random)),
    peakGb: Math.min(MEM_MAX_GB, Math.max(MEM_START_GB, MEM_MEDIAN_GB * Math.exp(memSigma * normal(random)))),
  }));
}

interface LiveRun {
  task: Task;
  seq: number;
  startedAt: number;
  /** Seconds of work done (wall time × the CPU share). */
  workSecs: number;
  /** The run's memory at the last sampler tick: all the gateway knows of it. */
  sampledGb: number;
  /** The high-water mark of `sampledGb` over the ticks, and the ticks since it last rose. */
  markGb: number;
  ticksSinceRise: number;
  /** Whether a tick has seen the run. */
  isSeen: boolean;
  /** The highest CPU share the run has had (processor sharing): its CPU peak is `CPU_CORES` × this. */
  maxRate: number;
  /** Paused by the memory pause: no work, no growth, no CPU. */
  isPaused: boolean;
  /** How it was let start: the reservation gate's free GiB then, and the live runs it charged. */
  startNote: string;
}

/** One out-of-memory kill, for the diagnostic: when, which run, how it started, who was growing. */
export interface KillTrace {
  atSecs: number;
  /** The run killed (the newest live one) and how it was let start. */
  killed: string;
  /** The live runs at the kill still below their true peak: each one's true peak against what the gate charged it. */
  growing: string[];
  liveRuns: number;
  pausedRuns: number;
}

export interface Outcome {
  host: Host;
  policy: Policy;
  makespanSecs: number;
  tasksPerHour: number;
  kills: number;
  /** Per-spawn memory gate refusals. */
  gateRefusals: number;
  /** Chances to start that the reservation gate held back although the count cap had room. */
  reservationWaits: number;
  /** Caps the policy used, in order (auto changes on recompute). */
  caps: number[];
  peakLiveGb: number;
  /** Time-averaged number of runs in flight. */
  meanRunning: number;
  /** Seconds spent with exactly n runs in flight, at index n. */
  secsInFlight: number[];
  /**
   * Seconds with tasks queued, split by what held them back: the count cap full, or room under it that the
   * reservation gate (or the per-spawn memory gate) did not let a start use.
   */
  heldByCapSecs: number;
  heldByGateSecs: number;
  /** Every kill, traced. */
  killTraces: KillTrace[];
  /** Pauses the memory pause made, and seconds of run time spent paused. */
  pauses: number;
  pausedSecs: number;
}

function memOf(run: LiveRun): number {
  const half = run.task.durationSecs / 2;
  return MEM_START_GB + (run.task.peakGb - MEM_START_GB) * Math.min(1, run.workSecs / half);
}

function learned(samples: readonly CostSample[], config: CrewConfig) {
  return learnCosts(samples, {
    perAgent: config['agent.cost_samples_per_agent'],
    minSamples: config['agent.cost_min_samples'],
    fallbackMemGb: config['agent.subagent_cost_gb'],
    fallbackCpuCores: config['agent.subagent_cpu_cost_cores'],
  });
}

export function simulate(host: Host, policy: Policy, tasks: readonly Task[]): Outcome {
  const config = defaultConfig();
  config['agent.subagent_spawn_stagger_secs'] = 0;
  const limitGb = host.memGb - SYSTEM_GB;
  const minGb = config['agent.spawn_min_memory_gb'];
  const tickSecs = config['host.sample_interval_secs'];
  const bufferGb =
    policy.kind === 'auto'
      ? (policy.bufferGb ?? config['agent.reservation_buffer_gb'])
      : policy.kind === 'meancap'
        ? MEAN_CAP_BUFFER_GB
        : policy.kind === 'p90gate'
          ? P90_GATE_BUFFER_GB
          : policy.kind === 'spreadgate'
            ? SPREAD_GATE_BUFFER_GB
            : undefined;
  const settleTicks =
    policy.kind === 'auto'
      ? (policy.settleTicks ?? SETTLE_TICKS)
      : policy.kind === 'meancap'
        ? SETTLE_TICKS
        : undefined;
  const pauseMarginGb =
    policy.kind === 'auto' && policy.pauseMarginGb !== null
      ? (policy.pauseMarginGb ?? config['agent.pause_margin_gb'])
      : undefined;
  // The auto policy's config as the gateway would read it, so the count cap follows the product's rule:
  // by the mean peak with the pause on, by the p90 with it off (`isMemoryPauseOn`, `countCapMemCostGb`).
  config['agent.pause_margin_gb'] = pauseMarginGb ?? 0;
  const countByMean =
    policy.kind === 'meancap' ||
    (policy.kind === 'auto' &&
      (policy.countBy === undefined ? isMemoryPauseOn(config) : policy.countBy === 'mean'));
  let samples: CostSample[] = [];
  const gateSamples = policy.kind === 'auto' ? policy.gateSamples : undefined;
  let gateLog: CostSample[] = [];
  const autoCap = (): number => {
    const costs = learned(samples, config);
    return computeCap({
      availableGb: limitGb,
      cpuCount: host.cpus,
      config,
      // As the gateway sizes it: the p90 peak (issue 28), for every policy but the one from before it.
      memCostGb: countCapMemCostGb(costs, { isPauseOn: countByMean }),
      cpuCostCores: costs.cpuCostCores,
    }).cap;
  };
  let cap =
    policy.kind === 'fixed' ? policy.cap : policy.kind === 'oracle' ? Number.POSITIVE_INFINITY : autoCap();
  let expectedGb = config['agent.subagent_cost_gb'];
  let spreadGb = 0;
  const caps = [cap];
  const queue: Task[] = [...tasks];
  let running: LiveRun[] = [];
  let now = 0;
  let nextTick = tickSecs;
  let seq = 0;
  let completed = 0;
  let kills = 0;
  let gateRefusals = 0;
  let reservationWaits = 0;
  let peakLiveGb = 0;
  let runSecs = 0;
  const secsInFlight: number[] = [];
  let heldByCapSecs = 0;
  let heldByGateSecs = 0;
  const killTraces: KillTrace[] = [];
  let pauses = 0;
  let pausedSecs = 0;
  const isSettled = (run: LiveRun) =>
    settleTicks !== undefined && run.isSeen && run.ticksSinceRise >= settleTicks;

  const liveGb = () => running.reduce((sum, run) => sum + memOf(run), 0);
  const killNewestWhileOver = () => {
    // Reaching the limit counts as exceeding it: the next instant would.
    while (running.length > 0 && liveGb() >= limitGb - EPS) {
      const newest = running.reduce((a, b) => (b.seq > a.seq ? b : a));
      killTraces.push({
        atSecs: now,
        killed: `run #${newest.seq} (started at ${newest.startedAt.toFixed(0)} s, ${newest.startNote})`,
        growing: running
          .filter((run) => memOf(run) < run.task.peakGb - EPS)
          .map(
            (run) =>
              `#${run.seq}: ${memOf(run).toFixed(2)} GiB now, peak ${run.task.peakGb.toFixed(2)}, charged ` +
              `${(isSettled(run) ? run.markGb : Math.max(expectedGb, run.sampledGb)).toFixed(2)}${isSettled(run) ? ' (settled)' : ''}${run.isPaused ? ' (paused)' : ''}`,
          ),
        liveRuns: running.length,
        pausedRuns: running.filter((run) => run.isPaused).length,
      });
      running = running.filter((run) => run !== newest);
      queue.push(newest.task);
      kills++;
    }
  };
  /** How many of the queue's heads the reservation gate lets start now; the count cap's room if off. */
  let lastFreeGb: number | null = null;
  const reservationRoom = (room: number): number => {
    if (policy.kind === 'oracle') {
      const committedGb = running.reduce((sum, run) => sum + run.task.peakGb, 0);
      const fits = Math.floor((limitGb - EPS - committedGb) / MEM_MAX_GB);
      return running.length === 0 ? Math.max(1, Math.min(room, fits)) : Math.max(0, Math.min(room, fits));
    }
    if (bufferGb === undefined) return room;
    const reservation = reserveStarts({
      availableGb: Math.max(0, limitGb - liveGb()),
      runs: running.map((run) => ({
        expectedGb,
        spreadGb,
        currentGb: run.sampledGb,
        settledGb: isSettled(run) ? run.markGb : undefined,
        isPaused: run.isPaused,
      })),
      nextExpectedGb: Array.from({ length: room }, () => expectedGb),
      nextSpreadGb: Array.from({ length: room }, () => spreadGb),
      bufferGb,
    });
    lastFreeGb = reservation.explanation.freeGb;
    return reservation.startsAllowed;
  };
  const admit = () => {
    const room = Math.min(queue.length, cap - running.length);
    if (room <= 0) return;
    const allowed = reservationRoom(room);
    if (allowed < room) reservationWaits++;
    for (let i = 0; i < allowed; i++) {
      if (minGb > 0 && limitGb - liveGb() < minGb) {
        gateRefusals++;
        return;
      }
      running.push({
        task: queue.shift() as Task,
        seq: seq++,
        startedAt: now,
        workSecs: 0,
        sampledGb: 0,
        markGb: 0,
        ticksSinceRise: 0,
        isSeen: false,
        maxRate: 0,
        isPaused: false,
        startNote:
          bufferGb === undefined
            ? 'no reservation gate'
            : `reservation gate: ${lastFreeGb === null ? 'no reading' : `${lastFreeGb.toFixed(2)} GiB free`} ` +
              `for ${running.length} live (${running.filter(isSettled).length} settled), charged ${expectedGb.toFixed(2)} + spread ${spreadGb.toFixed(2)}`,
      });
      killNewestWhileOver();
    }
  };

  admit();
  while (completed < tasks.length) {
    if (running.length === 0) throw new Error('stalled: nothing running and nothing admitted');
    const going = running.filter((run) => !run.isPaused);
    const rate = going.length === 0 ? 1 : Math.min(1, host.cpus / (CPU_CORES * going.length));
    let dt = Number.POSITIVE_INFINITY;
    let slopeGbPerSec = 0;
    for (const run of going) {
      const half = run.task.durationSecs / 2;
      if (run.workSecs < half - EPS) {
        dt = Math.min(dt, (half - run.workSecs) / rate);
        slopeGbPerSec += (rate * (run.task.peakGb - MEM_START_GB)) / half;
      }
      dt = Math.min(dt, (run.task.durationSecs - run.workSecs) / rate);
    }
    const live = liveGb();
    if (slopeGbPerSec > 0) dt = Math.min(dt, (limitGb - live) / slopeGbPerSec);
    // Fixed caps and the count cap alone decide nothing on a tick, so only the gate pays for ticks.
    if (bufferGb !== undefined || policy.kind === 'oracle') dt = Math.min(dt, nextTick - now);
    dt = Math.max(0, dt);
    now += dt;
    pausedSecs += (running.length - going.length) * dt;
    runSecs += running.length * dt;
    secsInFlight[running.length] = (secsInFlight[running.length] ?? 0) + dt;
    if (queue.length > 0) {
      if (running.length >= cap) heldByCapSecs += dt;
      else heldByGateSecs += dt;
    }
    for (const run of going) {
      run.workSecs = Math.min(run.task.durationSecs, run.workSecs + rate * dt);
      if (dt > 0) run.maxRate = Math.max(run.maxRate, rate);
    }
    peakLiveGb = Math.max(peakLiveGb, liveGb());
    killNewestWhileOver();
    if (now >= nextTick - EPS) {
      for (const run of running) {
        run.sampledGb = memOf(run);
        // As the sampler counts: the first sighting is a rise.
        run.ticksSinceRise = !run.isSeen || run.sampledGb > run.markGb ? 0 : run.ticksSinceRise + 1;
        run.markGb = Math.max(run.markGb, run.sampledGb);
        run.isSeen = true;
      }
      nextTick += tickSecs;
      if (pauseMarginGb !== undefined) {
        const decision = decidePauses({
          availableGb: Math.max(0, limitGb - liveGb()),
          marginGb: pauseMarginGb,
          runs: running.map((run) => ({
            id: String(run.seq),
            startedAt: run.seq,
            currentGb: run.sampledGb,
            isGrowing: !isSettled(run),
            isPaused: run.isPaused,
            expectedGb,
          })),
        });
        for (const run of running) {
          if (decision.pause.includes(String(run.seq))) {
            run.isPaused = true;
            pauses++;
          }
          if (decision.resume.includes(String(run.seq))) run.isPaused = false;
        }
      }
    }

    const done = running.filter((run) => run.workSecs >= run.task.durationSecs - EPS);
    if (done.length > 0) {
      running = running.filter((run) => !done.includes(run));
      for (const run of done) {
        completed++;
        // What the sampler would record: the high-water RSS and the peak cores (`cpu-peak.ts`): the run's
        // steady 0.3 cores at the best CPU share it had, never more than the host's CPUs.
        samples.push({
          agent: 'sim',
          mem_gb: run.task.peakGb,
          cpu_cores: Math.min(host.cpus, CPU_CORES * run.maxRate),
          ts: now,
        });
        // Keep the sample log as bounded as the file is.
        if (gateSamples !== undefined)
          gateLog = compactSamples([...gateLog, samples.at(-1) as CostSample], gateSamples);
        samples = compactSamples(samples, config['agent.cost_samples_per_agent']);
        // The gate relearns at every completion (a sample appended); the cap only at a "restart".
        const gateCost = (
          gateSamples === undefined
            ? learned(samples, config)
            : learned(gateLog, { ...config, 'agent.cost_samples_per_agent': gateSamples })
        ).perAgent.sim;
        expectedGb =
          (policy.kind === 'p90gate' ? gateCost?.memGb : gateCost?.memMeanGb) ??
          config['agent.subagent_cost_gb'];
        spreadGb = policy.kind === 'p90gate' ? 0 : (gateCost?.memSdGb ?? 0);
        if (policy.kind !== 'fixed' && policy.kind !== 'oracle' && completed % RECOMPUTE_EVERY === 0) {
          const next = autoCap();
          if (next !== cap) caps.push(next);
          cap = next;
        }
      }
    }
    admit();
  }
  return {
    host,
    policy,
    makespanSecs: now,
    tasksPerHour: tasks.length / (now / 3600),
    kills,
    gateRefusals,
    reservationWaits,
    caps,
    peakLiveGb,
    meanRunning: runSecs / now,
    secsInFlight: Array.from(secsInFlight, (secs) => secs ?? 0),
    heldByCapSecs,
    heldByGateSecs,
    killTraces,
    pauses,
    pausedSecs,
  };
}

export function policyName(policy: Policy): string {
  switch (policy.kind) {
    case 'fixed':
      return `fixed ${policy.cap}`;
    case 'count':
      return 'count cap only';
    case 'p90gate':
      return 'p90 gate (before)';
    case 'spreadgate':
      return 'spread gate (before)';
    case 'meancap':
      return 'auto before issue 28 (count cap by the mean peak)';
    case 'oracle':
      return `oracle: knows live runs' peaks, each start at the ${MEM_MAX_GB} GiB maximum`;
    case 'auto':
      return [
        'auto',
        ...(policy.bufferGb === undefined ? [] : [`buffer ${policy.bufferGb} GiB`]),
        ...(policy.gateSamples === undefined ? [] : [`gate costs over ${policy.gateSamples} samples`]),
        ...(policy.settleTicks === undefined ? [] : [`settled after ${policy.settleTicks} ticks`]),
        ...(policy.pauseMarginGb === undefined
          ? []
          : [policy.pauseMarginGb === null ? 'no pause' : `pause margin ${policy.pauseMarginGb} GiB`]),
        ...(policy.countBy === undefined ? [] : [`count cap by the ${policy.countBy}`]),
      ].join(', ');
    default: {
      const never: never = policy;
      return never;
    }
  }
}
