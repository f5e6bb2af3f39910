import { appendFileSync, closeSync, openSync, readSync, renameSync, statSync } from 'node:fs';
import type { DeliveredEvent, Sink } from '../gateway/sink.js';

export interface EventsLogOptions {
  /** Rotate past this size. @default 10 MiB */
  maxBytes?: number;
  /** Rotated files kept (`events.log.1` …). @default 3 */
  keepFiles?: number;
  /** Event ids remembered for deduplication. @default 10000 */
  rememberIds?: number;
}

/** How much of the log's end a start reads back to learn which events it already holds. */
const SCAN_BYTES = 1024 * 1024;
const ENTRY_HEAD = /^\[event ([A-Za-z0-9_-]+)\]$/gm;

/**
 * `$CREW_HOME/events.log`: where the events of `crew spawn` without `--wait` go (nobody waits for them).
 * Idempotent by event id, as the Sink contract asks, across restarts too: each entry starts with an
 * `[event <id>]` line, and a new sink reads the log's end back to learn the ids it already wrote, so an
 * event delivered just before a crash (and so never settled) is not written twice. Rotated by size.
 */
export class EventsLogSink implements Sink {
  private readonly seen = new Set<string>();
  private readonly maxBytes: number;
  private readonly keepFiles: number;
  private readonly rememberIds: number;

  constructor(
    private readonly path: string,
    options: EventsLogOptions = {},
  ) {
    this.maxBytes = options.maxBytes ?? 10 * 1024 * 1024;
    this.keepFiles = options.keepFiles ?? 3;
    this.rememberIds = options.rememberIds ?? 10_000;
    // The previous file first, so the newest ids are remembered last (and evicted last).
    for (const file of [`${path}.1`, path]) for (const id of idsAtEnd(file)) this.remember(id);
  }

  async deliver(event: DeliveredEvent): Promise<void> {
    if (this.seen.has(event.id)) return;
    // A line of the text that looks like an entry head (agent output can say anything) is indented, so
    // reading the log back never mistakes it for one.
    const text = event.text.replace(ENTRY_HEAD, (line) => ` ${line}`);
    const entry = `[event ${event.id}]\n${text}\n\n`;
    this.rotateFor(Buffer.byteLength(entry));
    // One write per entry: the id line and the text land together or not at all.
    appendFileSync(this.path, entry, { mode: 0o600 });
    this.remember(event.id);
  }

  private remember(id: string): void {
    this.seen.delete(id);
    this.seen.add(id);
    if (this.seen.size > this.rememberIds) {
      const oldest = this.seen.values().next().value;
      if (oldest !== undefined) this.seen.delete(oldest);
    }
  }

  private rotateFor(entryBytes: number): void {
    const size = sizeOf(this.path);
    if (size === 0 || size + entryBytes <= this.maxBytes) return;
    for (let i = this.keepFiles - 1; i >= 1; i--)
      renameIfExists(`${this.path}.${i}`, `${this.path}.${i + 1}`);
    renameIfExists(this.path, `${this.path}.1`);
  }
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

function renameIfExists(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

/** Event ids whose entries start within the last {@link SCAN_BYTES} of `path`, oldest first. */
function idsAtEnd(path: string): string[] {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return [];
  }
  try {
    const size = statSync(path).size;
    const length = Math.min(size, SCAN_BYTES);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    return [...buffer.toString('utf8').matchAll(ENTRY_HEAD)].map((m) => m[1] as string);
  } finally {
    closeSync(fd);
  }
}
