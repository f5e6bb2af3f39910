/** Transcripts' bytes in memory: the in-memory store's whole difference from the file store. */
import { CrewError, refuse } from '../core/errors.js';
import type { ByteReader, ByteSink, ByteSource, TranscriptBytes } from './transcript-bytes.js';

export class MemoryTranscriptBytes implements TranscriptBytes {
  /**
   * Each run's sink: its chunks as written (joined when a reader opens) and, once closed, their chars. One
   * entry per run that printed, and nothing else per run: the chars ride on the sink, not in a map beside.
   */
  private readonly sinks = new Map<string, ChunkSink>();

  create(runId: string): ByteSink {
    // A writer holds its own sink: after a prune (or a fresh open) it writes where no reader looks.
    const sink = new ChunkSink();
    this.sinks.set(runId, sink);
    return sink;
  }

  keptChars(runId: string): number | undefined {
    return this.sinks.get(runId)?.chars;
  }

  async forget(runId: string): Promise<void> {
    // Deleted, not emptied: a run with no transcript reads as an empty one.
    if (this.sinks.get(runId)?.chars !== undefined) this.sinks.delete(runId);
  }

  source(runId: string): ByteSource {
    return {
      open: async () => {
        const chunks = this.sinks.get(runId)?.chunks;
        if (chunks === undefined) {
          throw new CrewError(refuse('not_found', `No transcript for ${runId}: never written or pruned`));
        }
        return bufferReader(Buffer.concat(chunks));
      },
    };
  }

  async remove(runId: string): Promise<void> {
    this.sinks.delete(runId);
  }

  pathOf(runId: string): string {
    return `memory://${runId}/result.txt`;
  }

  /** The run's bytes so far, or undefined when there is no transcript. */
  bytes(runId: string): Buffer | undefined {
    const chunks = this.sinks.get(runId)?.chunks;
    return chunks === undefined ? undefined : Buffer.concat(chunks);
  }
}

function bufferReader(bytes: Buffer): ByteReader {
  return {
    size: async () => bytes.length,
    read: async (buffer, offset, length, position) =>
      position >= bytes.length
        ? 0
        : bytes.copy(buffer, offset, position, Math.min(bytes.length, position + length)),
    close: async () => undefined,
  };
}

/** A sink appending to its own list of chunks (a class: one is made per run that prints). */
class ChunkSink implements ByteSink {
  readonly chunks: Uint8Array[] = [];
  /** The chars of the chunks, once closed. */
  chars: number | undefined = undefined;

  write(bytes: Uint8Array): void {
    this.chunks.push(bytes);
  }

  close(chars: number): void {
    this.chars = chars;
  }
}
