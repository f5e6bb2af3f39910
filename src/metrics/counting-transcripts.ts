import type { TranscriptStore, TranscriptWriter } from '../transcripts/transcript-store.js';

/** Transcript bytes received (cut output included) and transcripts cut, since the daemon started. */
export interface TranscriptTotals {
  bytes: number;
  cut: number;
}

/**
 * The transcript store with its totals counted as each writer closes (a run's end): no work per chunk,
 * so the output path costs what it did. Everything else passes through.
 */
export function countingTranscripts(inner: TranscriptStore, totals: TranscriptTotals): TranscriptStore {
  const open = (runId: string): TranscriptWriter => {
    const writer = inner.open(runId);
    return {
      write: (text) => writer.write(text),
      close: async () => {
        const result = await writer.close();
        totals.bytes += result.bytes;
        if (result.cut) totals.cut++;
        return result;
      },
    };
  };
  return {
    open,
    preview: (runId, options) => inner.preview(runId, options),
    page: (runId, options) => inner.page(runId, options),
    prune: (runId) => inner.prune(runId),
    pathOf: (runId) => inner.pathOf(runId),
    ...(inner.close ? { close: () => (inner.close as () => Promise<void>)() } : {}),
  };
}
