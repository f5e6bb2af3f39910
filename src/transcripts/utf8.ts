/** Byte-level UTF-8 helpers: counting chars and cutting without splitting a multi-byte character. */

/** Whether a byte continues a multi-byte character (`10xxxxxx`). */
export function isContinuationByte(byte: number): boolean {
  return (byte & 0xc0) === 0x80;
}

/** Code points in valid UTF-8 bytes: every byte that does not continue a character starts one. */
export function countUtf8Chars(bytes: Uint8Array): number {
  let count = 0;
  for (let i = 0; i < bytes.length; i++) if (!isContinuationByte(bytes[i]!)) count++;
  return count;
}

/**
 * The largest cut at or before `index` that does not split a character: if the byte at `index`
 * continues a character, the cut moves back to that character's first byte.
 */
export function utf8CutBefore(bytes: Uint8Array, index: number): number {
  if (index >= bytes.length) return bytes.length;
  let cut = Math.max(0, index);
  while (cut > 0 && isContinuationByte(bytes[cut]!)) cut--;
  return cut;
}

/** The first character start at or after `index` (skips the tail of a character cut in two). */
export function utf8StartAfter(bytes: Uint8Array, index: number): number {
  let start = Math.max(0, index);
  while (start < bytes.length && isContinuationByte(bytes[start]!)) start++;
  return start;
}
