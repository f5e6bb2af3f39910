/**
 * The order test files start in. Within a tier group (vitest's `sequence.groupOrder`) every file shares
 * one pool of workers, which takes files in the order given; a long file started last keeps the run
 * going alone at the end. Starting the longest first (LPT scheduling) leaves only short files for the
 * tail. A file's weight is its last duration on this machine when vitest's cache has one, else the
 * table measured on CI (a fresh clone has no cache), else zero; ties go by path, so the order is the
 * same whatever order the files came in.
 */

export interface ScheduledFile {
  /** The path from the repository root, as in the tier lists. */
  file: string;
  /** The tier group; an earlier group runs entirely before a later one. */
  group: number;
  /** This machine's last duration of the file, when vitest's results cache has one. */
  lastMs?: number | undefined;
}

export function longestFirst<T extends ScheduledFile>(
  files: readonly T[],
  expectedSeconds: ReadonlyMap<string, number>,
): T[] {
  const weight = (f: ScheduledFile) => f.lastMs ?? (expectedSeconds.get(f.file) ?? 0) * 1000;
  return [...files].sort(
    (a, b) => a.group - b.group || weight(b) - weight(a) || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0),
  );
}
