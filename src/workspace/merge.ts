import { CrewError, type Refusal } from '../core/errors.js';
import { isTerminal } from '../core/types.js';
import type { RunInfoUpdate, RunRecord } from '../store/store.js';
import { mergeTree } from './conflicts.js';
import { git, gitRaw } from './git.js';
import type { MergeArgs } from './merge-args.js';
import * as refusals from './workspace-refusals.js';
import { branchTip, isAncestor } from './worktree.js';

export interface MergeRefused {
  id: string;
  refusal: Refusal & { files?: string[] };
}

export type MergeResult =
  | {
      ok: true;
      target: string;
      /** The target's commit after the merge (unchanged when nothing merged). */
      head: string;
      /** Runs merged, in order. */
      merged: string[];
      /** Runs with no changes: nothing to merge. */
      unchanged: string[];
      /** Wave members not merged, each with its refusal (`merge_conflict` names the files). */
      refused: MergeRefused[];
    }
  | { ok: false; refusal: Refusal & { files?: string[] } };

export interface MergeDeps {
  timeoutMs: number;
  /** Records each merged run's `mergedInto` (one store transaction). */
  record: (updates: RunInfoUpdate[]) => void;
  /** Tells the workspace registry a run's branch is merged (its branch may go with its transcript). */
  merged: (runId: string) => Promise<void>;
}

/**
 * Merges runs' branches into `target` without any checkout: each merge is computed in memory
 * (`git merge-tree --write-tree`), committed with `git commit-tree`, and the target moved once at the end
 * with `git update-ref <new> <old>`, which fails if anyone moved it meanwhile. A wave's members go in
 * admission order; members the digest found conflicting (with each other or the base branch) are
 * refused without trying, so the ones that merge do not depend on who ended first. A branch checked out
 * in any worktree is refused (Crew never changes files under someone's feet).
 */
export async function mergeRuns(
  records: RunRecord[],
  args: MergeArgs,
  deps: MergeDeps,
): Promise<MergeResult> {
  const single = args.agent_id !== undefined;
  const ordered = [...records].sort((a, b) => a.run.seq - b.run.seq || a.run.createdAt - b.run.createdAt);
  for (const record of ordered) {
    if (!record.workspace) throw new CrewError(refusals.notIsolated(record.run.id));
    if (!isTerminal(record.run.status) || record.workspace.head === undefined)
      throw new CrewError(refusals.notEnded(record.run.id, record.run.status));
  }
  const first = ordered[0];
  if (!first?.workspace) throw new CrewError(refusals.notIsolated(args.agent_id ?? args.batch_id ?? '?'));
  const repo = first.workspace.repo;
  const target = args.target;
  const timeoutMs = deps.timeoutMs;
  const checked = await gitRaw(['check-ref-format', '--branch', target], { cwd: repo, timeoutMs });
  if (checked.code !== 0 || target.startsWith('-'))
    throw new CrewError({
      code: 'invalid_argument',
      message: `target "${target}" is not a valid branch name`,
      path: 'target',
    });
  const where = await checkedOutAt(repo, target, timeoutMs);
  if (where !== undefined) throw new CrewError(refusals.targetCheckedOut(target, where));
  const old = await branchTip(repo, target, timeoutMs);
  // A new target starts at the base the runs were made from.
  let current = old ?? first.workspace.base;
  if (old !== undefined && !(await isAncestor(repo, first.workspace.base, old, timeoutMs)))
    throw new CrewError(
      refusals.targetMoved(
        target,
        `no longer contains the base the runs started from (${first.workspace.base.slice(0, 12)}): it was rewritten`,
      ),
    );
  const merged: string[] = [];
  const unchanged: string[] = [];
  const refused: MergeRefused[] = [];
  for (const record of ordered) {
    const ws = record.workspace as NonNullable<RunRecord['workspace']>;
    const id = record.run.id;
    if (ws.filesChanged === 0 || ws.head === ws.base) {
      unchanged.push(id);
      continue;
    }
    const known = single ? undefined : ws.conflicts?.[0];
    const flagged = single ? undefined : flaggedBy(id, ordered);
    if (known || flagged) {
      const files = known?.files ?? flagged ?? [];
      refused.push({ id, refusal: { ...refusals.mergeConflict(id, files, target), files } });
      continue;
    }
    const head = ws.head as string;
    if (await isAncestor(repo, current, head, timeoutMs)) {
      current = head;
      merged.push(id);
      continue;
    }
    const outcome = await mergeTree(repo, current, head, timeoutMs);
    if (!outcome.clean) {
      refused.push({
        id,
        refusal: { ...refusals.mergeConflict(id, outcome.files, target), files: outcome.files },
      });
      continue;
    }
    current = await git(
      [
        'commit-tree',
        outcome.tree,
        '-p',
        current,
        '-p',
        head,
        '-m',
        `crew: merge run ${id} (${ws.branch}) into ${target}`,
      ],
      { cwd: repo, timeoutMs },
    );
    merged.push(id);
  }
  if (single && refused[0]) return { ok: false, refusal: refused[0].refusal };
  if (merged.length > 0) {
    const zero = '0'.repeat(current.length);
    const moved = await gitRaw(
      ['update-ref', '-m', `crew: spawn_merge into ${target}`, `refs/heads/${target}`, current, old ?? zero],
      { cwd: repo, timeoutMs },
    );
    if (moved.code !== 0)
      throw new CrewError(
        refusals.targetMoved(target, 'moved while the merge was computed (nothing was changed)'),
      );
    deps.record(
      merged.map((id) => ({
        id,
        workspace: { ...(byId(ordered, id).workspace as object), mergedInto: target } as never,
      })),
    );
    // The registry knows a branch by the run that made it (a continuation works on its conversation's).
    for (const id of merged) await deps.merged(branchOwner(byId(ordered, id)));
  }
  return { ok: true, target, head: current, merged, unchanged, refused };
}

/** Files another member's recorded conflict names with this one (each pair is recorded on one side). */
function flaggedBy(id: string, records: readonly RunRecord[]): string[] | undefined {
  for (const other of records) {
    const hit = other.workspace?.conflicts?.find((c) => c.with === id);
    if (hit) return hit.files;
  }
  return undefined;
}

function branchOwner(record: RunRecord): string {
  const branch = record.workspace?.branch ?? '';
  return branch.startsWith('crew/') ? branch.slice('crew/'.length) : record.run.id;
}

function byId(records: readonly RunRecord[], id: string): RunRecord {
  return records.find((r) => r.run.id === id) as RunRecord;
}

/** Where `branch` is checked out (any worktree of the repository), or undefined. */
async function checkedOutAt(repo: string, branch: string, timeoutMs: number): Promise<string | undefined> {
  const list = await git(['worktree', 'list', '--porcelain'], { cwd: repo, timeoutMs });
  let path: string | undefined;
  for (const line of list.split('\n')) {
    if (line.startsWith('worktree ')) path = line.slice('worktree '.length);
    else if (line === `branch refs/heads/${branch}`) return path;
  }
  return undefined;
}
