import type { RunCell } from './run-cell.js';

/** A run the memory pause may stop: its cell, its agent (for its expectation) and when it started. */
export interface PausableRun {
  cell: RunCell;
  agent: string;
  startedAt: number;
}

/**
 * The cells of the live runs the memory pause may stop (`memory-pauser.ts`): a runner adds a run's cell
 * once its process started and deletes it when the run ends. Command runs only: an ACP agent waits on its
 * client's requests, which would time out while it is stopped, and a shared runtime serves other sessions.
 */
export class PausableCells {
  private readonly runs = new Map<string, PausableRun>();

  add(runId: string, run: PausableRun): void {
    this.runs.set(runId, run);
  }

  delete(runId: string): void {
    this.runs.delete(runId);
  }

  get(runId: string): PausableRun | undefined {
    return this.runs.get(runId);
  }

  entries(): IterableIterator<[string, PausableRun]> {
    return this.runs.entries();
  }
}
