/**
 * What Crew records about a run's isolated workspace (issue 31): where it was made from, where it lives,
 * and what the agent changed. Stored on the run (`RunRecord.workspace`), shown by `spawn_status`, the
 * completion event and the digest.
 */

/** One file the run changed against its base: lines added and removed (binary files count 0 and 0). */
export interface FileChange {
  path: string;
  insertions: number;
  deletions: number;
}

/** Two changes that do not merge: the other member's run id (or `base` for the base branch's tip) and the files. */
export interface WorkspaceConflict {
  with: string;
  files: string[];
}

export interface WorkspaceFacts {
  /** The top-level directory of the repository that contained the run's `cwd`. */
  repo: string;
  /** The branch the run's work is on: `crew/<run id>` (a continuation: its conversation's). */
  branch: string;
  /** The commit the worktree was made from (recorded at admission). */
  base: string;
  /** The branch the parent had checked out at admission (`main`), whose tip conflicts are checked against. */
  baseBranch?: string;
  /** The worktree while it exists (removed when the run ends, or for a kept conversation when released). */
  path?: string;
  /** The run ran under bubblewrap. */
  sandbox?: boolean;
  /** The branch's commit when the run ended. */
  head?: string;
  /** Files changed from `base` to `head`, at most {@link MAX_FILES_LISTED}. */
  files?: FileChange[];
  /** All files changed (also those beyond the list). */
  filesChanged?: number;
  insertions?: number;
  deletions?: number;
  /**
   * Crew committed what the agent left uncommitted (a commit on the branch naming the run); the number of
   * files in that commit. 0 = the agent left nothing uncommitted.
   */
  committedForAgent?: number;
  /** Changes that do not merge with the base branch's tip or with other members of its wave. */
  conflicts?: WorkspaceConflict[];
  /** Merged by `spawn_merge` into this branch. */
  mergedInto?: string;
}

/** Files listed per run; the counts cover all. */
export const MAX_FILES_LISTED = 200;
/** Conflicting files named per pair. */
export const MAX_CONFLICT_FILES = 50;
