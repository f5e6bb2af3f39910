import type { KeepMode, Truncated } from '../core/truncate.js';

/**
 * The TranscriptStore port: where run output goes (DESIGN §6, Files: `subagents/<id>/result.txt`). The
 * gateway writes each `output` event as it arrives and reads previews and `spawn_status` pages back.
 *
 * Contract (checked by `test/transcripts/transcript-store-conformance.ts` for every adapter):
 * - `open` starts a run's transcript afresh; output past `agent.transcript_max_bytes` is dropped and one
 *   marker line says where the cut fell. Output is never split inside a character, even when a chunk ends
 *   between the halves of a surrogate pair.
 * - Written output becomes readable once the writer flushes (at the latest on `close`).
 * - `page` and `preview` read a transcript that is missing (never opened, or pruned) as an empty one.
 * - `page` follows DESIGN §6 Paging and `docs/decisions.md` "Page line numbers": `offset` 0-based, the
 *   header `[lines X-Y of N | more available — call again with offset=Y]` 1-based and inclusive; bad
 *   arguments are refused `invalid_argument` with their path.
 *
 * Left out: who may read a run (the gateway's scopes), when a transcript expires (the reaper), and
 * redaction (completion text).
 *
 * Adapters: `FileTranscripts` (the daemon) and `MemoryTranscripts` (unit tests, library use, benchmarks),
 * both a `ByteTranscriptStore` over a different byte store, so paging and previews are the same code.
 */
export interface TranscriptStore {
  open(runId: string): TranscriptWriter;
  /** The head and/or tail the completion event shows, read without loading the whole transcript. */
  preview(runId: string, options: PreviewRequest): Promise<Truncated>;
  page(runId: string, options: PageOptions): Promise<TranscriptPage>;
  /** Deletes the transcript (the reaper, after the TTL). */
  prune(runId: string): Promise<void>;
  /** Where the transcript lives, for the completion event's pointer. */
  pathOf(runId: string): string;
  /** Releases what reading needs (the file store's grep threads); nothing remains after it. */
  close?(): Promise<void>;
}

export interface TranscriptWriter {
  /**
   * Appends a chunk of output; never throws (a failed write is reported once, its bytes dropped and
   * counted, and later writes tried again).
   */
  write(text: string): void;
  /**
   * Flushes; resolves with the totals received (cut output included) once everything kept is durable, and
   * `gapBytes`: bytes of kept output lost to failed writes (0 when none).
   */
  close(): Promise<{ chars: number; bytes: number; cut: boolean; gapBytes: number }>;
}

export interface PreviewRequest {
  /** Which part to keep (`agent.completion_keep`). */
  keep: KeepMode;
  /** Chars (code points) to keep (`agent.completion_keep_chars`); 0 keeps the whole transcript. */
  keepChars: number;
}

export interface PageOptions {
  /** 0-based index of the first line; past the end gives an empty page saying so. */
  offset?: number;
  /** Lines per page (matches, with `grep`); above 10,000 is clamped. @default 200 */
  limit?: number;
  /** Keep only lines matching this pattern (see `grep-pattern.ts` for the language). */
  grep?: string;
  /** Most chars of lines on one page (`agent.status_max_chars`); the header is extra. */
  maxChars: number;
  /**
   * Who asks (the parent key, or `operator`): the grep pool takes turns between clients, so one client's
   * many greps cannot starve another's one. Not part of the page. @default 'anonymous'
   */
  client?: string;
}

export interface TranscriptPage {
  /** The page: a header line when paging (or when more remain), then the lines. */
  text: string;
  /** 1-based first line covered (X of the header). */
  fromLine?: number;
  /** 1-based last line covered, inclusive (Y of the header); also the offset to continue from. */
  toLine?: number;
  totalLines?: number;
}
