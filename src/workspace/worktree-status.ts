/**
 * What one `git status --porcelain=v2 --branch -z --untracked-files=all` says about a finished run's
 * worktree: its head commit (the `# branch.oid` header) and what the agent left uncommitted. One git
 * process answers both, where `add --all` + `diff --cached` + `rev-parse HEAD` took three (bench/workspace).
 */
export interface WorktreeStatus {
  /** The worktree's HEAD commit; undefined on an unborn branch. */
  head?: string;
  /** Paths left uncommitted (changed, staged, unmerged or untracked; a rename counts once). */
  left: number;
  /** Only changes to tracked files, none unmerged: `commit --all` commits them without an `add`. */
  trackedOnly: boolean;
}

export const STATUS_ARGS = ['status', '--porcelain=v2', '--branch', '-z', '--untracked-files=all'] as const;

export function parseStatus(out: string): WorktreeStatus {
  const status: WorktreeStatus = { left: 0, trackedOnly: true };
  const fields = out.split('\0');
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i] as string;
    if (field.startsWith('# branch.oid ')) {
      const oid = field.slice('# branch.oid '.length);
      if (/^[0-9a-f]{40,64}$/.test(oid)) status.head = oid;
    } else if (field.startsWith('1 ')) {
      status.left++;
    } else if (field.startsWith('2 ')) {
      // A rename or copy: its original path follows in the next field.
      status.left++;
      i++;
    } else if (field.startsWith('u ') || field.startsWith('? ')) {
      status.left++;
      status.trackedOnly = false;
    }
  }
  return status;
}

/** The full commit id in `git -c core.abbrev=no commit`'s summary line (`[branch (root-commit) <id>] …`). */
export function committedId(out: string): string | undefined {
  return /^\[[^\]\n]* ([0-9a-f]{40,64})\]/m.exec(out)?.[1];
}
