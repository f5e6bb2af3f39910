import { type Refusal, refuse } from '../core/errors.js';

/** The refusals of isolated workspaces (issue 31), each saying what to do next. */

export function notARepository(why: string): Refusal {
  return refuse(
    'invalid_argument',
    `isolation "worktree" needs cwd inside a git repository: ${why}; spawn from a repository, or leave isolation out`,
    { path: 'isolation' },
  );
}

export function badBase(base: string, why: string): Refusal {
  return refuse(
    'invalid_argument',
    `base "${base}" cannot be used: ${why}; name a commit or branch of the repository`,
    {
      path: 'base',
    },
  );
}

export function baseWithoutWorktree(): Refusal {
  return refuse(
    'invalid_argument',
    'base is only for isolation "worktree"; add isolation: "worktree" or leave base out',
    {
      path: 'base',
    },
  );
}

export function isolationsMismatch(given: number, tasks: number): Refusal {
  return refuse('invalid_argument', `isolations has ${given} entries for ${tasks} tasks; give one per task`, {
    path: 'isolations',
  });
}

export function noWorkspaces(): Refusal {
  return refuse(
    'invalid_argument',
    'this gateway keeps no workspaces (started without a workspace root); run it as `crew serve`, or leave isolation and sandbox out',
    { path: 'isolation' },
  );
}

export function sandboxUnavailable(why: string): Refusal {
  return refuse(
    'sandbox_unavailable',
    `a sandbox was asked for but cannot be made here: ${why}; install bubblewrap (Debian: apt-get install bubblewrap) and allow unprivileged user namespaces, or spawn with sandbox: false`,
  );
}

export function mergeConflict(runId: string, files: readonly string[], target: string): Refusal {
  return refuse(
    'merge_conflict',
    `run ${runId}'s changes conflict with ${target} in ${files.length} file(s): ${files.join(', ')}; merge crew/${runId} yourself and resolve them, or spawn a run to redo the work on ${target}`,
  );
}

export function targetMoved(target: string, why: string): Refusal {
  return refuse(
    'merge_target_moved',
    `${target} ${why}; look at it (git log ${target}) and merge by hand, or call spawn_merge again`,
  );
}

export function targetCheckedOut(target: string, where: string): Refusal {
  return refuse(
    'merge_target_checked_out',
    `${target} is checked out at ${where}, and Crew never touches a checkout; merge into another branch (e.g. target: "crew-merge") and then run \`git merge --ff-only crew-merge\` there`,
  );
}

export function notIsolated(runId: string): Refusal {
  return refuse(
    'invalid_argument',
    `run ${runId} has no worktree branch (it was not spawned with isolation "worktree")`,
    {
      path: 'agent_id',
    },
  );
}

export function notEnded(runId: string, status: string): Refusal {
  return refuse('not_running', `run ${runId} is ${status}; merge it once it has ended (spawn_wait)`);
}
