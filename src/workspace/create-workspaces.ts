import { join } from 'node:path';
import type { Clock } from '../core/clock.js';
import type { CrewConfig } from '../core/config-schema.js';
import type { Store } from '../store/store.js';
import type { SandboxLauncher } from './workspaces.js';
import { Workspaces } from './workspaces.js';

/** The daemon's workspaces: worktrees under `$CREW_HOME/worktrees`, tuned by the `workspace.*` keys. */
export function createWorkspaces(
  crewHome: string,
  config: CrewConfig,
  deps: { clock: Clock; store: Pick<Store, 'runs'>; log: (line: string) => void; sandbox?: SandboxLauncher },
): Workspaces {
  return new Workspaces({
    root: join(crewHome, 'worktrees'),
    clock: deps.clock,
    gitTimeoutMs: config['workspace.git_timeout_secs'] * 1000,
    unmergedKeepMs: config['workspace.unmerged_keep_secs'] * 1000,
    maxBranches: config['workspace.max_branches'],
    conflictCheckMax: config['workspace.conflict_check_max'],
    log: deps.log,
    ...(deps.sandbox ? { sandbox: deps.sandbox } : {}),
    waveHeads: (batchId) =>
      deps.store.runs({ batchId }).flatMap((r) => {
        const head = r.workspace?.head;
        return head !== undefined && (r.workspace?.filesChanged ?? 0) > 0 ? [{ runId: r.run.id, head }] : [];
      }),
  });
}
