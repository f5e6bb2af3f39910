import { BYTES_PER_GIB } from '../core/cap.js';
import type { Clock, TimerHandle } from '../core/clock.js';
import { readProcUnits } from './auxv.js';
import { CpuPeak } from './cpu-peak.js';
import { type ProcTable, readProcStat, readProcTable, treeOf } from './process-tree.js';
import { readPsTable } from './ps-table.js';

/** What a finished run is charged: the learner's sample. */
export interface RunUsage {
  /** High-water mark of the tree's RSS over the ticks that saw it, GiB. */
  peakMemGb: number;
  /** Peak CPU, cores: the highest rate over any window of `CPU_PEAK_WINDOW_TICKS` ticks (`cpu-peak.ts`). */
  cpuCores: number;
}

export { CPU_PEAK_WINDOW_TICKS } from './cpu-peak.js';

export interface SamplerOptions {
  /** Root of `/proc`. */
  hostRoot: string;
  clock: Clock;
  /** Tick interval (`host.sample_interval_secs` × 1000). */
  intervalMs: number;
  /**
   * Called after each tick with what it saw (the reservation gate's input): each run's RSS now, and the
   * high-water mark of each run that has stopped growing ({@link ProcessTreeSampler.settledGb}).
   */
  onTick?: (currentGb: Record<string, number>, settledGb: Record<string, number>) => void;
  /** @default process.platform */
  platform?: NodeJS.Platform;
  /** Replaces the process-table read (tests; other platforms). */
  readTable?: () => ProcTable | Promise<ProcTable>;
  /** The host's CPUs: no run is charged more cores than this. Absent (unknown): no clamp. */
  cpuCount?: number;
}

export interface TrackOptions {
  /**
   * Runs that are sessions of one shared runtime name the same group (and the runtime's pid): each is
   * charged the runtime's usage divided by the sessions live on it.
   */
  sharedGroup?: string;
}

/**
 * Ticks in a row (2 s each by default) that must see a run's tree without a new RSS high-water mark before
 * the run counts as settled: the reservation gate then takes it at that mark, with no expectation and no
 * spread (`src/core/reservation.ts`). Chosen by measurement (`bench/results/capsim.md`, docs/decisions.md).
 */
export const SETTLE_TICKS = 3;

interface Group {
  pid: number;
  startTime: number | undefined;
  members: Set<string>;
  /** Tree CPU seen so far, seconds; `undefined` until a shared group's first tick sets the baseline. */
  cpuSecs: number | undefined;
}

interface Tracked {
  group: Group;
  peakBytes: number;
  /** Ticks that saw the tree since the high-water mark last rose (the first sighting is a rise). */
  ticksSinceRise: number;
  /** The tree's RSS at the last tick that saw it (its share, for a shared session). */
  currentBytes: number;
  cpuSecs: number;
  cpuPeak: CpuPeak;
  lastSeenMs: number | undefined;
}

/**
 * Samples the process tree of every tracked run each tick and keeps, per run, the RSS high-water mark
 * and the CPU peak (`cpu-peak.ts`). Linux reads `/proc` once per tick for all runs (no subprocess); macOS runs one
 * `ps` per tick. The timer runs only while something is tracked; {@link close} stops it.
 */
export class ProcessTreeSampler {
  private readonly runs = new Map<string, Tracked>();
  private readonly groups = new Map<string, Group>();
  private readonly readTable: () => ProcTable | Promise<ProcTable>;
  private readonly isLinux: boolean;
  private timer: TimerHandle | undefined;
  private inFlight: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly options: SamplerOptions) {
    const platform = options.platform ?? process.platform;
    this.isLinux = platform !== 'darwin' && platform !== 'win32';
    if (options.readTable) {
      this.readTable = options.readTable;
    } else if (platform === 'darwin') {
      this.readTable = () => readPsTable();
    } else {
      const units = readProcUnits(options.hostRoot);
      this.readTable = () => readProcTable(options.hostRoot, units);
    }
  }

  /**
   * Starts sampling a run's tree rooted at `pid`. `startTime` (from the runner) pins the root's identity;
   * when absent it is read now (Linux) or on the first tick.
   */
  track(runId: string, pid: number, startTime?: number, options: TrackOptions = {}): void {
    if (this.closed || this.runs.has(runId)) return;
    const key = options.sharedGroup === undefined ? `run:${runId}` : `shared:${options.sharedGroup}`;
    let group = this.groups.get(key);
    if (!group) {
      const pinned =
        startTime ?? (this.isLinux ? readProcStat(this.options.hostRoot, pid)?.starttime : undefined);
      // A dedicated run's tree was born with it, so all its CPU is the run's; a shared runtime's CPU
      // before its first tick belongs to whoever used it before.
      group = {
        pid,
        startTime: pinned,
        members: new Set(),
        cpuSecs: options.sharedGroup === undefined ? 0 : undefined,
      };
      this.groups.set(key, group);
    }
    group.members.add(runId);
    const trackedAtMs = this.options.clock.now();
    this.runs.set(runId, {
      group,
      peakBytes: 0,
      ticksSinceRise: 0,
      currentBytes: 0,
      cpuSecs: 0,
      cpuPeak: new CpuPeak(trackedAtMs, this.options.cpuCount),
      lastSeenMs: undefined,
    });
    this.schedule();
  }

  /** The run's usage so far, without untracking it. */
  peek(runId: string): RunUsage | undefined {
    const run = this.runs.get(runId);
    return run === undefined ? undefined : usageOf(run);
  }

  /**
   * Stops tracking a run and answers its usage; `undefined` when no tick ever saw its tree (it ended
   * before the first tick), so the learner records nothing rather than a zero.
   */
  untrack(runId: string): RunUsage | undefined {
    const run = this.runs.get(runId);
    if (!run) return undefined;
    this.runs.delete(runId);
    run.group.members.delete(runId);
    if (run.group.members.size === 0) {
      for (const [key, group] of this.groups) if (group === run.group) this.groups.delete(key);
    }
    if (this.runs.size === 0) this.cancelTimer();
    return usageOf(run);
  }

  /** How many runs are tracked. */
  get size(): number {
    return this.runs.size;
  }

  /** One tick now: reads the process table once and updates every tracked run. */
  sampleNow(): Promise<void> {
    if (this.inFlight) return this.inFlight;
    this.inFlight = this.tick().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  /** Stops the timer and waits for a tick in flight. Tracked runs are dropped. */
  async close(): Promise<void> {
    this.closed = true;
    this.cancelTimer();
    await this.inFlight;
    this.runs.clear();
    this.groups.clear();
  }

  private async tick(): Promise<void> {
    if (this.groups.size === 0) return;
    const table = await this.readTable();
    const nowMs = this.options.clock.now();
    for (const group of this.groups.values()) this.sampleGroup(group, table, nowMs);
    this.options.onTick?.(this.currentGb(), this.settledGb());
  }

  /** Each tracked run's tree RSS at the last tick that saw it, GiB. */
  currentGb(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [runId, run] of this.runs)
      if (run.lastSeenMs !== undefined) out[runId] = run.currentBytes / BYTES_PER_GIB;
    return out;
  }

  /**
   * The RSS high-water mark, GiB, of each tracked run whose mark has not risen over the last
   * {@link SETTLE_TICKS} ticks that saw its tree; a run still growing, or not yet seen, is absent.
   */
  settledGb(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [runId, run] of this.runs)
      if (run.lastSeenMs !== undefined && run.ticksSinceRise >= SETTLE_TICKS)
        out[runId] = run.peakBytes / BYTES_PER_GIB;
    return out;
  }

  private sampleGroup(group: Group, table: ProcTable, nowMs: number): void {
    if (group.startTime === undefined) group.startTime = table.get(group.pid)?.startTime;
    const pids = treeOf(table, group.pid, group.startTime);
    if (pids.length === 0) return;
    let rssBytes = 0;
    let cpuSecs = 0;
    for (const pid of pids) {
      const entry = table.get(pid);
      if (!entry) continue;
      rssBytes += entry.rssBytes;
      cpuSecs += entry.cpuSecs;
    }
    // Tree CPU only grows (a reaped child's time moves into its parent's cutime); a dip means a member
    // left the tree unreaped, and its time must not be charged twice when it shows up again.
    const previous = group.cpuSecs;
    const total = Math.max(previous ?? cpuSecs, cpuSecs);
    group.cpuSecs = total;
    const live = group.members.size;
    const cpuShare = previous === undefined ? 0 : (total - previous) / live;
    for (const runId of group.members) {
      const run = this.runs.get(runId);
      if (!run) continue;
      const share = rssBytes / live;
      const rose = run.lastSeenMs === undefined || share > run.peakBytes;
      run.ticksSinceRise = rose ? 0 : run.ticksSinceRise + 1;
      run.peakBytes = Math.max(run.peakBytes, share);
      run.currentBytes = share;
      run.cpuSecs += cpuShare;
      run.cpuPeak.record(nowMs, run.cpuSecs);
      run.lastSeenMs = nowMs;
    }
  }

  private schedule(): void {
    if (this.timer !== undefined || this.closed) return;
    this.timer = this.options.clock.setTimer(() => {
      this.timer = undefined;
      void this.sampleNow().finally(() => {
        if (this.runs.size > 0) this.schedule();
      });
    }, this.options.intervalMs);
  }

  private cancelTimer(): void {
    if (this.timer === undefined) return;
    this.options.clock.clearTimer(this.timer);
    this.timer = undefined;
  }
}

function usageOf(run: Tracked): RunUsage | undefined {
  if (run.lastSeenMs === undefined) return undefined;
  return { peakMemGb: run.peakBytes / BYTES_PER_GIB, cpuCores: run.cpuPeak.peakCores };
}
