/**
 * Splitting a result for Slack so that no limit is crossed and nothing is lost: every chunk is at most
 * {@link CHUNK_MAX_CHARS} characters, its escaped form (the message's `text`, which `chat.update` carries
 * too) at most {@link UPDATE_MAX_BYTES} bytes of UTF-8, and it is shown as section blocks of at most
 * {@link SECTION_MAX_CHARS} characters each. Chunks concatenate back to the text exactly; a surrogate
 * pair is never cut, and a cut prefers a line end near the limit.
 */

/** @default 3900 (the source system's chunk size) */
export const CHUNK_MAX_CHARS = 3900;
/** A section block's text limit. */
export const SECTION_MAX_CHARS = 3000;
/** `chat.update`'s text limit, in bytes. */
export const UPDATE_MAX_BYTES = 4000;

export interface ChunkLimits {
  maxChars: number;
  maxBytes: number;
}

const DEFAULT_LIMITS: ChunkLimits = { maxChars: CHUNK_MAX_CHARS, maxBytes: UPDATE_MAX_BYTES };

/** Slack's required escapes for message text (`&`, `<`, `>`). */
export function escapeSlackText(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

export function unescapeSlackText(text: string): string {
  return text.replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&');
}

/** UTF-8 bytes of one UTF-16 code unit sequence element once escaped. */
function escapedBytes(code: number): number {
  if (code === 0x26) return 5; // &amp;
  if (code === 0x3c || code === 0x3e) return 4; // &lt; &gt;
  if (code < 0x80) return 1;
  if (code < 0x800) return 2;
  if (code >= 0xd800 && code <= 0xdbff) return 4; // a high surrogate: the pair is 4 bytes
  if (code >= 0xdc00 && code <= 0xdfff) return 0; // counted with its high surrogate
  return 3;
}

/** Splits `text` into chunks within `limits`; `''` gives one empty chunk. */
export function chunkText(text: string, limits: ChunkLimits = DEFAULT_LIMITS): string[] {
  if (text === '') return [''];
  const chunks: string[] = [];
  let start = 0;
  while (start < text.length) {
    const end = cutAt(text, start, limits.maxChars, limits.maxBytes);
    chunks.push(text.slice(start, end));
    start = end;
  }
  return chunks;
}

/** Sections of a chunk (each within {@link SECTION_MAX_CHARS}), in order. */
export function sectionsOf(chunk: string, maxChars = SECTION_MAX_CHARS): string[] {
  return chunkText(chunk, { maxChars, maxBytes: Number.MAX_SAFE_INTEGER });
}

/** The end of the longest slice from `start` within both limits, moved back to a line end when one is near. */
function cutAt(text: string, start: number, maxChars: number, maxBytes: number): number {
  const end = hardCutAt(text, start, maxChars, maxBytes);
  if (end >= text.length) return text.length;
  // Prefer ending after a newline in the last fifth of the window.
  const newline = text.lastIndexOf('\n', end - 1);
  if (newline >= start && newline + 1 - start >= Math.floor((end - start) * 0.8)) return newline + 1;
  return end;
}

/**
 * The end of the longest slice from `start` with at most `maxChars` UTF-16 units and `maxBytes` bytes
 * once escaped, never between a surrogate pair; at least one char, so a caller always makes progress.
 */
export function hardCutAt(text: string, start: number, maxChars: number, maxBytes: number): number {
  let end = start;
  let bytes = 0;
  while (end < text.length && end - start < maxChars) {
    const code = text.charCodeAt(end);
    const isPair = code >= 0xd800 && code <= 0xdbff && end + 1 < text.length;
    const width = isPair ? 2 : 1;
    if (end - start + width > maxChars) break;
    const add = escapedBytes(code);
    if (bytes + add > maxBytes) break;
    bytes += add;
    end += width;
  }
  if (end === start) end = start + 1; // limits below one character: still make progress
  return Math.min(end, text.length);
}
