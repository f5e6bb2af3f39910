import type { RunSpec } from '../core/types.js';

/**
 * What a launched run asks of its workspace, built from its spec at launch: a worktree of `repo` at `base`,
 * a sandbox, or both. Absent on a request = the run works in its `cwd` as before.
 */
export interface WorkspacePlan {
  worktree: boolean;
  sandbox: boolean;
  /** With a worktree: the repository, the place of `cwd` in it and the base commit, all recorded at admission. */
  repo?: string;
  subdir?: string;
  base?: string;
  baseBranch?: string;
  /** The wave it belongs to: its changes are checked against the other members' as each ends. */
  batchId?: string;
  /** A kept conversation's run: its worktree stays for the next turn until the conversation is released. */
  keep: boolean;
  /** A continuation: the conversation (its first run's id) whose worktree it works in. */
  conversationId?: string;
}

/** The plan of a run with this spec; undefined when it asks for neither a worktree nor a sandbox. */
export function planOf(
  spec: RunSpec,
  batchId: string | undefined,
  conversationId: string | undefined,
): WorkspacePlan | undefined {
  const worktree = spec.isolation === 'worktree';
  const sandbox = spec.sandbox === true;
  if (!worktree && !sandbox) return undefined;
  const plan: WorkspacePlan = { worktree, sandbox, keep: spec.keep === true || conversationId !== undefined };
  if (spec.workspaceBase) {
    plan.repo = spec.workspaceBase.repo;
    plan.subdir = spec.workspaceBase.subdir;
    plan.base = spec.workspaceBase.base;
    if (spec.workspaceBase.baseBranch !== undefined) plan.baseBranch = spec.workspaceBase.baseBranch;
  }
  if (batchId !== undefined) plan.batchId = batchId;
  if (conversationId !== undefined) plan.conversationId = conversationId;
  return plan;
}
