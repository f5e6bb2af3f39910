import { rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Clock } from '../core/clock.js';
import { isCrewError } from '../core/errors.js';
import { type Truncated, truncate } from '../core/truncate.js';
import { pageTranscript } from '../transcripts/paging.js';
import { transcriptPath } from '../transcripts/transcript-path.js';
import { readPreview } from '../transcripts/transcript-preview.js';
import { TranscriptWriter } from '../transcripts/transcript-writer.js';
import type {
  PageOptions,
  TranscriptWriter as PortWriter,
  TranscriptPage,
  TranscriptStore,
} from './transcript-port.js';

/**
 * Transcripts on disk: `$CREW_HOME/subagents/<id>/result.txt` (0600), written as output streams in and
 * cut at `agent.transcript_max_bytes`; previews read only the head/tail, pages stream the file.
 */
export class FileTranscripts implements TranscriptStore {
  /** Chars per finished transcript, so a preview need not count the file again. */
  private readonly fileChars = new Map<string, number>();

  constructor(
    private readonly crewHome: string,
    private readonly options: { maxBytes: number; clock: Clock },
  ) {}

  open(runId: string): PortWriter {
    let writer: TranscriptWriter | undefined;
    try {
      writer = TranscriptWriter.open(this.pathOf(runId), {
        maxBytes: this.options.maxBytes,
        clock: this.options.clock,
      });
    } catch (error) {
      process.stderr.write(`crew: cannot write the transcript of ${runId}: ${(error as Error).message}\n`);
    }
    return {
      write: (text) => writer?.write(text),
      close: async () => {
        if (!writer) return { chars: 0, bytes: 0, cut: false };
        const stats = await writer.close();
        this.fileChars.set(runId, stats.fileChars);
        return { chars: stats.charsReceived, bytes: stats.bytesReceived, cut: stats.cut };
      },
    };
  }

  async preview(
    runId: string,
    options: { keep: 'head' | 'tail' | 'both'; keepChars: number },
  ): Promise<Truncated> {
    const totalChars = this.fileChars.get(runId);
    try {
      return await readPreview(this.pathOf(runId), {
        ...options,
        ...(totalChars !== undefined ? { totalChars } : {}),
      });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return truncate('', options);
      throw error;
    }
  }

  async page(runId: string, options: PageOptions): Promise<TranscriptPage> {
    try {
      const page = await pageTranscript(this.pathOf(runId), options);
      return { text: page.text, fromLine: page.fromLine, toLine: page.toLine, totalLines: page.totalLines };
    } catch (error) {
      // A run that never started has no transcript: an empty page, not an error.
      if (isCrewError(error) && error.code === 'not_found')
        return { text: '', fromLine: 0, toLine: 0, totalLines: 0 };
      throw error;
    }
  }

  async prune(runId: string): Promise<void> {
    this.fileChars.delete(runId);
    await rm(dirname(this.pathOf(runId)), { recursive: true, force: true });
  }

  pathOf(runId: string): string {
    return transcriptPath(this.crewHome, runId);
  }
}
