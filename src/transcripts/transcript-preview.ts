/**
 * The preview of a transcript for a completion event, read from its head and/or tail only, so memory is
 * bounded by the preview length even for a 100 MB transcript.
 */
import {
  countChars,
  joinHeadTail,
  type KeepMode,
  splitBudget,
  type Truncated,
  takeHead,
  takeTail,
} from '../core/truncate.js';
import type { ByteReader, ByteSource } from './transcript-bytes.js';
import { countUtf8Chars, utf8CutBefore, utf8StartAfter } from './utf8.js';

export interface PreviewOptions {
  /** Which part to keep (`agent.completion_keep`). */
  keep: KeepMode;
  /**
   * Chars to keep (`agent.completion_keep_chars`); 0 disables truncation and reads the whole transcript,
   * which `agent.transcript_max_bytes` bounds.
   */
  keepChars: number;
  /**
   * Chars in the transcript when the caller knows (`TranscriptWriter.stats().fileChars`); otherwise it is
   * streamed once to count them, in bounded memory.
   */
  totalChars?: number;
}

/** UTF-8 needs at most 4 bytes per char. */
const MAX_BYTES_PER_CHAR = 4;
/** Extra bytes read past the cut so a grapheme straddling it is seen whole. */
const GRAPHEME_SLACK_BYTES = 256;
const COUNT_CHUNK_BYTES = 64 * 1024;

/**
 * Reads the preview of the transcript in `source`; `total` is its whole length in chars. A missing
 * transcript is refused as the source does (`not_found`).
 */
export async function readPreview(source: ByteSource, options: PreviewOptions): Promise<Truncated> {
  const reader = await source.open();
  try {
    const size = await reader.size();
    const total = options.totalChars ?? (await charsIn(reader, size));
    const { keep, keepChars } = options;
    if (keepChars <= 0 || total <= keepChars) {
      const text = (await readRange(reader, 0, size)).toString('utf8');
      return { text, kept: total, total, truncated: false };
    }
    const { headChars, tailChars } =
      keep === 'both'
        ? splitBudget(keepChars)
        : keep === 'head'
          ? { headChars: keepChars, tailChars: 0 }
          : { headChars: 0, tailChars: keepChars };
    const head = headChars > 0 ? takeHead(await readHeadText(reader, size, headChars), headChars) : '';
    const tail = tailChars > 0 ? takeTail(await readTailText(reader, size, tailChars), tailChars) : '';
    const text = keep === 'both' ? joinHeadTail(head, tail) : head + tail;
    return { text, kept: countChars(head) + countChars(tail), total, truncated: true };
  } finally {
    await reader.close();
  }
}

/** Counts the chars of UTF-8 bytes by streaming them. */
export async function countSourceChars(source: ByteSource): Promise<number> {
  const reader = await source.open();
  try {
    return await charsIn(reader, await reader.size());
  } finally {
    await reader.close();
  }
}

async function charsIn(reader: ByteReader, size: number): Promise<number> {
  const buffer = Buffer.allocUnsafe(Math.min(COUNT_CHUNK_BYTES, Math.max(1, size)));
  let chars = 0;
  for (let position = 0; position < size; ) {
    const bytesRead = await reader.read(buffer, 0, buffer.length, position);
    if (bytesRead === 0) break;
    chars += countUtf8Chars(buffer.subarray(0, bytesRead));
    position += bytesRead;
  }
  return chars;
}

async function readHeadText(reader: ByteReader, size: number, chars: number): Promise<string> {
  const bytes = await readRange(reader, 0, Math.min(size, chars * MAX_BYTES_PER_CHAR + GRAPHEME_SLACK_BYTES));
  // A read that stops short of the end may stop inside a char: drop the last char (the slack covers it).
  const end = bytes.length < size ? utf8CutBefore(bytes, bytes.length - 1) : bytes.length;
  return bytes.subarray(0, end).toString('utf8');
}

async function readTailText(reader: ByteReader, size: number, chars: number): Promise<string> {
  const start = Math.max(0, size - (chars * MAX_BYTES_PER_CHAR + GRAPHEME_SLACK_BYTES));
  const bytes = await readRange(reader, start, size);
  return bytes.subarray(start > 0 ? utf8StartAfter(bytes, 0) : 0).toString('utf8');
}

async function readRange(reader: ByteReader, from: number, to: number): Promise<Buffer> {
  const buffer = Buffer.alloc(Math.max(0, to - from));
  let filled = 0;
  while (filled < buffer.length) {
    const bytesRead = await reader.read(buffer, filled, buffer.length - filled, from + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}
