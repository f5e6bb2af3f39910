/**
 * The security event log on disk: `$CREW_HOME/security_events.jsonl`, mode 0600, one redacted JSON
 * record per line, rotated at 10 MB to `security_events.jsonl.1` … `.5` (the oldest dropped).
 *
 * Each record is appended synchronously before `write` returns, so the log is in order and complete up to
 * the last decision even if the process dies next; SEL events are few (one per admission decision), so
 * that costs nothing that matters. A failing write never throws into the caller: the first failure
 * after a success is reported once to `onError`, the event is dropped, and the next write tries again.
 */
import {
  closeSync,
  existsSync,
  fchmodSync,
  fstatSync,
  mkdirSync,
  openSync,
  renameSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import type { Clock } from '../core/clock.js';
import { type SelEvent, toSelRecord } from './sel-event.js';
import type { SelSink } from './sel-sink.js';

export const SEL_FILE_NAME = 'security_events.jsonl';
export const SEL_FILE_MODE = 0o600;

export interface SelWriterOptions {
  /** The log file, usually {@link selPath}. */
  path: string;
  /** Stamps `ts`. */
  clock: Clock;
  /** Rotate before a line would take the file past this. @default 10485760 (10 MiB) */
  maxBytes?: number;
  /** Rotated files kept (`.1` newest … `.N` oldest). @default 5 */
  keepFiles?: number;
  /** Told about a failed write, once per run of failures (the default writes one line to stderr). */
  onError?: (error: unknown) => void;
}

/** `$CREW_HOME/security_events.jsonl`. */
export function selPath(crewHome: string): string {
  return join(crewHome, SEL_FILE_NAME);
}

export class SelWriter implements SelSink {
  private fd: number | undefined;
  private sizeBytes = 0;
  private closed = false;
  private failing = false;
  private readonly path: string;
  private readonly clock: Clock;
  private readonly maxBytes: number;
  private readonly keepFiles: number;
  private readonly onError: (error: unknown) => void;

  constructor(options: SelWriterOptions) {
    this.path = options.path;
    this.clock = options.clock;
    this.maxBytes = options.maxBytes ?? 10 * 1024 * 1024;
    this.keepFiles = Math.max(0, Math.floor(options.keepFiles ?? 5));
    this.onError =
      options.onError ??
      ((error) => process.stderr.write(`crew: security event log write failed: ${describe(error)}\n`));
  }

  write(event: SelEvent): void {
    if (this.closed) return;
    try {
      const line = Buffer.from(`${JSON.stringify(toSelRecord(event, this.clock.now()))}\n`, 'utf8');
      if (this.fd === undefined) this.openFile();
      if (this.sizeBytes > 0 && this.sizeBytes + line.length > this.maxBytes) this.rotate();
      let offset = 0;
      while (offset < line.length) offset += writeSync(this.fd!, line, offset, line.length - offset);
      this.sizeBytes += line.length;
      this.failing = false;
    } catch (error) {
      this.closeFile(); // reopen on the next write: the file may have been moved or the disk freed
      this.report(error);
    }
  }

  /** Every write is already on disk; kept for callers that treat sinks alike. */
  async flush(): Promise<void> {}

  async close(): Promise<void> {
    this.closed = true;
    this.closeFile();
  }

  private openFile(): void {
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    const fd = openSync(this.path, 'a', SEL_FILE_MODE);
    this.fd = fd;
    fchmodSync(fd, SEL_FILE_MODE);
    this.sizeBytes = fstatSync(fd).size;
  }

  /** `.4`→`.5`, …, `.1`→`.2`, the live file → `.1`; a fresh live file. */
  private rotate(): void {
    this.closeFile();
    if (this.keepFiles === 0) {
      this.fd = openSync(this.path, 'w', SEL_FILE_MODE);
      this.sizeBytes = 0;
      return;
    }
    for (let i = this.keepFiles - 1; i >= 1; i--) {
      const from = `${this.path}.${i}`;
      if (existsSync(from)) renameSync(from, `${this.path}.${i + 1}`);
    }
    renameSync(this.path, `${this.path}.1`);
    this.openFile();
  }

  private closeFile(): void {
    if (this.fd === undefined) return;
    const fd = this.fd;
    this.fd = undefined;
    try {
      closeSync(fd);
    } catch {
      // Already gone; nothing to release.
    }
  }

  private report(error: unknown): void {
    if (this.failing) return;
    this.failing = true;
    try {
      this.onError(error);
    } catch {
      // The reporter failing must not reach the caller either.
    }
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
