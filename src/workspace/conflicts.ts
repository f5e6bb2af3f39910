import { CrewFault } from '../core/errors.js';
import { MAX_CONFLICT_FILES } from '../core/workspace-facts.js';
import { gitRaw } from './git.js';

/** What merging two commits would give: the merged tree, or the files that conflict. */
export type MergeOutcome = { clean: true; tree: string } | { clean: false; files: string[] };

/**
 * Merges two commits in memory (`git merge-tree --write-tree`, git >= 2.38): it writes objects but no
 * ref, index or working tree, so nobody's checkout is touched. Throws when git fails for another reason.
 */
export async function mergeTree(
  repo: string,
  ours: string,
  theirs: string,
  timeoutMs: number,
): Promise<MergeOutcome> {
  const result = await gitRaw(
    ['merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', ours, theirs],
    { cwd: repo, timeoutMs },
  );
  const [tree, ...names] = result.stdout.split('\0').filter((part) => part !== '');
  if (result.code === 0 && tree) return { clean: true, tree };
  if (result.code === 1 && tree)
    return { clean: false, files: [...new Set(names)].slice(0, MAX_CONFLICT_FILES) };
  // git itself failed (not a conflict): a local fault, named so the merge's caller can say so.
  throw new CrewFault(
    'command_failed',
    `git merge-tree ${ours} ${theirs} failed (${result.code}): ${result.stderr.trim().slice(0, 300)}`,
  );
}
