/** Transcripts' bytes in memory: the in-memory store's whole difference from the file store. */
import { CrewError, refuse } from '../core/errors.js';
import type { ByteReader, ByteSink, ByteSource, TranscriptBytes } from './transcript-bytes.js';

export class MemoryTranscriptBytes implements TranscriptBytes {
  /** Each run's chunks as written; joined when a reader opens. */
  private readonly chunks = new Map<string, Uint8Array[]>();

  create(runId: string): ByteSink {
    // A writer holds its own list: after a prune (or a fresh open) it writes where no reader looks.
    const sink = new ChunkSink();
    this.chunks.set(runId, sink.chunks);
    return sink;
  }

  source(runId: string): ByteSource {
    return {
      open: async () => {
        const chunks = this.chunks.get(runId);
        if (chunks === undefined) {
          throw new CrewError(refuse('not_found', `No transcript for ${runId}: never written or pruned`));
        }
        return bufferReader(Buffer.concat(chunks));
      },
    };
  }

  async remove(runId: string): Promise<void> {
    this.chunks.delete(runId);
  }

  pathOf(runId: string): string {
    return `memory://${runId}/result.txt`;
  }

  /** The run's bytes so far, or undefined when there is no transcript. */
  bytes(runId: string): Buffer | undefined {
    const chunks = this.chunks.get(runId);
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

  write(bytes: Uint8Array): void {
    this.chunks.push(bytes);
  }

  close(): void {}
}
