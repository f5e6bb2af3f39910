/**
 * A result as Slack messages (the seed: "long results are split into multiple Slack messages, 3900 chars
 * per chunk"; issue 28): in order, each within {@link CHUNK_MAX_CHARS} chars and `chat.update`'s
 * {@link UPDATE_MAX_BYTES} once escaped, cut after the last line end that fits (mid-line only when one
 * line is longer than a message), and never inside a code fence left open: a message that ends inside
 * a ``` block closes it, and the next reopens it with the same opening line (its language kept). Removing
 * the added closing and reopening lines gives the text back exactly.
 */
import { CHUNK_MAX_CHARS, hardCutAt, UPDATE_MAX_BYTES } from './slack-chunks.js';

/** What closes a fence a message ends inside; its length is kept free in every message. */
export const FENCE_CLOSE = '\n```';

/** One message of a split result: the reopening fence line, the text's own slice, the closing fence. */
export interface ResultPart {
  reopen: string;
  body: string;
  close: string;
}

/** Splits `text` into Slack messages; `''` gives one empty message. */
export function splitResult(text: string, limits?: { maxChars: number; maxBytes: number }): string[] {
  return splitResultParts(text, limits).map((p) => `${p.reopen}${p.body}${p.close}`);
}

/** {@link splitResult} with each message's added lines apart: the bodies concatenate to `text`. */
export function splitResultParts(
  text: string,
  limits: { maxChars: number; maxBytes: number } = { maxChars: CHUNK_MAX_CHARS, maxBytes: UPDATE_MAX_BYTES },
): ResultPart[] {
  if (text === '') return [{ reopen: '', body: '', close: '' }];
  const parts: ResultPart[] = [];
  let start = 0;
  let openFence: string | undefined;
  while (start < text.length) {
    const reopen = openFence === undefined ? '' : `${openFence}\n`;
    // The added lines are ASCII: as many bytes as chars.
    const cut = (spare: number) =>
      lineCut(text, start, Math.max(1, limits.maxChars - spare), Math.max(1, limits.maxBytes - spare));
    let end = cut(reopen.length);
    let fenceAfter = fenceStateAfter(text.slice(start, end), openFence);
    if (fenceAfter !== undefined && end < text.length) {
      // It ends inside a fence: cut again with room for the closing line.
      end = cut(reopen.length + FENCE_CLOSE.length);
      fenceAfter = fenceStateAfter(text.slice(start, end), openFence);
    }
    const close = fenceAfter !== undefined && end < text.length ? FENCE_CLOSE : '';
    parts.push({ reopen, body: text.slice(start, end), close });
    openFence = fenceAfter;
    start = end;
  }
  return parts;
}

/** The longest cut within the limits, moved back to just after the last line end in it if there is one. */
function lineCut(text: string, start: number, maxChars: number, maxBytes: number): number {
  const end = hardCutAt(text, start, maxChars, maxBytes);
  if (end >= text.length) return text.length;
  const newline = text.lastIndexOf('\n', end - 1);
  return newline >= start ? newline + 1 : end;
}

/** The fence still open after `piece` (its opening line), given the one open before it. */
function fenceStateAfter(piece: string, openBefore: string | undefined): string | undefined {
  let open = openBefore;
  let from = 0;
  while (from < piece.length) {
    const newline = piece.indexOf('\n', from);
    const lineEnd = newline < 0 ? piece.length : newline;
    const line = piece.slice(from, lineEnd);
    // Only a whole line counts: the piece's last line may be cut mid-way, but a fence line is short.
    if (line.trimStart().startsWith('```')) open = open === undefined ? openerOf(line) : undefined;
    from = lineEnd + 1;
  }
  return open;
}

/** A fence's opening as reopened: the backticks and a short language tag, so it costs a few chars. */
function openerOf(line: string): string {
  return /^```[^\s`]{0,20}/.exec(line.trimStart())?.[0] ?? '```';
}
