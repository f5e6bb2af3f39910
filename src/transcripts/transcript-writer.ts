/**
 * Writes a run's streamed output to its transcript's bytes (a file, DESIGN §6 Files, or memory): chunks
 * appended as they come through a small buffer, and the text cut with a marker line once
 * `agent.transcript_max_bytes` is reached. The run goes on after a cut; later chunks are dropped but still
 * counted.
 *
 * Writes are synchronous, a buffer's worth (64 KiB by default) at a time: memory stays bounded without
 * asking the runner to await backpressure, and a flush of that size to the page cache takes microseconds.
 * A failed write never throws into the runner: it is reported once, the bytes it held are dropped, and the
 * next flush tries again (a disk that was full may have room by then). When a write succeeds after bytes
 * were dropped, a gap marker line goes first, saying how many; the count is also in the stats
 * (`gapBytes`, the run's `transcript_gap`), so a transcript with a hole never reads as whole.
 */
import type { Clock, TimerHandle } from '../core/clock.js';
import { countChars } from '../core/truncate.js';
import { openFileSink } from './file-bytes.js';
import type { ByteSink } from './transcript-bytes.js';
import { countUtf8Chars, utf8CutBefore } from './utf8.js';

export interface TranscriptWriterOptions {
  /** Bytes of output kept before the cut (`agent.transcript_max_bytes`); the marker line comes on top. */
  maxBytes: number;
  /** Bytes held in memory before they are written. @default 65536 */
  bufferBytes?: number;
  /** With a clock, buffered output is written this long after it arrives, so readers see it. @default 250 */
  flushAfterMs?: number;
  /** Drives the delayed flush; without one, output is written only when the buffer fills or on flush/close. */
  clock?: Clock;
  /** Told once about the first failed write (the default writes one line to stderr). */
  onError?: (error: unknown) => void;
}

export interface TranscriptStats {
  /** Output received, in UTF-8 bytes and in chars (code points), including what the cut dropped. */
  bytesReceived: number;
  charsReceived: number;
  /** Output kept (the marker not included). */
  bytesWritten: number;
  charsWritten: number;
  /** Chars kept, marker included: pass it to `readPreview` as `totalChars` to skip a count. */
  fileChars: number;
  /** Whether the output reached `maxBytes` and was cut. */
  cut: boolean;
  /** The first write error, when writing failed. */
  error?: string;
  /** Bytes of kept output that failed to reach the sink (a full disk); 0 when none. */
  gapBytes: number;
}

/** The line put where output was lost: `bytes` failed to be written (`error` said why). */
export function gapMarker(bytes: number, error: string): string {
  return `[transcript gap: ${bytes} bytes of output were lost here (write failed: ${error})]`;
}

/** The line that ends a cut transcript; `keptBytes` is the output kept before it. */
export function cutMarker(keptBytes: number): string {
  return `[transcript cut at ${keptBytes} bytes (agent.transcript_max_bytes); the run went on]`;
}

export class TranscriptWriter {
  private sink: ByteSink | undefined;
  private readonly maxBytes: number;
  private readonly bufferBytes: number;
  private readonly flushAfterMs: number;
  private readonly clock: Clock | undefined;
  private readonly onError: (error: unknown) => void;
  private buffered: Buffer[] = [];
  private bufferedBytes = 0;
  private timer: TimerHandle | undefined;
  /** A high surrogate that ended a chunk, held until its low half arrives in the next one. */
  private pendingHigh = '';
  private lastByte = -1;
  private markerChars = 0;
  private error: unknown;
  /** Bytes dropped by failed writes, in all, and since the last gap marker reached the sink. */
  private gapBytes = 0;
  private gapChars = 0;
  private unmarkedGap = 0;
  private lastError = '';
  /** The last byte that reached the sink (-1 before any). */
  private lastSinkByte = -1;
  private readonly counts = {
    bytesReceived: 0,
    charsReceived: 0,
    bytesWritten: 0,
    charsWritten: 0,
    cut: false,
  };

  constructor(sink: ByteSink, options: TranscriptWriterOptions) {
    this.sink = sink;
    this.maxBytes = Math.max(0, Math.floor(options.maxBytes));
    this.bufferBytes = Math.max(1, options.bufferBytes ?? 64 * 1024);
    this.flushAfterMs = options.flushAfterMs ?? 250;
    this.clock = options.clock;
    this.onError =
      options.onError ??
      ((error) =>
        process.stderr.write(`crew: transcript write failed: ${describe(error)}; output dropped\n`));
  }

  /** A writer to the file at `path`, created (or emptied) as {@link openFileSink} does; throws when it cannot. */
  static open(path: string, options: TranscriptWriterOptions): TranscriptWriter {
    return new TranscriptWriter(openFileSink(path), options);
  }

  /** Appends a chunk of output; never throws. After `close` chunks are ignored. */
  write(chunk: string): void {
    if (this.sink === undefined) return;
    let text = this.pendingHigh + chunk;
    this.pendingHigh = '';
    const last = text.charCodeAt(text.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) {
      this.pendingHigh = text.slice(-1);
      text = text.slice(0, -1);
    }
    this.append(text);
  }

  /** Writes what is buffered. */
  flush(): void {
    this.cancelTimer();
    if (this.bufferedBytes === 0 || this.sink === undefined) return;
    const data =
      this.buffered.length === 1 ? this.buffered[0]! : Buffer.concat(this.buffered, this.bufferedBytes);
    this.buffered = [];
    this.bufferedBytes = 0;
    if (this.unmarkedGap > 0 && !this.writeGapMarker()) {
      this.drop(data, 0);
      return;
    }
    try {
      this.sink.write(data);
      this.lastSinkByte = data[data.length - 1]!;
    } catch (error) {
      this.fail(error);
      this.drop(data, writtenBefore(error));
    }
  }

  /** Writes the marker for the bytes lost since the last one; false when that write fails too. */
  private writeGapMarker(): boolean {
    if (this.sink === undefined) return false;
    const newline = this.lastSinkByte === -1 || this.lastSinkByte === 0x0a ? '' : '\n';
    const marker = `${newline}${gapMarker(this.unmarkedGap, this.lastError)}\n`;
    try {
      this.sink.write(Buffer.from(marker, 'utf8'));
    } catch (error) {
      this.fail(error);
      return false;
    }
    this.lastSinkByte = 0x0a;
    this.markerChars += countChars(marker);
    this.unmarkedGap = 0;
    return true;
  }

  /** Counts what a failed write lost: `data` past the `written` bytes that did reach the sink. */
  private drop(data: Buffer, written: number): void {
    if (written > 0) this.lastSinkByte = data[written - 1]!;
    const lost = data.subarray(Math.min(written, data.length));
    this.gapBytes += lost.length;
    this.gapChars += countUtf8Chars(lost);
    this.unmarkedGap += lost.length;
  }

  /** Flushes and closes the sink; resolves with the final counts. Calling it again is a no-op. */
  async close(): Promise<TranscriptStats> {
    if (this.sink !== undefined) {
      if (this.pendingHigh !== '') {
        const lone = this.pendingHigh;
        this.pendingHigh = '';
        this.append(lone); // a lone surrogate: written as U+FFFD
      }
      this.flush();
      const sink = this.sink;
      this.sink = undefined;
      try {
        sink.close(this.counts.charsWritten - this.gapChars + this.markerChars);
      } catch (error) {
        this.fail(error);
      }
    }
    return this.stats();
  }

  stats(): TranscriptStats {
    // Field by field, not spread from `counts`: one object per run end, on the hot path.
    const counts = this.counts;
    const stats: TranscriptStats = {
      bytesReceived: counts.bytesReceived,
      charsReceived: counts.charsReceived,
      bytesWritten: counts.bytesWritten,
      charsWritten: counts.charsWritten,
      fileChars: counts.charsWritten - this.gapChars + this.markerChars,
      cut: counts.cut,
      gapBytes: this.gapBytes,
    };
    if (this.error !== undefined) stats.error = describe(this.error);
    return stats;
  }

  private append(text: string): void {
    if (text === '') return;
    const counts = this.counts;
    const chars = countChars(text);
    counts.charsReceived += chars;
    if (counts.cut) {
      counts.bytesReceived += Buffer.byteLength(text, 'utf8');
      return;
    }
    const bytes = Buffer.from(text, 'utf8');
    counts.bytesReceived += bytes.length;
    const room = this.maxBytes - counts.bytesWritten;
    if (bytes.length <= room) {
      this.keep(bytes);
      counts.charsWritten += chars;
      return;
    }
    const kept = bytes.subarray(0, utf8CutBefore(bytes, room));
    this.keep(kept);
    counts.charsWritten += countUtf8Chars(kept);
    counts.cut = true;
    const newline = this.lastByte === -1 || this.lastByte === 0x0a ? '' : '\n';
    const marker = `${newline}${cutMarker(counts.bytesWritten)}\n`;
    this.markerChars = countChars(marker);
    this.buffer(Buffer.from(marker, 'utf8'));
  }

  private keep(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.counts.bytesWritten += bytes.length;
    this.lastByte = bytes[bytes.length - 1]!;
    this.buffer(bytes);
  }

  private buffer(bytes: Buffer): void {
    this.buffered.push(bytes);
    this.bufferedBytes += bytes.length;
    if (this.bufferedBytes >= this.bufferBytes) this.flush();
    else if (this.clock && this.timer === undefined) {
      this.timer = this.clock.setTimer(() => {
        this.timer = undefined;
        this.flush();
      }, this.flushAfterMs);
    }
  }

  private cancelTimer(): void {
    if (this.timer !== undefined && this.clock) this.clock.clearTimer(this.timer);
    this.timer = undefined;
  }

  private fail(error: unknown): void {
    this.lastError = describe(error);
    if (this.error !== undefined) return;
    this.error = error;
    try {
      this.onError(error);
    } catch {
      // A failing reporter must not break the run either.
    }
  }
}

/** How many bytes of a failed write reached the sink first (a sink may say, as the file sink does). */
function writtenBefore(error: unknown): number {
  const written = (error as { writtenBytes?: unknown } | undefined)?.writtenBytes;
  return typeof written === 'number' && Number.isSafeInteger(written) && written > 0 ? written : 0;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
