import type { Clock } from '../core/clock.js';
import { isCrewError } from '../core/errors.js';
import type { Truncated } from '../core/truncate.js';
import type { GrepPool } from './grep-pool.js';
import { pageTranscript } from './paging.js';
import type { ByteSource, TranscriptBytes } from './transcript-bytes.js';
import { readPreview } from './transcript-preview.js';
import type {
  PageOptions,
  TranscriptWriter as PortWriter,
  PreviewRequest,
  TranscriptPage,
  TranscriptStore,
} from './transcript-store.js';
import { TranscriptWriter, type TranscriptWriterOptions } from './transcript-writer.js';

export interface ByteTranscriptStoreOptions {
  /** Bytes of output kept per run before the cut (`agent.transcript_max_bytes`). */
  maxBytes: number;
  /** Drives the writer's delayed flush; without one, output is written when the buffer fills. */
  clock?: Clock;
  /** Bytes a writer holds before writing them (1 writes through). @default 65536 */
  bufferBytes?: number;
  /**
   * Wall-clock budget of one grep call (`agent.grep_budget_ms`): past it the page returns the matches
   * found so far and the offset to go on from. Read on `clock` (or `performance.now`) when no pool.
   * @default 1000
   */
  grepBudgetMs?: number;
  /** Threads that run greps off the event loop, by the transcript's path; without one greps run inline. */
  grepPool?: GrepPool;
}

/** @default 1000 */
export const GREP_BUDGET_MS = 1000;

/** Nothing to read: what a missing transcript pages and previews as. */
const EMPTY_SOURCE: ByteSource = {
  open: async () => ({ size: async () => 0, read: async () => 0, close: async () => undefined }),
};

/**
 * The {@link TranscriptStore} over any {@link TranscriptBytes}: the writer cuts at `maxBytes`, pages and
 * previews stream the bytes. The file and memory stores are this over their own bytes.
 */
export class ByteTranscriptStore implements TranscriptStore {
  constructor(
    private readonly bytes: TranscriptBytes,
    private readonly options: ByteTranscriptStoreOptions,
  ) {}

  /**
   * The run's writer. Its transcript is made (afresh) on the first output, not here: a run that prints
   * nothing leaves none, and reads as an empty one, without a file made and closed for it.
   */
  open(runId: string): PortWriter {
    return new LazyWriter(this, runId);
  }

  /**
   * Empties a transcript this store finished for the run before, when the run opened again printed
   * nothing (one that prints is made afresh at its first output). Asked at the close, not at the open: an
   * open costs no lookup, and until its first output the run's transcript reads as before either way.
   */
  async forget(runId: string): Promise<void> {
    try {
      await this.bytes.forget(runId);
    } catch (error) {
      // As a transcript that cannot be made: said once, and the run ends as it would have.
      process.stderr.write(`crew: cannot empty the transcript of ${runId}: ${(error as Error).message}\n`);
    }
  }

  /** A writer over the run's transcript, made afresh; undefined (said once on stderr) when it cannot be. */
  create(runId: string): TranscriptWriter | undefined {
    try {
      const options: TranscriptWriterOptions = { maxBytes: this.options.maxBytes };
      if (this.options.clock) options.clock = this.options.clock;
      if (this.options.bufferBytes !== undefined) options.bufferBytes = this.options.bufferBytes;
      return new TranscriptWriter(this.bytes.create(runId), options);
    } catch (error) {
      process.stderr.write(`crew: cannot write the transcript of ${runId}: ${(error as Error).message}\n`);
      return undefined;
    }
  }

  async preview(runId: string, options: PreviewRequest): Promise<Truncated> {
    const totalChars = this.bytes.keptChars(runId);
    const request = { ...options, ...(totalChars !== undefined ? { totalChars } : {}) };
    try {
      return await readPreview(this.bytes.source(runId), request);
    } catch (error) {
      if (!isNotFound(error)) throw error;
      return readPreview(EMPTY_SOURCE, options);
    }
  }

  async page(runId: string, options: PageOptions): Promise<TranscriptPage> {
    const budgetMs = this.options.grepBudgetMs ?? GREP_BUDGET_MS;
    const { grepPool, clock } = this.options;
    try {
      if (options.grep !== undefined && grepPool) {
        return await grepPool.run(this.bytes.pathOf(runId), options, budgetMs);
      }
      const now = clock ? () => clock.now() : () => performance.now();
      return await pageTranscript(this.bytes.source(runId), options, { budgetMs, now });
    } catch (error) {
      // A run that never started (or was pruned) has no transcript: it pages as an empty one.
      if (!isNotFound(error)) throw error;
      return pageTranscript(EMPTY_SOURCE, options);
    }
  }

  async prune(runId: string): Promise<void> {
    await this.bytes.remove(runId);
  }

  pathOf(runId: string): string {
    return this.bytes.pathOf(runId);
  }

  /** Ends the grep pool's threads, if any; pages with grep are refused after. */
  async close(): Promise<void> {
    await this.options.grepPool?.close();
  }
}

function isNotFound(error: unknown): boolean {
  return isCrewError(error) && error.code === 'not_found';
}

/**
 * A run's writer from {@link ByteTranscriptStore.open}: makes the transcript at the first output (a class,
 * not a pair of closures: one is made per run).
 */
class LazyWriter implements PortWriter {
  private writer: TranscriptWriter | undefined;
  private state: 'unopened' | 'open' | 'closed' = 'unopened';

  constructor(
    private readonly store: ByteTranscriptStore,
    private readonly runId: string,
  ) {}

  write(text: string): void {
    if (this.state === 'unopened') {
      if (text === '') return;
      this.state = 'open';
      this.writer = this.store.create(this.runId);
    }
    this.writer?.write(text);
  }

  async close(): Promise<{ chars: number; bytes: number; cut: boolean; gapBytes: number }> {
    const was = this.state;
    this.state = 'closed';
    if (was === 'unopened') await this.store.forget(this.runId);
    const writer = this.writer;
    if (!writer) return { chars: 0, bytes: 0, cut: false, gapBytes: 0 };
    const stats = await writer.close();
    return {
      chars: stats.charsReceived,
      bytes: stats.bytesReceived,
      cut: stats.cut,
      gapBytes: stats.gapBytes,
    };
  }
}
