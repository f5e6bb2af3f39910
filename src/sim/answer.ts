import type { SimDirectives } from './directives.js';

/**
 * What the simulator says in a turn, as the text of its `agent_message_chunk` updates. Pure and
 * deterministic, so tests can compute the expected transcript.
 */

/** The whole answer to a prompt without directives that shape the output. */
export const DEFAULT_ANSWER = 'sim: done\n';

/**
 * The turn's answer split into its chunks. `echo` answers the prompt itself; else `bytes` gives exactly
 * that many bytes of filler; else one `sim: chunk i/n` line per chunk (or {@link DEFAULT_ANSWER} for one
 * chunk). The text is cut into at most `chunks` pieces (fewer when it is shorter than that).
 */
export function composeChunks(d: Pick<SimDirectives, 'echo' | 'bytes' | 'chunks'>, prompt: string): string[] {
  if (d.echo) return splitEvenly(prompt, d.chunks);
  if (d.bytes !== undefined) return splitEvenly(filler(d.bytes), d.chunks);
  if (d.chunks <= 1) return [DEFAULT_ANSWER];
  return Array.from({ length: d.chunks }, (_, i) => `sim: chunk ${i + 1}/${d.chunks}\n`);
}

const LINE_BYTES = 64;

/** `bytes` bytes of ASCII: numbered 64-byte lines, the last one cut short. */
export function filler(bytes: number): string {
  const lines: string[] = [];
  for (let i = 0; i * LINE_BYTES < bytes; i++) {
    const head = `sim output line ${String(i + 1).padStart(6, '0')} `;
    lines.push(`${head.padEnd(LINE_BYTES - 1, '.')}\n`);
  }
  return lines.join('').slice(0, bytes);
}

/**
 * Cuts `text` into at most `parts` pieces of nearly equal length, none empty, in order. Cuts fall between
 * code points, so no piece holds half a surrogate pair.
 */
export function splitEvenly(text: string, parts: number): string[] {
  // Without surrogates a code point is one UTF-16 unit: cut the string itself. An array of code points
  // for a 34 MiB answer cost the simulator 7 s and a GB before its first chunk.
  const chars: string | string[] = SURROGATE.test(text) ? Array.from(text) : text;
  if (chars.length === 0) return [];
  const count = Math.max(1, Math.min(parts, chars.length));
  const pieces: string[] = [];
  for (let i = 0; i < count; i++) {
    const from = Math.floor((i * chars.length) / count);
    const to = Math.floor(((i + 1) * chars.length) / count);
    pieces.push(typeof chars === 'string' ? chars.slice(from, to) : chars.slice(from, to).join(''));
  }
  return pieces;
}

const SURROGATE = /[\uD800-\uDFFF]/;
