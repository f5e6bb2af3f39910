import type { AgentDef } from '../core/agent-def.js';
import type { CrewConfig } from '../core/config-schema.js';
import { CrewError } from '../core/errors.js';
import type { RunSpec, WorkspaceBase } from '../core/types.js';
import * as refusals from './workspace-refusals.js';

/** The spawn arguments that choose a workspace (a part of the gateway's `SpawnArgs`, named here so this folder
 * imports nothing from the gateway). */
export interface WorkspaceArgs {
  isolation?: 'none' | 'worktree' | undefined;
  isolations?: ('none' | 'worktree')[] | undefined;
  base?: string | undefined;
  sandbox?: boolean | undefined;
}

/**
 * What admission asks of the host (git, bubblewrap): the gateway's `Workspaces` answers, so the gateway's
 * own modules start no process (the root entry loads no `node:child_process`).
 */
export interface WorkspaceAdmission {
  /** Throws an Error saying why when `cwd` is in no repository or `base` names no commit. */
  resolveBase(cwd: string, base: string | undefined, timeoutMs: number): WorkspaceBase;
  /** undefined when a sandbox can be made, else why not. */
  probeSandbox(bwrap: string): string | undefined;
}

/**
 * Admission's part of isolated workspaces (issue 31): each spec learns whether it gets a worktree (the
 * spawn's `isolation` / `isolations[i]`, else its agent's default) and a sandbox (`sandbox`, else its
 * agent's, else `workspace.sandbox_default`), and a worktree spec records its repository and base commit
 * now, so the base is the parent's HEAD when it asked, not when the run happens to start. Refused here,
 * before anything is admitted: a `cwd` outside a repository, a base that names no commit, a sandbox
 * this host cannot make.
 */
export function applyWorkspace(
  args: WorkspaceArgs,
  specs: RunSpec[],
  agents: ReadonlyMap<string, AgentDef>,
  config: CrewConfig,
  host: WorkspaceAdmission | undefined,
): void {
  if (!host) throw new CrewError(refusals.noWorkspaces());
  if (args.isolations !== undefined && args.isolations.length !== specs.length)
    throw new CrewError(refusals.isolationsMismatch(args.isolations.length, specs.length));
  let resolved: WorkspaceBase | undefined;
  let sandboxChecked = false;
  specs.forEach((spec, i) => {
    const agent = agents.get(spec.agent);
    const isolation = args.isolations?.[i] ?? args.isolation ?? agent?.isolation ?? 'none';
    const sandbox = args.sandbox ?? agent?.sandbox ?? config['workspace.sandbox_default'];
    if (isolation === 'worktree') {
      // Every task of one spawn works in the same directory: one git call serves them all.
      resolved ??= resolve(host, spec.cwd as string, args.base, config['workspace.git_timeout_secs'] * 1000);
      spec.isolation = 'worktree';
      spec.workspaceBase = resolved;
    }
    if (sandbox) {
      if (!sandboxChecked) {
        const problem = host.probeSandbox(config['workspace.bwrap_path']);
        if (problem !== undefined) throw new CrewError(refusals.sandboxUnavailable(problem));
        sandboxChecked = true;
      }
      spec.sandbox = true;
    }
  });
  if (args.base !== undefined && resolved === undefined) throw new CrewError(refusals.baseWithoutWorktree());
}

/** A continuation works where its conversation did: same worktree, same sandbox. */
export function inheritWorkspace(first: RunSpec | undefined): Partial<RunSpec> {
  if (!first) return {};
  const out: Partial<RunSpec> = {};
  if (first.isolation !== undefined) out.isolation = first.isolation;
  if (first.workspaceBase !== undefined) out.workspaceBase = first.workspaceBase;
  if (first.sandbox !== undefined) out.sandbox = first.sandbox;
  return out;
}

function resolve(
  host: WorkspaceAdmission,
  cwd: string,
  base: string | undefined,
  timeoutMs: number,
): WorkspaceBase {
  try {
    return host.resolveBase(cwd, base, timeoutMs);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    if (base !== undefined && !/not inside a git repository/.test(why))
      throw new CrewError(refusals.badBase(base, why));
    throw new CrewError(refusals.notARepository(why));
  }
}
