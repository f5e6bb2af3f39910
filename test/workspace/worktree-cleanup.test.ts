import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { api, pollFor, startDaemonProcess } from '../helpers/daemon-process.js';
import {
  eventsUntil,
  makeRepo,
  makeWorkspaceGateway,
  makeWorkspaces,
  openGateways,
  sh,
  snapshot,
  workspaceConfig,
  writerAgent,
} from './git-rig.js';

const { open, closeAll } = openGateways();
afterEach(closeAll);

const PARENT = 'mcp:cleanup';
const operator = { kind: 'operator' } as const;

/** Worktrees git knows of besides the main one. */
function extraWorktrees(repo: string): string[] {
  return sh(repo, 'worktree', 'list', '--porcelain')
    .split('\n')
    .filter((l) => l.startsWith('worktree ') && l !== `worktree ${repo}`);
}

describe('workspace cleanup (issue 31)', () => {
  it("a kept conversation's worktree serves its next turn and goes with its branch when released", async () => {
    const { dir, repo } = makeRepo();
    const config = workspaceConfig(dir);
    const workspaces = makeWorkspaces(dir, config);
    const { gateway, runner } = makeWorkspaceGateway(dir, config, workspaces);
    open.push({ gateway, runner, dir });
    const before = snapshot(repo);
    const first = gateway.spawn(PARENT, {
      task: '#sim write=one.txt=1',
      agent: 'sim',
      isolation: 'worktree',
      cwd: repo,
      keep: true,
    });
    if (!first.ok) throw new Error(JSON.stringify(first));
    const id = first.runs[0]?.id as string;
    await eventsUntil(gateway, PARENT, (e) => e.some((x) => x.run_ids.includes(id)));
    const kept = await gateway.status(id, operator);
    const path = kept.ok ? kept.run.workspace?.path : undefined;
    expect(path && existsSync(path)).toBe(true);

    const next = await gateway.admitContinue(PARENT, { conversation: id, task: '#sim write=two.txt=2' });
    if (!next.ok) throw new Error(JSON.stringify(next));
    const nextId = next.runs[0]?.id as string;
    const events = await eventsUntil(gateway, PARENT, (e) => e.some((x) => x.run_ids.includes(nextId)));
    expect(events.find((e) => e.run_ids.includes(nextId))?.text).toContain(`branch=crew/${id}`);
    expect(sh(repo, 'ls-tree', '--name-only', `crew/${id}`).split('\n').sort()).toEqual([
      'one.txt',
      'readme.md',
      'shared.txt',
      'two.txt',
    ]);
    expect((await gateway.merge({ agent_id: nextId, target: 'kept-work' }, operator)).ok).toBe(true);

    expect(gateway.release(id, operator).ok).toBe(true);
    await pollFor('the worktree and branch to go', async () =>
      !existsSync(path as string) && sh(repo, 'branch', '--list', `crew/${id}`) === '' ? true : undefined,
    );
    expect(extraWorktrees(repo)).toEqual([]);
    expect(sh(repo, 'worktree', 'prune', '--dry-run', '--verbose')).toBe('');
    // What was merged stays; the parent's checkout never moved.
    expect(sh(repo, 'show', 'kept-work:two.txt')).toBe('2');
    expect(snapshot(repo)).toBe(before);
  }, 60_000);

  it("a run's branch goes when its transcript's TTL passes; an unmerged one with changes only after workspace.unmerged_keep_secs", async () => {
    const { dir, repo } = makeRepo();
    const config = workspaceConfig(dir, {
      // The merge below must be done before the merged run's transcript goes: a branch not yet merged when
      // its TTL passes is kept for the grace like the other (at a 0.2 s TTL a loaded CI merged too late, and
      // both branches went together after the grace, whether that was 6 s or 15 s).
      'agent.subagent_result_ttl_secs': 5,
      'workspace.unmerged_keep_secs': 10,
    });
    const workspaces = makeWorkspaces(dir, config);
    const { gateway, runner } = makeWorkspaceGateway(dir, config, workspaces, 100);
    open.push({ gateway, runner, dir });
    const spawned = gateway.spawn(PARENT, {
      tasks: ['', 'm.txt=merged', 'u.txt=unmerged'].slice(1),
      isolation: 'worktree',
      cwd: repo,
    });
    if (!spawned.ok) throw new Error(JSON.stringify(spawned));
    const [merged, unmerged] = spawned.runs.map((r) => r.id) as [string, string];
    await eventsUntil(gateway, PARENT, (e) => e.some((x) => x.batch_id === spawned.batch_id));
    const endedAt = Date.now();
    expect((await gateway.merge({ agent_id: merged, target: 'done' }, operator)).ok).toBe(true);
    // Merged within the TTL (counted from a moment after the run ended): else this case cannot tell its two
    // branches apart, and says so rather than failing below.
    expect(Date.now() - endedAt, 'the merge took longer than the transcript TTL').toBeLessThan(5_000);
    const branchOf = (id: string) => sh(repo, 'branch', '--list', `crew/${id}`);
    await pollFor('the merged branch to go with its transcript', async () =>
      branchOf(merged) === '' ? true : undefined,
    );
    expect(branchOf(unmerged)).not.toBe('');
    await pollFor(
      'the unmerged branch and its registration to go after its grace',
      async () => (branchOf(unmerged) === '' && readdirSync(workspaces.root).length === 0 ? true : undefined),
      40_000,
    );
  }, 90_000);

  it('bounds branches by workspace.max_branches, oldest ended first', async () => {
    const { dir, repo } = makeRepo();
    const config = workspaceConfig(dir, { 'workspace.max_branches': 2 });
    const workspaces = makeWorkspaces(dir, config);
    const { gateway, runner } = makeWorkspaceGateway(dir, config, workspaces);
    open.push({ gateway, runner, dir });
    const spawned = gateway.spawn(PARENT, {
      tasks: ['a=1', 'b=2', 'c=3', 'd=4'],
      isolation: 'worktree',
      cwd: repo,
    });
    if (!spawned.ok) throw new Error(JSON.stringify(spawned));
    await eventsUntil(gateway, PARENT, (e) => e.some((x) => x.batch_id === spawned.batch_id));
    expect(sh(repo, 'branch', '--list', 'crew/*').split('\n')).toHaveLength(4);
    await workspaces.sweep();
    expect(sh(repo, 'branch', '--list', 'crew/*').split('\n')).toHaveLength(2);
  }, 60_000);

  it('a daemon killed mid-wave leaves no worktree behind after its restart', async () => {
    const { dir, repo } = makeRepo();
    const config = {
      'agent.subagent_cwd_allowed_roots': [dir],
      'agents.writer': { runner: 'command', command: writerAgent.command },
    };
    const first = await startDaemonProcess({ config });
    const home = first.home;
    try {
      const spawned = await api(first, 'POST', '/api/spawn', {
        args: {
          tasks: ['a.txt=1;hang', 'b.txt=2;hang', 'c.txt=3;hang'],
          agent: 'writer',
          isolation: 'worktree',
          cwd: repo,
        },
      });
      expect(spawned.body.ok).toBe(true);
      await pollFor('three worktrees with running agents', async () => {
        const runs = (await api(first, 'GET', '/api/runs')).body.runs as { status: string }[];
        return runs.filter((r) => r.status === 'running').length === 3 && extraWorktrees(repo).length === 3
          ? true
          : undefined;
      });
      first.proc.kill('SIGKILL');
      await new Promise((resolve) => first.proc.once('exit', resolve));
      expect(extraWorktrees(repo)).toHaveLength(3);

      const second = await startDaemonProcess({ home, config });
      try {
        await pollFor(
          'the worktrees to be gone',
          async () => (extraWorktrees(repo).length === 0 ? true : undefined),
          20_000,
        );
        expect(sh(repo, 'worktree', 'prune', '--dry-run', '--verbose')).toBe('');
        const left = readdirSync(join(home, 'worktrees'), { withFileTypes: true }).filter((e) =>
          e.isDirectory(),
        );
        expect(left).toEqual([]);
        const runs = (await api(second, 'GET', '/api/runs')).body.runs as { status: string }[];
        expect(runs.map((r) => r.status)).toEqual(['lost', 'lost', 'lost']);
        // What the killed agents had written is saved on their branches.
        expect(sh(repo, 'branch', '--list', 'crew/*').split('\n')).toHaveLength(3);
      } finally {
        await second.stop();
      }
    } finally {
      first.cleanup();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
