import { decidePauses, type PauseRun } from '../core/pause-policy.js';
import type { PausableCells } from './pausable-cells.js';

/** What the sampler saw at one tick, as the reservation gate gets it. All GiB. */
export interface PauseTick {
  availableGb: number | undefined;
  currentGb: Readonly<Record<string, number>>;
  settledGb: Readonly<Record<string, number>>;
  /** Learned mean peak per agent; an agent missing here expects `fallbackGb`. */
  expectedGb: Readonly<Record<string, number>>;
}

export interface MemoryPauserOptions {
  cells: PausableCells;
  /** `agent.pause_margin_gb`; 0 turns the pause off. */
  marginGb: number;
  /** `agent.subagent_cost_gb`: what a run of an agent not learned yet is expected to peak at. */
  fallbackGb: number;
  log?: (line: string) => void;
}

/**
 * Carries out the memory pause (`src/core/pause-policy.ts`) at each sampler tick: stops the growing runs
 * when the memory left falls under the margin and resumes them as it returns. A run that ends is
 * forgotten (its cell is thawed and ended by the runner's stop, `stop-cell.ts`).
 */
export class MemoryPauser {
  private readonly paused = new Set<string>();

  constructor(private readonly options: MemoryPauserOptions) {}

  tick(view: PauseTick): void {
    for (const runId of this.paused)
      if (this.options.cells.get(runId) === undefined) this.paused.delete(runId);
    if (this.options.marginGb <= 0 && this.paused.size === 0) return;
    const runs: PauseRun[] = [...this.options.cells.entries()].map(([id, run]) => ({
      id,
      startedAt: run.startedAt,
      currentGb: Object.hasOwn(view.currentGb, id) ? (view.currentGb[id] as number) : 0,
      // Unseen runs count as growing: nothing says they stopped.
      isGrowing: !Object.hasOwn(view.settledGb, id),
      isPaused: this.paused.has(id),
      expectedGb: Object.hasOwn(view.expectedGb, run.agent)
        ? (view.expectedGb[run.agent] as number)
        : this.options.fallbackGb,
    }));
    // Every other run the sampler sees is one the pause cannot stop (a shared runtime's session): going.
    for (const id of Object.keys(view.currentGb)) {
      if (this.options.cells.get(id) !== undefined) continue;
      const currentGb = view.currentGb[id] as number;
      const isGrowing = !Object.hasOwn(view.settledGb, id);
      runs.push({
        id,
        startedAt: 0,
        currentGb,
        isGrowing,
        isPaused: false,
        expectedGb: 0,
        isPausable: false,
      });
    }
    const decision = decidePauses({ availableGb: view.availableGb, marginGb: this.options.marginGb, runs });
    for (const id of decision.pause) this.set(id, true, view.availableGb);
    for (const id of decision.resume) this.set(id, false, view.availableGb);
  }

  isPaused(runId: string): boolean {
    return this.paused.has(runId);
  }

  /** The runs paused now. */
  pausedRuns(): string[] {
    return [...this.paused];
  }

  private set(runId: string, isPaused: boolean, availableGb: number | undefined): void {
    const run = this.options.cells.get(runId);
    if (run === undefined) return;
    run.cell.pause(isPaused);
    if (isPaused) this.paused.add(runId);
    else this.paused.delete(runId);
    this.options.log?.(
      `crew: ${isPaused ? 'paused' : 'resumed'} run ${runId}: ${availableGb?.toFixed(2) ?? 'unknown'} GiB available, ` +
        `pause margin ${this.options.marginGb} GiB`,
    );
  }
}
