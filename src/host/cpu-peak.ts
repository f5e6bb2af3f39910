/**
 * A run's CPU cost as the learner wants it: the peak, not the mean. The rate over one sampler tick is
 * noisy (a reaped child's CPU time lands in its parent's `cutime` all at once, so one 2 s tick can show
 * several cores), and the mean over the run undercharges a run that works hard and then waits on a model
 * (a busy-then-idle agent learned 0.05 cores and sized a 2-CPU host at 19 runs). So the peak is the
 * highest rate over any window of {@link CPU_PEAK_WINDOW_TICKS} consecutive ticks that saw the tree
 * (6 s at the default 2 s interval): a busy phase of a window or longer is charged in full, a one-tick
 * burst is spread over the window. While a run has been seen for fewer ticks, the window is what it has.
 * Every rate is clamped to the host's CPUs, since no tree can use more.
 */

/** Ticks in the CPU peak's window (docs/decisions.md, "The learned cost is the cost that matters"). */
export const CPU_PEAK_WINDOW_TICKS = 3;

interface Mark {
  ms: number;
  cpuSecs: number;
}

export class CpuPeak {
  /** The last `CPU_PEAK_WINDOW_TICKS + 1` readings: the window's two ends and what lies between. */
  private readonly marks: Mark[];
  private peak = 0;

  /**
   * @param startMs when the run's CPU time was 0 (its tracking start).
   * @param maxCores the host's CPUs; absent (unknown) sets no clamp.
   */
  constructor(
    startMs: number,
    private readonly maxCores?: number,
  ) {
    this.marks = [{ ms: startMs, cpuSecs: 0 }];
  }

  /** One tick that saw the tree: the run's CPU seconds so far (cumulative) at `ms`. */
  record(ms: number, cpuSecs: number): void {
    this.marks.push({ ms, cpuSecs });
    if (this.marks.length > CPU_PEAK_WINDOW_TICKS + 1) this.marks.shift();
    const first = this.marks[0] as Mark;
    const elapsedSecs = (ms - first.ms) / 1000;
    if (elapsedSecs <= 0) return;
    let rate = (cpuSecs - first.cpuSecs) / elapsedSecs;
    if (this.maxCores !== undefined && Number.isFinite(this.maxCores) && this.maxCores > 0)
      rate = Math.min(rate, this.maxCores);
    this.peak = Math.max(this.peak, rate);
  }

  /** The highest windowed rate so far, cores; 0 before any tick. */
  get peakCores(): number {
    return this.peak;
  }
}
