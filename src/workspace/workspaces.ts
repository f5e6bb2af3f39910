import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentDef } from '../core/agent-def.js';
import type { Clock } from '../core/clock.js';
import { CrewError, refuse } from '../core/errors.js';
import type { WorkspaceBase } from '../core/types.js';
import type { WorkspaceConflict, WorkspaceFacts } from '../core/workspace-facts.js';
import type { RunInfoUpdate, RunRecord } from '../store/store.js';
import type { WorkspaceAdmission } from './admission.js';
import { mergeTree } from './conflicts.js';
import { gitRaw } from './git.js';
import { type MergeResult, mergeRuns } from './merge.js';
import type { MergeArgs } from './merge-args.js';
import { probeSandbox } from './sandbox-probe.js';
import { MetaDir, type WorkspaceMeta } from './workspace-meta.js';
import type { WorkspacePlan } from './workspace-plan.js';
import {
  addWorktree,
  branchTip,
  changedFiles,
  commitLeftovers,
  deleteBranch,
  removeWorktree,
  resolveBaseSync,
  worktreeGitDir,
} from './worktree.js';

/** Runs a run's agent under a sandbox (see `sandbox.ts`); absent on a gateway without one. */
export interface SandboxLauncher {
  /** The agent to start instead (its argv under bubblewrap) and what to close once it has ended. */
  wrap(
    runId: string,
    agent: AgentDef,
    writable: string[],
  ): Promise<{ agent: AgentDef; close(): Promise<void> }>;
}

export interface WorkspacesOptions {
  /** Where worktrees and their registry live (`$CREW_HOME/worktrees`). */
  root: string;
  clock: Clock;
  /** `workspace.git_timeout_secs` in ms: each git command's bound. */
  gitTimeoutMs: number;
  /** `workspace.unmerged_keep_secs` in ms: an unmerged branch with changes outlives its run's transcript this long. */
  unmergedKeepMs: number;
  /** `workspace.max_branches`: branches kept at most; beyond, the oldest ended ones go first. */
  maxBranches: number;
  /** `workspace.conflict_check_max`: members of a wave each end is compared with, at most. */
  conflictCheckMax: number;
  sandbox?: SandboxLauncher;
  /** The recorded heads of a wave's members (ended before this gateway started, or recorded already). */
  waveHeads?: (batchId: string) => { runId: string; head: string }[];
  log?: (line: string) => void;
}

/** What `prepare` gives the runner: where the agent starts, the agent to start, and the facts so far. */
export interface Prepared {
  cwd: string;
  agent: AgentDef;
  facts?: WorkspaceFacts;
  closeSandbox?: () => Promise<void>;
}

/** Waves whose ended members' heads are remembered for conflict checks (oldest forgotten first). */
const WAVES_REMEMBERED = 256;

/**
 * Every run's isolated workspace, from its start to its cleanup (issue 31): makes the worktree when the
 * run starts (never for a queued one), commits what the agent left and summarises the changes when it
 * ends, checks a wave's members against each other and the base branch's tip, and removes worktrees and
 * branches when their time comes (run end, release, transcript TTL, restart, the count bound).
 */
export class Workspaces implements WorkspaceAdmission {
  private readonly metas: MetaDir;
  /** Per wave: the heads of members that ended with changes, in the order they ended. */
  private readonly waveEnds = new Map<string, { runId: string; head: string }[]>();
  /** Per wave: the chain its members' end checks run in, one at a time (no pair is missed). */
  private readonly waveChains = new Map<string, Promise<unknown>>();
  private readonly log: (line: string) => void;
  /** Per registered workspace: the chain its changes run in, one at a time (a merge, a release, a TTL). */
  private readonly locks = new Map<string, Promise<unknown>>();

  constructor(private readonly options: WorkspacesOptions) {
    this.metas = new MetaDir(options.root);
    this.log = options.log ?? (() => undefined);
  }

  resolveBase(cwd: string, base: string | undefined, timeoutMs: number): WorkspaceBase {
    return resolveBaseSync(cwd, base, timeoutMs);
  }

  probeSandbox(bwrap: string): string | undefined {
    return probeSandbox(bwrap);
  }

  /** `spawn_merge` (see `mergeRuns`); `record` writes the merged runs' facts in one transaction. */
  merge(
    records: RunRecord[],
    args: MergeArgs,
    record: (updates: RunInfoUpdate[]) => void,
  ): Promise<MergeResult> {
    return mergeRuns(records, args, { timeoutMs: this.timeoutMs, record, merged: (id) => this.merged(id) });
  }

  get root(): string {
    return this.options.root;
  }

  private get timeoutMs(): number {
    return this.options.gitTimeoutMs;
  }

  /** Makes the run's worktree (or reuses its conversation's) and its sandbox, at the run's start. */
  async prepare(runId: string, plan: WorkspacePlan, cwd: string, agent: AgentDef): Promise<Prepared> {
    let prepared: Prepared = { cwd, agent };
    if (plan.worktree) {
      // Internal: admission records a worktree plan only with its repository and base.
      if (plan.repo === undefined || plan.base === undefined) throw new Error('the run has no recorded base');
      const reused = plan.conversationId ? await this.metas.read(plan.conversationId) : undefined;
      let meta: WorkspaceMeta;
      if (reused?.path !== undefined && existsSync(reused.path)) {
        meta = reused;
      } else {
        const path = this.metas.worktreeOf(runId);
        meta = {
          runId,
          repo: plan.repo,
          branch: `crew/${runId}`,
          path,
          base: plan.base,
          keep: plan.keep,
          changed: false,
          merged: false,
          createdAt: this.options.clock.now(),
        };
        // Registered before it exists: a daemon killed in between leaves a meta file the restart acts on.
        await this.metas.write(meta);
        await addWorktree(plan.repo, path, meta.branch, plan.base, this.timeoutMs);
      }
      const path = meta.path as string;
      const facts: WorkspaceFacts = { repo: meta.repo, branch: meta.branch, base: meta.base, path };
      if (plan.baseBranch !== undefined) facts.baseBranch = plan.baseBranch;
      prepared = { cwd: plan.subdir ? join(path, plan.subdir) : path, agent, facts };
    }
    if (plan.sandbox) {
      const sandbox = this.options.sandbox;
      if (!sandbox)
        throw new CrewError(
          refuse('sandbox_unavailable', 'this gateway has no sandbox; run the agent without sandbox: true'),
        );
      const writable = [prepared.facts?.path ?? prepared.cwd];
      if (prepared.facts) writable.push(...(await this.gitAdminDirs(prepared.facts.path as string)));
      const wrapped = await sandbox.wrap(runId, agent, writable);
      prepared.agent = wrapped.agent;
      prepared.closeSandbox = wrapped.close;
      if (prepared.facts) prepared.facts.sandbox = true;
    }
    return prepared;
  }

  /**
   * At the run's end: commits what the agent left on its branch, summarises the changes against the base,
   * checks them against the base branch's tip and the wave's other members, and removes the worktree
   * (a kept conversation's stays until it is released). Never throws: a failure is logged and the facts
   * say what is known.
   */
  finish(runId: string, plan: WorkspacePlan, facts: WorkspaceFacts): Promise<WorkspaceFacts> {
    return this.locked(plan.conversationId ?? runId, () => this.finishNow(runId, plan, facts));
  }

  private async finishNow(
    runId: string,
    plan: WorkspacePlan,
    facts: WorkspaceFacts,
  ): Promise<WorkspaceFacts> {
    const meta = await this.metas.read(plan.conversationId ?? runId);
    const out: WorkspaceFacts = { ...facts };
    if (!meta || meta.path === undefined) return out;
    try {
      const committed = await commitLeftovers(meta.path, plan.conversationId ?? runId, this.timeoutMs);
      // Still at its base: nothing changed, no diff to ask for. Else the diff and the base branch's tip
      // (for the conflict check) are asked at once.
      const moved = committed.head !== meta.base;
      const [changes, tip] = moved
        ? await Promise.all([
            changedFiles(meta.repo, meta.base, committed.head, this.timeoutMs),
            plan.baseBranch === undefined ? undefined : branchTip(meta.repo, plan.baseBranch, this.timeoutMs),
          ])
        : [{ files: [], total: 0, insertions: 0, deletions: 0 }, undefined];
      out.head = committed.head;
      out.committedForAgent = committed.committedForAgent;
      out.files = changes.files;
      out.filesChanged = changes.total;
      out.insertions = changes.insertions;
      out.deletions = changes.deletions;
      meta.changed = changes.total > 0;
      if (meta.changed) {
        const conflicts = await this.conflictsOf(runId, plan, committed.head, tip);
        if (conflicts.length > 0) out.conflicts = conflicts;
      }
    } catch (error) {
      this.log(`crew: summarising run ${runId}'s worktree failed: ${errorText(error)}`);
    }
    meta.endedAt = this.options.clock.now();
    if (!meta.keep) {
      await this.removeCheckout(meta);
      delete out.path;
    }
    await this.metas.write(meta).catch((error) => this.log(`crew: ${errorText(error)}`));
    return out;
  }

  /** A kept conversation was released: its worktree goes, and its branch (now, or later when unmerged). */
  released(conversationId: string): Promise<void> {
    return this.locked(conversationId, () => this.releasedNow(conversationId));
  }

  private async releasedNow(conversationId: string): Promise<void> {
    const meta = await this.metas.read(conversationId);
    if (!meta) return;
    await this.removeCheckout(meta);
    await this.retire(meta);
  }

  /** A run's transcript passed its TTL (or its history was deleted): its branch goes, now or later. */
  transcriptPruned(runId: string): Promise<void> {
    return this.locked(runId, () => this.transcriptPrunedNow(runId));
  }

  private async transcriptPrunedNow(runId: string): Promise<void> {
    const meta = await this.metas.read(runId);
    if (!meta || meta.keep) return;
    await this.retire(meta);
  }

  /** `spawn_merge` merged this run's branch. */
  merged(runId: string): Promise<void> {
    return this.locked(runId, () => this.mergedNow(runId));
  }

  private async mergedNow(runId: string): Promise<void> {
    const meta = await this.metas.read(runId);
    if (!meta) return;
    meta.merged = true;
    await this.metas.write(meta);
  }

  /**
   * At a gateway start: every worktree whose run is not a live kept conversation is removed (the run was
   * killed with the daemon and has ended `lost`; what its agent left is committed on its branch first),
   * strays with no registration are deleted, and `git worktree prune` runs in each repository.
   */
  async recover(liveConversations: ReadonlySet<string>): Promise<number> {
    let removed = 0;
    const repos = new Set<string>();
    for (const meta of await this.metas.all()) {
      repos.add(meta.repo);
      if (meta.path === undefined || (meta.keep && liveConversations.has(meta.runId))) continue;
      if (existsSync(meta.path)) {
        try {
          await commitLeftovers(meta.path, meta.runId, this.timeoutMs);
        } catch (error) {
          this.log(`crew: saving the work of lost run ${meta.runId} failed: ${errorText(error)}`);
        }
      }
      meta.endedAt ??= this.options.clock.now();
      meta.changed = (await branchTip(meta.repo, meta.branch, this.timeoutMs)) !== meta.base;
      await this.removeCheckout(meta);
      await this.metas.write(meta);
      removed++;
    }
    for (const stray of await this.metas.strays()) {
      const { rm } = await import('node:fs/promises');
      await rm(stray, { recursive: true, force: true });
      removed++;
    }
    for (const repo of repos) await gitRaw(['worktree', 'prune'], { cwd: repo, timeoutMs: this.timeoutMs });
    return removed;
  }

  /** Deletes branches whose time has come and, beyond `maxBranches`, the oldest ended ones. */
  async sweep(): Promise<void> {
    const now = this.options.clock.now();
    const metas = await this.metas.all();
    let count = metas.length;
    for (const meta of metas) {
      const due = meta.deleteAfter !== undefined && meta.deleteAfter <= now;
      const overflow = count > this.options.maxBranches && meta.path === undefined;
      if (!due && !overflow) continue;
      if (overflow && !due) this.log(`crew: over workspace.max_branches; deleting ${meta.branch}`);
      await this.locked(meta.runId, async () => {
        const current = await this.metas.read(meta.runId);
        if (current) await this.forget(current);
      });
      count--;
    }
  }

  /** Runs `fn` after every earlier change of the workspace registered under `id`. */
  private locked<T>(id: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(id) ?? Promise.resolve();
    const next = previous.then(fn, fn);
    const settled = next.catch(() => undefined);
    this.locks.set(id, settled);
    void settled.then(() => {
      if (this.locks.get(id) === settled) this.locks.delete(id);
    });
    return next;
  }

  /** Removes the worktree (the branch stays). */
  private async removeCheckout(meta: WorkspaceMeta): Promise<void> {
    if (meta.path === undefined) return;
    try {
      await removeWorktree(meta.repo, meta.path, this.timeoutMs);
      delete meta.path;
      await this.metas.write(meta);
    } catch (error) {
      this.log(`crew: removing worktree ${meta.path} failed: ${errorText(error)}`);
    }
  }

  /** The branch goes now when it holds nothing unmerged, else after `unmergedKeepMs`. */
  private async retire(meta: WorkspaceMeta): Promise<void> {
    const unmerged = meta.changed && !meta.merged;
    if (!unmerged || this.options.unmergedKeepMs === 0) {
      await this.forget(meta);
      return;
    }
    meta.deleteAfter ??= this.options.clock.now() + this.options.unmergedKeepMs;
    await this.metas.write(meta);
  }

  private async forget(meta: WorkspaceMeta): Promise<void> {
    await this.removeCheckout(meta);
    await deleteBranch(meta.repo, meta.branch, this.timeoutMs);
    await this.metas.remove(meta.runId);
  }

  /** The git directories a sandboxed agent may write for its own worktree: its administrative dir. */
  private async gitAdminDirs(path: string): Promise<string[]> {
    // Read from the worktree's `.git` file: one git process less before the agent starts.
    const admin = await worktreeGitDir(path);
    return admin === undefined ? [] : [admin];
  }

  /**
   * Conflicts of a member's head with the base branch's tip and with the wave's members that ended
   * before it. A wave's checks run one at a time, so of two members ending together the later sees the
   * earlier; each pair is reported once, on the member that ended second. `tip` is the base branch's
   * tip, read as the member ended (undefined: no base branch, or it is gone).
   */
  private conflictsOf(
    runId: string,
    plan: WorkspacePlan,
    head: string,
    tip: string | undefined,
  ): Promise<WorkspaceConflict[]> {
    const repo = plan.repo as string;
    const batchId = plan.batchId;
    const check = async (): Promise<WorkspaceConflict[]> => {
      const conflicts: WorkspaceConflict[] = [];
      if (plan.baseBranch !== undefined) {
        if (tip !== undefined && tip !== plan.base) {
          const outcome = await mergeTree(repo, tip, head, this.timeoutMs);
          if (!outcome.clean) conflicts.push({ with: 'base', files: outcome.files });
        }
      }
      if (batchId === undefined) return conflicts;
      const ended = this.waveEnds.get(batchId) ?? [];
      const peers = new Map<string, string>();
      for (const peer of this.options.waveHeads?.(batchId) ?? []) peers.set(peer.runId, peer.head);
      for (const peer of ended) peers.set(peer.runId, peer.head);
      peers.delete(runId);
      let compared = 0;
      for (const [peerId, peerHead] of peers) {
        if (compared++ >= this.options.conflictCheckMax) break;
        if (peerHead === plan.base) continue;
        const outcome = await mergeTree(repo, peerHead, head, this.timeoutMs);
        if (!outcome.clean) conflicts.push({ with: peerId, files: outcome.files });
      }
      ended.push({ runId, head });
      this.remember(batchId, ended);
      return conflicts;
    };
    if (batchId === undefined) return check();
    const previous = this.waveChains.get(batchId) ?? Promise.resolve();
    const next = previous.then(check, check);
    this.waveChains.set(
      batchId,
      next.catch(() => undefined),
    );
    return next;
  }

  private remember(batchId: string, ended: { runId: string; head: string }[]): void {
    this.waveEnds.delete(batchId);
    this.waveEnds.set(batchId, ended);
    while (this.waveEnds.size > WAVES_REMEMBERED) {
      const oldest = this.waveEnds.keys().next().value as string;
      this.waveEnds.delete(oldest);
      this.waveChains.delete(oldest);
    }
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
