/**
 * The memory pause (issue 28, item 7): what the reservation gate cannot see is where a run still growing
 * will peak; it charges such a run its agent's mean, and a run that grows past that late can push the host
 * over its limit (capsim traced every kill left to this). The pause acts on what is seen instead: when the
 * memory left falls under a margin while runs are still growing, the growing runs stop (SIGSTOP or
 * `cgroup.freeze`: they keep what they hold, grow no further) until memory returns, most often because
 * another run ended. Pure: the gateway's sampler passes its tick's view, and carries out the answer.
 */

/** A live run as the sampler saw it at its last tick. */
export interface PauseRun {
  id: string;
  /** When it started (any increasing order): the newest growing runs pause first, the oldest resume first. */
  startedAt: number;
  /** What its process tree holds now, GiB. */
  currentGb: number;
  /** Whether it is still growing (not settled: its high-water mark rose over the last few ticks). */
  isGrowing: boolean;
  /** Whether it is paused now. */
  isPaused: boolean;
  /** What its agent's runs peak at on average, GiB: a paused run resumes when what it may still grow fits. */
  expectedGb: number;
  /**
   * `false`: a run the pause cannot stop (a session of a shared ACP runtime, which serves other runs).
   * Never paused or resumed; not counted as going (it may be a parent waiting on the runs paused); while it
   * still grows, no paused run resumes over the margin. Absent: pausable.
   */
  isPausable?: boolean;
}

export interface PauseInput {
  /** Effective available memory now, GiB; `undefined` when the read failed (then nothing stays paused). */
  availableGb: number | undefined;
  /** GiB of free memory the pause keeps: under it the growing runs pause (`agent.pause_margin_gb`). */
  marginGb: number;
  runs: readonly PauseRun[];
}

export interface PauseDecision {
  /** Runs to pause now, newest first. */
  pause: string[];
  /** Runs to resume now, oldest first. */
  resume: string[];
}

/**
 * - Under the margin: every growing run pauses, but one run always keeps going (a settled one if any, else
 *   the growing run that holds the most): paused runs free nothing, so some run must go on to its end.
 * - At or above it: paused runs resume, oldest first, while what each may still grow into (its expectation
 *   less what it holds) fits above the margin.
 * - Whatever the memory, the oldest paused run resumes when no run is going (the others ended or were
 *   cancelled): a paused run frees nothing, so the host would stall.
 * - An unknown reading resumes every paused run: a pause held on no information could last forever.
 * - A run it cannot pause (`isPausable: false`) is never paused or resumed, and the rule counts on nothing
 *   from it: not as the run that goes on (liveness comes from the runs it can pause, as without it), not
 *   as memory that stays free while it still grows (it may take any of it, so nothing resumes over the
 *   margin then; the stall rule still does).
 * Never both in one answer. Non-finite numbers read as "does not fit".
 */
export function decidePauses(input: PauseInput): PauseDecision {
  const runs = input.runs.filter((run) => run.isPausable !== false);
  const isUnpausableGrowing = input.runs.some((run) => run.isPausable === false && run.isGrowing);
  const paused = runs.filter((run) => run.isPaused).sort((a, b) => a.startedAt - b.startedAt);
  const going = runs.filter((run) => !run.isPaused);
  const available = input.availableGb;
  if (available === undefined || !(available >= 0)) return { pause: [], resume: paused.map((run) => run.id) };
  const margin = Math.max(0, input.marginGb);
  if (available < margin) {
    // Nothing going: the oldest paused run goes on, or nothing ever frees memory.
    if (going.length === 0) return { pause: [], resume: paused.slice(0, 1).map((run) => run.id) };
    const growing = going.filter((run) => run.isGrowing).sort(byPauseOrder);
    // One run keeps going: a settled one if there is one, else the growing run that holds the most.
    const keep = going.length - growing.length > 0 ? growing.length : growing.length - 1;
    return { pause: growing.slice(0, Math.max(0, keep)).map((run) => run.id), resume: [] };
  }
  const resume: string[] = [];
  let left = available - margin;
  for (const run of paused) {
    const mayGrowGb = Math.max(0, run.expectedGb - Math.max(0, run.currentGb));
    const isStalled = going.length === 0 && resume.length === 0;
    if ((isUnpausableGrowing || !(mayGrowGb <= left)) && !isStalled) break;
    left -= mayGrowGb;
    resume.push(run.id);
  }
  return { pause: [], resume };
}

/**
 * The order growing runs pause in under the margin: the one that holds least first, ties newest first; the
 * last is the one kept going when no run has settled. The run that holds the most is the one to keep: it
 * has the least left to grow before any peak its agent may reach, so it is the likeliest to finish growing
 * in the room left, and pausing it would hold the most memory idle. capsim traced the kills left with the
 * oldest kept (issue 28, item 7): two tail runs started seconds apart, the oldest holding 1.6 GiB of its 4
 * GiB peak and a newer one 2.7 GiB of its 4; the oldest went on and grew past the 2.25 GiB left, where the
 * newer one needed only 1.3.
 */
function byPauseOrder(a: PauseRun, b: PauseRun): number {
  const held = (run: PauseRun) => (Number.isFinite(run.currentGb) ? Math.max(0, run.currentGb) : 0);
  return held(a) - held(b) || b.startedAt - a.startedAt;
}
