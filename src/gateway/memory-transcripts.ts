import { type Truncated, truncate } from '../core/truncate.js';
import type { PageOptions, TranscriptPage, TranscriptStore, TranscriptWriter } from './transcript-port.js';

/** Transcripts kept in memory: for unit tests and benchmarks. Same contract as the file store. */
export class MemoryTranscripts implements TranscriptStore {
  private readonly texts = new Map<string, string>();

  open(runId: string): TranscriptWriter {
    let text = this.texts.get(runId) ?? '';
    this.texts.set(runId, text);
    return {
      write: (chunk) => {
        text += chunk;
        this.texts.set(runId, text);
      },
      close: async () => ({ chars: [...text].length, bytes: Buffer.byteLength(text), cut: false }),
    };
  }

  text(runId: string): string | undefined {
    return this.texts.get(runId);
  }

  async preview(
    runId: string,
    options: { keep: 'head' | 'tail' | 'both'; keepChars: number },
  ): Promise<Truncated> {
    return truncate(this.texts.get(runId) ?? '', options);
  }

  async page(runId: string, options: PageOptions): Promise<TranscriptPage> {
    const text = this.texts.get(runId) ?? '';
    const lines = text === '' ? [] : text.split('\n');
    const offset = options.offset ?? 0;
    const limit = options.limit ?? lines.length;
    const slice = lines.slice(offset, offset + limit);
    return {
      text: slice.join('\n').slice(0, options.maxChars),
      fromLine: offset,
      toLine: offset + slice.length,
      totalLines: lines.length,
    };
  }

  async prune(runId: string): Promise<void> {
    this.texts.delete(runId);
  }

  pathOf(runId: string): string {
    return `memory://${runId}/result.txt`;
  }
}
