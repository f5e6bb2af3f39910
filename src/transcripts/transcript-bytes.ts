/**
 * Where transcripts' bytes live: the one thing the file store and the in-memory store differ in. The
 * writer (cut, marker, surrogate pairs), the pager and the preview reader run over these, so both stores
 * share them.
 *
 * Left out: text, lines and chars (the writer and readers work those out), and buffering (the writer's).
 */
export interface TranscriptBytes {
  /** Creates the run's transcript, or empties an existing one. Throws when it cannot be created. */
  create(runId: string): ByteSink;
  /**
   * The chars of the run's transcript as its sink was closed with them (so a preview need not count them
   * again); undefined when this store has not closed one for the run since it was made or emptied.
   */
  keptChars(runId: string): number | undefined;
  /**
   * Empties the run's transcript if this store closed one for it before (a run opened again that then
   * printed nothing reads as empty); anything else is left as it is.
   */
  forget(runId: string): Promise<void>;
  /** The run's transcript for reading; its `open` refuses `not_found` when there is none. */
  source(runId: string): ByteSource;
  /** Deletes the run's transcript; a missing one is not an error. */
  remove(runId: string): Promise<void>;
  pathOf(runId: string): string;
}

/** Bytes appended in order. */
export interface ByteSink {
  /** Appends all of `bytes` or throws; the sink may keep `bytes` (the writer never reuses them). */
  write(bytes: Uint8Array): void;
  /** Closes the sink; `chars` is the chars the transcript holds now (what `keptChars` answers after). */
  close(chars: number): void;
}

/** Something to read bytes from, opened once per read operation and closed after it. */
export interface ByteSource {
  /** Refuses `not_found` (a `CrewError`) when there is nothing to read. */
  open(): Promise<ByteReader>;
}

/** Random access to a source's bytes as they were when it was opened or later. */
export interface ByteReader {
  size(): Promise<number>;
  /** Reads up to `length` bytes at `position` into `buffer` at `offset`; resolves with the count (0 at the end). */
  read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<number>;
  close(): Promise<void>;
}
