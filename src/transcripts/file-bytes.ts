/**
 * Transcripts' bytes in files: `$CREW_HOME/subagents/<id>/result.txt`, the file 0600 in a directory 0700
 * (DESIGN §6 Files, §7). Writes are synchronous, a writer's buffer at a time; reads go through a file
 * handle at positions, so nothing loads a whole file.
 */
import { chmodSync, closeSync, fchmodSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { CrewError, refuse } from '../core/errors.js';
import type { ByteSink, ByteSource, TranscriptBytes } from './transcript-bytes.js';
import { transcriptPath } from './transcript-path.js';

export const TRANSCRIPT_FILE_MODE = 0o600;
export const TRANSCRIPT_DIR_MODE = 0o700;

export class FileTranscriptBytes implements TranscriptBytes {
  /** Chars per transcript closed since this process started (a file's chars are not on disk). */
  private readonly closedChars = new Map<string, number>();

  constructor(private readonly crewHome: string) {}

  create(runId: string): ByteSink {
    this.closedChars.delete(runId);
    const file = openFileSink(this.pathOf(runId));
    return {
      write: (bytes) => file.write(bytes),
      close: (chars) => {
        file.close(chars);
        this.closedChars.set(runId, chars);
      },
    };
  }

  keptChars(runId: string): number | undefined {
    return this.closedChars.get(runId);
  }

  async forget(runId: string): Promise<void> {
    // Emptied, not removed: the transcript a run wrote before is truncated as a fresh one would be.
    if (this.closedChars.has(runId)) this.create(runId).close(0);
  }

  source(runId: string): ByteSource {
    return fileSource(this.pathOf(runId));
  }

  async remove(runId: string): Promise<void> {
    this.closedChars.delete(runId);
    await rm(dirname(this.pathOf(runId)), { recursive: true, force: true });
  }

  pathOf(runId: string): string {
    return transcriptPath(this.crewHome, runId);
  }
}

/**
 * Creates (or empties) the file at `path`, its directory 0700 and the file 0600. Throws when the file
 * cannot be created: the caller decides whether the run can start without one.
 */
export function openFileSink(path: string): ByteSink {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: TRANSCRIPT_DIR_MODE });
  chmodSync(dir, TRANSCRIPT_DIR_MODE);
  const fd = openSync(path, 'w', TRANSCRIPT_FILE_MODE);
  try {
    fchmodSync(fd, TRANSCRIPT_FILE_MODE); // the file may have existed with a wider mode
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return {
    write(bytes) {
      let offset = 0;
      try {
        while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
      } catch (error) {
        // What reached the file before the failure (ENOSPC mid-buffer): the writer counts only the rest lost.
        (error as { writtenBytes?: number }).writtenBytes = offset;
        throw error;
      }
    },
    close: () => closeSync(fd),
  };
}

/** The file at `path`; opening a missing one refuses `not_found` (never written, or pruned). */
export function fileSource(path: string): ByteSource {
  return {
    async open() {
      let handle: Awaited<ReturnType<typeof open>>;
      try {
        handle = await open(path, 'r');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
          throw new CrewError(
            refuse('not_found', `No transcript at ${path}: it was never written or has been pruned`),
          );
        }
        throw error;
      }
      return {
        size: async () => (await handle.stat()).size,
        read: async (buffer, offset, length, position) =>
          (await handle.read(buffer, offset, length, position)).bytesRead,
        close: () => handle.close(),
      };
    },
  };
}
