/**
 * Streams a transcript's bytes as lines in pieces, with bounded memory whatever its size or its longest
 * line: a fixed read buffer, a streaming UTF-8 decoder, and pieces handed to the visitor as they come.
 * Lines end at `\n`; a last line without one still counts, and a transcript ending in `\n` has no empty
 * line after it (so `wc -l` plus one for an unterminated last line).
 */
import type { ByteReader } from './transcript-bytes.js';

export interface LineVisitor {
  /** A piece of the current line (never containing `\n`); may be called several times per line. */
  piece(text: string): void;
  /** The current line ended; the next piece starts the next line. */
  lineEnd(): void;
  /**
   * Whether the visitor needs the pieces of the current line at all; when false the reader only counts
   * lines, which is much faster. Asked at each line start and after each piece.
   */
  wantsPieces(): boolean;
}

/**
 * Bytes read per step.
 * @default 65536
 */
export const READ_CHUNK_BYTES = 64 * 1024;

/** Reads `reader` line by line into `visitor` from its start; resolves with the number of lines. */
export async function readLines(
  reader: ByteReader,
  visitor: LineVisitor,
  chunkBytes = READ_CHUNK_BYTES,
): Promise<number> {
  const buffer = Buffer.allocUnsafe(chunkBytes);
  const decoder = new TextDecoder('utf-8');
  let lines = 0;
  let lineOpen = false; // the current line has at least one char
  const consume = (text: string): void => {
    let from = 0;
    while (from < text.length) {
      const newline = text.indexOf('\n', from);
      const end = newline < 0 ? text.length : newline;
      if (end > from) {
        lineOpen = true;
        if (visitor.wantsPieces()) visitor.piece(text.slice(from, end));
      }
      if (newline < 0) break;
      lines++;
      lineOpen = false;
      visitor.lineEnd();
      from = newline + 1;
    }
  };
  for (let position = 0; ; ) {
    const bytesRead = await reader.read(buffer, 0, chunkBytes, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    consume(decoder.decode(buffer.subarray(0, bytesRead), { stream: true }));
  }
  consume(decoder.decode());
  if (lineOpen) {
    lines++;
    visitor.lineEnd();
  }
  return lines;
}
