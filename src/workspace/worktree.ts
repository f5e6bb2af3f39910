import { execFileSync } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { relative } from 'node:path';
import { type FileChange, MAX_FILES_LISTED } from '../core/workspace-facts.js';
import { git, gitEnv, gitRaw } from './git.js';

/**
 * The git operations on one run's worktree. Every one names the repository or the worktree explicitly and
 * none touches the parent's checkout: `worktree add` writes only `.git/worktrees/<name>` and the new branch
 * ref; commits happen inside the run's own worktree (its own index); removal deletes only that worktree.
 */

/** The repository facts a spawn records at admission. */
export interface ResolvedBase {
  /** The repository's top-level directory (of the worktree `cwd` is in). */
  repo: string;
  /** `cwd` relative to `repo` ('' at the top): the agent starts at the same place in its worktree. */
  subdir: string;
  /** The base commit's full id. */
  base: string;
  /** The branch checked out at `cwd` when no base was given (undefined: detached, or `base` given). */
  baseBranch?: string;
}

/**
 * Resolves the repository containing `cwd` and the base commit (`base`, else `HEAD`) at admission, in one
 * short synchronous git call: admission answers at once, and the spawn's record must carry the commit.
 * Throws an Error whose message says what is wrong (the caller makes it a refusal).
 */
export function resolveBaseSync(cwd: string, base: string | undefined, timeoutMs: number): ResolvedBase {
  const rev = base ?? 'HEAD';
  // These messages reach a user only as refusals: workspace/admission.ts makes them bad_base or
  // not_a_repository refusals.
  if (rev.startsWith('-')) throw new Error(`base "${rev}" is not a revision`);
  let out: string;
  try {
    out = execFileSync(
      'git',
      ['-C', cwd, 'rev-parse', '--show-toplevel', '--verify', '--end-of-options', `${rev}^{commit}`],
      { env: gitEnv(), timeout: timeoutMs, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    );
  } catch (error) {
    const stderr = String((error as { stderr?: unknown }).stderr ?? '');
    if (/not a git repository/i.test(stderr)) throw new Error(`${cwd} is not inside a git repository`);
    throw new Error(`base "${rev}" does not name a commit in the repository at ${cwd}`);
  }
  const [repo, commit] = out.trim().split('\n');
  if (!repo || !commit) throw new Error(`git could not resolve "${rev}" at ${cwd}`);
  const resolved: ResolvedBase = { repo, subdir: relative(repo, cwd), base: commit };
  if (base === undefined) {
    try {
      const branch = execFileSync('git', ['-C', cwd, 'symbolic-ref', '--quiet', '--short', 'HEAD'], {
        env: gitEnv(),
        timeout: timeoutMs,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim();
      if (branch !== '') resolved.baseBranch = branch;
    } catch {
      // Detached HEAD: conflicts are checked between members only.
    }
  }
  return resolved;
}

/** Adds the worktree `path` on a new branch `branch` at `base`. */
export async function addWorktree(
  repo: string,
  path: string,
  branch: string,
  base: string,
  timeoutMs: number,
): Promise<void> {
  await git(['worktree', 'add', '--quiet', '-b', branch, '--', path, base], { cwd: repo, timeoutMs });
}

/** What a finished worktree holds: its head, and whether Crew committed what the agent left. */
export interface Committed {
  head: string;
  /** Files in Crew's commit of the agent's leftovers (0: nothing was left). */
  committedForAgent: number;
}

/**
 * Commits whatever the agent left uncommitted in its worktree (tracked and untracked, ignored files
 * excepted) on its branch, with a message naming the run, so the branch alone carries the run's work and
 * the worktree can go. Hooks and signing are off: a repository's hook must not run on Crew's commit.
 */
export async function commitLeftovers(path: string, runId: string, timeoutMs: number): Promise<Committed> {
  const options = { cwd: path, timeoutMs };
  await git(['add', '--all'], options);
  const staged = await git(['diff', '--cached', '--name-only', '-z'], options);
  const files = staged.split('\0').filter((f) => f !== '').length;
  if (files > 0) {
    await git(
      [
        '-c',
        'core.hooksPath=/dev/null',
        '-c',
        'commit.gpgSign=false',
        'commit',
        '--quiet',
        '--no-verify',
        '-m',
        `crew: changes left uncommitted by run ${runId}`,
      ],
      options,
    );
  }
  return { head: await git(['rev-parse', 'HEAD'], options), committedForAgent: files };
}

/** Files changed between two commits with their line counts (`git diff --numstat`). */
export async function changedFiles(
  repo: string,
  from: string,
  to: string,
  timeoutMs: number,
): Promise<{ files: FileChange[]; total: number; insertions: number; deletions: number }> {
  const out = await git(['diff', '--numstat', '-z', '--no-renames', from, to, '--'], {
    cwd: repo,
    timeoutMs,
  });
  const files: FileChange[] = [];
  let total = 0;
  let insertions = 0;
  let deletions = 0;
  // -z: "<ins>\t<del>\t<path>\0" per file.
  for (const entry of out.split('\0')) {
    if (entry === '') continue;
    const [ins, del, ...rest] = entry.split('\t');
    const added = ins === '-' ? 0 : Number(ins);
    const removed = del === '-' ? 0 : Number(del);
    total++;
    insertions += added;
    deletions += removed;
    if (files.length < MAX_FILES_LISTED)
      files.push({ path: rest.join('\t'), insertions: added, deletions: removed });
  }
  return { files, total, insertions, deletions };
}

/** Removes a worktree and its administrative files; a worktree already gone is pruned instead. */
export async function removeWorktree(repo: string, path: string, timeoutMs: number): Promise<void> {
  const removed = await gitRaw(['worktree', 'remove', '--force', '--force', '--', path], {
    cwd: repo,
    timeoutMs,
  });
  if (removed.code !== 0) await rm(path, { recursive: true, force: true });
  await gitRaw(['worktree', 'prune'], { cwd: repo, timeoutMs });
}

/** Deletes a branch Crew made (its ref only; the commits go with git's own garbage collection). */
export async function deleteBranch(repo: string, branch: string, timeoutMs: number): Promise<void> {
  await gitRaw(['update-ref', '-d', `refs/heads/${branch}`], { cwd: repo, timeoutMs });
}

/** The commit a branch points at, or undefined when it does not exist. */
export async function branchTip(
  repo: string,
  branch: string,
  timeoutMs: number,
): Promise<string | undefined> {
  const result = await gitRaw(['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`], {
    cwd: repo,
    timeoutMs,
  });
  return result.code === 0 ? result.stdout.trim() : undefined;
}

/** Whether `ancestor` is an ancestor of (or equal to) `commit`. */
export async function isAncestor(
  repo: string,
  ancestor: string,
  commit: string,
  timeoutMs: number,
): Promise<boolean> {
  const result = await gitRaw(['merge-base', '--is-ancestor', ancestor, commit], { cwd: repo, timeoutMs });
  return result.code === 0;
}
