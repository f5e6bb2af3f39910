import type { Truncated } from '../core/truncate.js';

/**
 * Where run output goes (DESIGN §6, Files: `subagents/<id>/result.txt`). The gateway writes each
 * `output` event as it arrives and reads previews and pages back; the file store lives in
 * `src/transcripts/`, an in-memory one in `memory-transcripts.ts` for unit tests and benchmarks.
 */
export interface TranscriptStore {
  open(runId: string): TranscriptWriter;
  /** The head and/or tail the completion event shows, read without loading the whole transcript. */
  preview(runId: string, options: { keep: 'head' | 'tail' | 'both'; keepChars: number }): Promise<Truncated>;
  page(runId: string, options: PageOptions): Promise<TranscriptPage>;
  /** Deletes the transcript (the reaper, after the TTL). */
  prune(runId: string): Promise<void>;
  pathOf(runId: string): string;
}

export interface TranscriptWriter {
  write(text: string): void;
  /** Flushes; resolves with the totals once everything written is durable. */
  close(): Promise<{ chars: number; bytes: number; cut: boolean }>;
}

export interface PageOptions {
  offset?: number;
  limit?: number;
  grep?: string;
  maxChars: number;
}

export interface TranscriptPage {
  text: string;
  fromLine?: number;
  toLine?: number;
  totalLines?: number;
}
