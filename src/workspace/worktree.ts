import { execFileSync } from 'node:child_process';
import { readFile, realpath, rm } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { type FileChange, MAX_FILES_LISTED } from '../core/workspace-facts.js';
import { GitError, git, gitEnv, gitRaw } from './git.js';
import { committedId, parseStatus, STATUS_ARGS } from './worktree-status.js';

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
  // One process (it blocks the spawn): a given base is verified alone; with none, HEAD's commit and the
  // branch it is on come from the same call (`HEAD` printed for the branch: detached).
  const args =
    base === undefined
      ? ['rev-parse', '--show-toplevel', 'HEAD^{commit}', '--symbolic-full-name', 'HEAD', '--']
      : ['rev-parse', '--show-toplevel', '--verify', '--end-of-options', `${rev}^{commit}`];
  let out: string;
  try {
    out = execFileSync('git', ['-C', cwd, ...args], {
      env: gitEnv(),
      timeout: timeoutMs,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    const stderr = String((error as { stderr?: unknown }).stderr ?? '');
    if (/not a git repository/i.test(stderr)) throw new Error(`${cwd} is not inside a git repository`);
    throw new Error(`base "${rev}" does not name a commit in the repository at ${cwd}`);
  }
  const [repo, commit, symbolic] = out.trim().split('\n');
  if (!repo || !commit) throw new Error(`git could not resolve "${rev}" at ${cwd}`);
  const resolved: ResolvedBase = { repo, subdir: relative(repo, cwd), base: commit };
  // Detached HEAD (or a symbolic ref outside refs/heads/): conflicts are checked between members only.
  if (symbolic?.startsWith('refs/heads/') && symbolic.length > 'refs/heads/'.length)
    resolved.baseBranch = symbolic.slice('refs/heads/'.length);
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
 * the worktree can go. Hooks and signing are off: a repository's hook must not run on Crew's commit; so
 * is the automatic maintenance a commit starts (one more git process per run; the repository's own next
 * commit or fetch runs it). One `status` tells the head and whether anything was left; only then do
 * `add --all` (skipped when only tracked files changed: `commit --all` takes them) and `commit` run, and
 * the commit's own summary line names the new head.
 */
export async function commitLeftovers(path: string, runId: string, timeoutMs: number): Promise<Committed> {
  const options = { cwd: path, timeoutMs };
  const status = parseStatus(await git(STATUS_ARGS, options));
  if (status.left === 0) {
    // Internal: a worktree Crew made always has a commit (its base) checked out.
    if (status.head === undefined) throw new Error(`the worktree ${path} has no HEAD commit`);
    return { head: status.head, committedForAgent: 0 };
  }
  if (!status.trackedOnly) await git(['add', '--all'], options);
  const result = await gitRaw(
    [
      '-c',
      'core.hooksPath=/dev/null',
      '-c',
      'commit.gpgSign=false',
      '-c',
      'maintenance.auto=false',
      '-c',
      'core.abbrev=no',
      '-c',
      'diff.renames=false',
      'commit',
      ...(status.trackedOnly ? ['--all'] : []),
      '--no-verify',
      '-m',
      `crew: changes left uncommitted by run ${runId}`,
    ],
    options,
  );
  if (result.code !== 0) {
    // Only a submodule's own content changed, say: status listed it, yet there is nothing to commit.
    if (status.head !== undefined && /nothing (added )?to commit|no changes added/.test(result.stdout))
      return { head: status.head, committedForAgent: 0 };
    throw new GitError(['commit'], result);
  }
  // The summary line carries the full id (core.abbrev=no); should its form ever change, ask.
  const head = committedId(result.stdout) ?? (await git(['rev-parse', 'HEAD'], options));
  return { head, committedForAgent: status.left };
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

/**
 * Removes a worktree and its administrative files without a git process: the directory goes, then the
 * administrative directory its `.git` file names, once that directory's own `gitdir` file points back at
 * this worktree (what `git worktree remove --force --force` does, less its two processes). Anything else
 * (the worktree already gone, a layout this does not recognise) ends in `git worktree prune`.
 */
export async function removeWorktree(repo: string, path: string, timeoutMs: number): Promise<void> {
  const admin = await worktreeGitDir(path);
  const ours = admin !== undefined && (await pointsBackTo(admin, path));
  await rm(path, { recursive: true, force: true });
  if (ours) await rm(admin, { recursive: true, force: true });
  else await gitRaw(['worktree', 'prune'], { cwd: repo, timeoutMs });
}

/** The administrative directory (`<repo>/.git/worktrees/<name>`) a linked worktree's `.git` file names. */
export async function worktreeGitDir(path: string): Promise<string | undefined> {
  try {
    const found = /^gitdir: (.+)$/m.exec(await readFile(join(path, '.git'), 'utf8'))?.[1]?.trim();
    return found ? resolve(path, found) : undefined;
  } catch {
    return undefined; // No `.git` file: not a linked worktree (or gone).
  }
}

/** Whether `admin` is a worktree administrative directory whose `gitdir` names `path`'s `.git`. */
async function pointsBackTo(admin: string, path: string): Promise<boolean> {
  if (basename(dirname(admin)) !== 'worktrees') return false;
  try {
    const back = resolve(admin, (await readFile(join(admin, 'gitdir'), 'utf8')).trim());
    return back === join(path, '.git') || back === join(await realpath(path), '.git');
  } catch {
    return false;
  }
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
