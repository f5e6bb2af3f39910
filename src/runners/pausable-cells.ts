import type { RunCell } from './run-cell.js';

/**
 * A run the memory pause may stop: what stops it (a command run's cell; a dedicated ACP runtime, which
 * also holds its request timers while stopped), its agent (for its expectation) and when it started.
 */
export interface PausableRun {
  cell: Pick<RunCell, 'pause'>;
  agent: string;
  startedAt: number;
}

/**
 * The cells of the live runs the memory pause may stop (`memory-pauser.ts`): a runner adds a run's cell
 * once its process started and deletes it when the run ends: command runs, and ACP runs on a dedicated
 * runtime (`acp-pause-offer.ts`; its request timeouts stand still while it is stopped). Never a shared or
 * hosted runtime: it serves other sessions (a chat's parent among them); the pause counts such runs as
 * going and counts on no memory from them (`pause-policy.ts`, `isPausable`).
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
