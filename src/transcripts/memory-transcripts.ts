import { ByteTranscriptStore } from './byte-transcript-store.js';
import { MemoryTranscriptBytes } from './memory-bytes.js';

export interface MemoryTranscriptsOptions {
  /** Bytes of output kept per run before the cut. @default Infinity (no cut) */
  maxBytes?: number;
}

/**
 * Transcripts kept in memory: for unit tests, library use without a home directory, and benchmarks. The
 * file store's writer, pager and preview reader over bytes in memory, so it pages, cuts and previews
 * exactly as the file store does; output is readable as soon as it is written.
 */
export class MemoryTranscripts extends ByteTranscriptStore {
  private readonly memory: MemoryTranscriptBytes;

  constructor(options: MemoryTranscriptsOptions = {}) {
    const memory = new MemoryTranscriptBytes();
    super(memory, { maxBytes: options.maxBytes ?? Number.POSITIVE_INFINITY, bufferBytes: 1 });
    this.memory = memory;
  }

  /** The run's transcript so far (cut marker included), or undefined when there is none. */
  text(runId: string): string | undefined {
    return this.memory.bytes(runId)?.toString('utf8');
  }
}
