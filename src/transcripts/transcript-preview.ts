/**
 * The preview of a transcript for a completion event, read from the file's head and/or tail only, so
 * memory is bounded by the preview length even for a 100 MB transcript.
 */
import { type FileHandle, open } from 'node:fs/promises';
import {
  countChars,
  joinHeadTail,
  type KeepMode,
  splitBudget,
  type Truncated,
  takeHead,
  takeTail,
} from '../core/truncate.js';
import { countUtf8Chars, utf8CutBefore, utf8StartAfter } from './utf8.js';

export interface PreviewOptions {
  /** Which part to keep (`agent.completion_keep`). */
  keep: KeepMode;
  /**
   * Chars to keep (`agent.completion_keep_chars`); 0 disables truncation and reads the whole file, which
   * `agent.transcript_max_bytes` bounds.
   */
  keepChars: number;
  /**
   * Chars in the file when the caller knows (`TranscriptWriter.stats().fileChars`); otherwise the file is
   * streamed once to count them, in bounded memory.
   */
  totalChars?: number;
}

/** UTF-8 needs at most 4 bytes per char. */
const MAX_BYTES_PER_CHAR = 4;
/** Extra bytes read past the cut so a grapheme straddling it is seen whole. */
const GRAPHEME_SLACK_BYTES = 256;
const COUNT_CHUNK_BYTES = 64 * 1024;

/** Reads the preview of the transcript at `path`; `total` is the whole file's length in chars. */
export async function readPreview(path: string, options: PreviewOptions): Promise<Truncated> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    const total = options.totalChars ?? (await charsInFile(handle, size));
    const { keep, keepChars } = options;
    if (keepChars <= 0 || total <= keepChars) {
      const text = (await readRange(handle, 0, size)).toString('utf8');
      return { text, kept: total, total, truncated: false };
    }
    const { headChars, tailChars } =
      keep === 'both'
        ? splitBudget(keepChars)
        : keep === 'head'
          ? { headChars: keepChars, tailChars: 0 }
          : { headChars: 0, tailChars: keepChars };
    const head = headChars > 0 ? takeHead(await readHeadText(handle, size, headChars), headChars) : '';
    const tail = tailChars > 0 ? takeTail(await readTailText(handle, size, tailChars), tailChars) : '';
    const text = keep === 'both' ? joinHeadTail(head, tail) : head + tail;
    return { text, kept: countChars(head) + countChars(tail), total, truncated: true };
  } finally {
    await handle.close();
  }
}

/** Counts the chars of a UTF-8 file by streaming it. */
export async function countFileChars(path: string): Promise<number> {
  const handle = await open(path, 'r');
  try {
    return await charsInFile(handle, (await handle.stat()).size);
  } finally {
    await handle.close();
  }
}

async function charsInFile(handle: FileHandle, size: number): Promise<number> {
  const buffer = Buffer.allocUnsafe(Math.min(COUNT_CHUNK_BYTES, Math.max(1, size)));
  let chars = 0;
  for (let position = 0; position < size; ) {
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
    if (bytesRead === 0) break;
    chars += countUtf8Chars(buffer.subarray(0, bytesRead));
    position += bytesRead;
  }
  return chars;
}

async function readHeadText(handle: FileHandle, size: number, chars: number): Promise<string> {
  const bytes = await readRange(handle, 0, Math.min(size, chars * MAX_BYTES_PER_CHAR + GRAPHEME_SLACK_BYTES));
  // A read that stops short of the end may stop inside a char: drop the last char (the slack covers it).
  const end = bytes.length < size ? utf8CutBefore(bytes, bytes.length - 1) : bytes.length;
  return bytes.subarray(0, end).toString('utf8');
}

async function readTailText(handle: FileHandle, size: number, chars: number): Promise<string> {
  const start = Math.max(0, size - (chars * MAX_BYTES_PER_CHAR + GRAPHEME_SLACK_BYTES));
  const bytes = await readRange(handle, start, size);
  return bytes.subarray(start > 0 ? utf8StartAfter(bytes, 0) : 0).toString('utf8');
}

async function readRange(handle: FileHandle, from: number, to: number): Promise<Buffer> {
  const buffer = Buffer.alloc(Math.max(0, to - from));
  let filled = 0;
  while (filled < buffer.length) {
    const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, from + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}
