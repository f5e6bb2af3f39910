import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

/** Longest part of one context file put into a prompt. */
export const CONTEXT_FILE_MAX_BYTES = 256 * 1024;

/**
 * One context file, read with a bound: `ok` (perhaps cut), `missing` (no such file), or `unreadable`
 * (anything else: a directory, no permission). Reading never throws, so a bad file cannot fail a run.
 */
export type ContextFile =
  /** Cut when `keptBytes < totalBytes`. */
  | { kind: 'ok'; path: string; text: string; totalBytes: number; keptBytes: number }
  | { kind: 'missing'; path: string }
  | { kind: 'unreadable'; path: string; reason: string };

/**
 * Reads at most `maxBytes` of `path`, cut on a character boundary. Synchronous: the gateway builds a
 * prompt in the step that starts a run, and a few bounded local reads cost less than the asynchronous
 * gap (a cancel arriving mid-build) would.
 * @default maxBytes 256 KiB
 */
export function readContextFile(path: string, maxBytes = CONTEXT_FILE_MAX_BYTES): ContextFile {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { kind: 'unreadable', path, reason: 'not a regular file' };
    // Only the kept part is read: a huge file costs no more than the bound.
    const buffer = Buffer.alloc(Math.min(stat.size, maxBytes));
    const bytesRead = readSync(fd, buffer, 0, buffer.length, 0);
    // A cut can fall inside a multi-byte character; the decoder holds back its partial bytes.
    const text = new StringDecoder('utf8').write(buffer.subarray(0, bytesRead));
    return { kind: 'ok', path, text, totalBytes: stat.size, keptBytes: bytesRead };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'missing', path };
    return { kind: 'unreadable', path, reason: (error as Error).message };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
