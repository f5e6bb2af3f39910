/**
 * Caps every JSON string in a stream of newline-delimited JSON at a number of chars, so an agent that
 * sends one huge `agent_message_chunk` (100 MB in one line) is read like one that sends many chunks: the
 * text is kept up to the transcript's limit, the transcript writer cuts it there with its marker, and the
 * run goes on. Without it the ACP SDK refuses the whole line (over its 32 MiB message limit), the
 * connection drops and the run fails with an empty transcript.
 *
 * Streaming and linear: one pass over the bytes, a handful of state, never a whole line in memory. A
 * string is cut only before a character (never inside a UTF-8 sequence or an escape), so the line stays
 * valid JSON and decodes to the string's first `maxChars` characters. A char is counted once whatever
 * its encoding (a raw byte, a UTF-8 sequence, `\n`, `\uXXXX`), so a cut string still decodes to more than
 * `maxChars - 1` UTF-8 bytes and the writer sees that it went over its limit.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NEWLINE = 0x0a;
const LOWER_U = 0x75;

/** Bytes one kept char may take in the stream at most (`\uXXXX`; a surrogate pair counts as two chars). */
export const MAX_ENCODED_BYTES_PER_CHAR = 6;

export class JsonStringCap {
  private inString = false;
  /** Bytes of the current escape still to pass: -1 just after the backslash, else hex digits left. */
  private escapeLeft = 0;
  private chars = 0;
  private dropping = false;
  /** Whether any string was cut since the start. */
  cut = false;

  /** @param maxChars chars kept of each string; the rest of the string is dropped. */
  constructor(private readonly maxChars: number) {}

  /** The bytes of `chunk` that are kept, in order (a view of a new buffer, or `chunk` when nothing went). */
  push(chunk: Uint8Array): Uint8Array {
    let out: Uint8Array | undefined;
    let written = 0;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i]!;
      const keep = this.step(byte);
      if (keep) {
        if (out) out[written] = byte;
        written++;
      } else if (!out) {
        out = new Uint8Array(chunk.length);
        out.set(chunk.subarray(0, written));
      }
    }
    return out ? out.subarray(0, written) : chunk;
  }

  /** Advances over one byte; whether it is kept. */
  private step(byte: number): boolean {
    if (!this.inString) {
      if (byte === QUOTE) this.startString();
      return true;
    }
    if (this.escapeLeft !== 0) {
      this.escapeLeft = this.escapeLeft === -1 ? (byte === LOWER_U ? 4 : 0) : this.escapeLeft - 1;
      return !this.dropping;
    }
    if (byte === QUOTE) {
      this.inString = false;
      return true;
    }
    if (byte === NEWLINE) {
      // Not valid inside a JSON string: the line was broken; start the next one afresh.
      this.inString = false;
      return true;
    }
    if (byte === BACKSLASH) this.escapeLeft = -1;
    // A UTF-8 continuation byte goes with its lead byte.
    if ((byte & 0xc0) !== 0x80) this.countChar();
    return !this.dropping;
  }

  private startString(): void {
    this.inString = true;
    this.escapeLeft = 0;
    this.chars = 0;
    this.dropping = false;
  }

  private countChar(): void {
    if (this.dropping) return;
    if (this.chars >= this.maxChars) {
      this.dropping = true;
      this.cut = true;
      return;
    }
    this.chars++;
  }
}

/** A web TransformStream over {@link JsonStringCap}. */
export function jsonStringCapStream(maxChars: number): TransformStream<Uint8Array, Uint8Array> {
  const cap = new JsonStringCap(maxChars);
  return new TransformStream({
    transform(chunk, controller) {
      const kept = cap.push(chunk);
      if (kept.length > 0) controller.enqueue(kept);
    },
  });
}
