import type { Clock } from '../core/clock.js';
import { ByteTranscriptStore } from './byte-transcript-store.js';
import { FileTranscriptBytes } from './file-bytes.js';
import { findGrepWorkerFile, GrepPool } from './grep-pool.js';

export interface FileTranscriptsOptions {
  maxBytes: number;
  clock: Clock;
  /** `agent.grep_budget_ms`. @default 1000 */
  grepBudgetMs?: number;
  /**
   * The built grep worker; found beside Crew's entry points by default. Without one (running from
   * `src/`), or with `null`, greps run on the event loop within the same budget.
   */
  grepWorkerFile?: string | null;
}

/**
 * Transcripts on disk: `$CREW_HOME/subagents/<id>/result.txt` (0600), written as output streams in and
 * cut at `agent.transcript_max_bytes`; previews read only the head/tail, pages stream the file. Buffered
 * output reaches the file within the writer's flush delay on `clock`. Greps run on a pool of worker
 * threads (`grep-pool.ts`), so no pattern can stall the event loop; `close()` ends them.
 */
export class FileTranscripts extends ByteTranscriptStore {
  constructor(crewHome: string, options: FileTranscriptsOptions) {
    const workerFile =
      options.grepWorkerFile === undefined ? findGrepWorkerFile() : (options.grepWorkerFile ?? undefined);
    super(new FileTranscriptBytes(crewHome), {
      maxBytes: options.maxBytes,
      clock: options.clock,
      ...(options.grepBudgetMs !== undefined ? { grepBudgetMs: options.grepBudgetMs } : {}),
      ...(workerFile !== undefined ? { grepPool: new GrepPool({ workerFile }) } : {}),
    });
  }
}
