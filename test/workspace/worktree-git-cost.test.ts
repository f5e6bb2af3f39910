import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentDef } from '../../src/core/agent-def.js';
import {
  eventsUntil,
  makeRepo,
  makeWorkspaceGateway,
  makeWorkspaces,
  openGateways,
  sh,
  workspaceConfig,
} from './git-rig.js';

const { open, closeAll } = openGateways();
afterEach(closeAll);

const PARENT = 'mcp:git-cost';
const operator = { kind: 'operator' } as const;

/**
 * The git processes one worktree run costs, from spawn to its completion event (bench/workspace: each is
 * tens to hundreds of ms on a loaded machine, and they run one after another). Counted with git's own
 * trace (`GIT_TRACE`: one `built-in:` line per git process, children of `worktree add` and `commit`
 * included), which Crew's git environment passes on.
 */
async function gitProcessesOf(
  task: string,
  agent?: AgentDef,
): Promise<{ count: number; lines: string[]; id: string; repo: string }> {
  const { dir, repo } = makeRepo();
  const config = workspaceConfig(dir);
  const workspaces = makeWorkspaces(dir, config);
  const { gateway, runner } = makeWorkspaceGateway(dir, config, workspaces, undefined, agent ? [agent] : []);
  open.push({ gateway, runner, dir });
  const trace = join(dir, 'git-trace.txt');
  const previous = process.env.GIT_TRACE;
  process.env.GIT_TRACE = trace;
  let id: string;
  try {
    const spawned = gateway.spawn(PARENT, {
      task,
      isolation: 'worktree',
      cwd: repo,
      ...(agent ? { agent: agent.name } : {}),
    });
    if (!spawned.ok) throw new Error(JSON.stringify(spawned));
    id = spawned.runs[0]?.id as string;
    await eventsUntil(gateway, PARENT, (e) => e.some((x) => x.run_ids.includes(id)));
  } finally {
    if (previous === undefined) delete process.env.GIT_TRACE;
    else process.env.GIT_TRACE = previous;
  }
  const lines = (existsSync(trace) ? readFileSync(trace, 'utf8') : '')
    .split('\n')
    .filter((l) => l.includes('trace: built-in: git '))
    .map((l) => l.replace(/^.*trace: built-in: /, ''));
  // Whatever the count, the run's work is on its branch and nothing of the worktree is left.
  expect(
    sh(repo, 'worktree', 'list', '--porcelain')
      .split('\n')
      .filter((l) => l.startsWith('worktree ')),
  ).toEqual([`worktree ${repo}`]);
  expect(sh(repo, 'worktree', 'prune', '--dry-run', '--verbose')).toBe('');
  expect(existsSync(join(workspaces.root, id))).toBe(false);
  return { count: lines.length, lines, id: id as string, repo };
}

describe('the git processes a worktree run costs (issue 31, bench/workspace)', () => {
  it('a run that writes a file: one admission call, the worktree, one status, its commit, one diff and the tip check', async () => {
    const { count, lines, id } = await gitProcessesOf('a.txt=from a');
    // rev-parse (admission) · worktree add + its branch, symbolic-ref and reset · status · add · commit ·
    // diff --numstat · rev-parse of the base branch's tip. No maintenance after the commit, no worktree
    // remove or prune: the directories are deleted directly.
    expect(lines, lines.join('\n')).toHaveLength(10);
    expect(count).toBe(10);
    expect(lines.some((l) => l.startsWith('git maintenance'))).toBe(false);
    expect(lines.some((l) => l.startsWith('git worktree remove'))).toBe(false);
    const status = open[0] ? await open[0].gateway.status(id, operator) : undefined;
    expect(status?.ok && status.run.workspace).toMatchObject({ filesChanged: 1, committedForAgent: 1 });
  }, 60_000);

  it('a run that only edits tracked files commits them without an add', async () => {
    const { lines, id } = await gitProcessesOf('shared.txt=edited');
    expect(lines, lines.join('\n')).toHaveLength(9);
    expect(lines.some((l) => l.startsWith('git add'))).toBe(false);
    const status = open[0] ? await open[0].gateway.status(id, operator) : undefined;
    expect(status?.ok && status.run.workspace).toMatchObject({
      filesChanged: 1,
      committedForAgent: 1,
      files: [{ path: 'shared.txt', insertions: 1, deletions: 3 }],
    });
  }, 60_000);

  it("a run whose agent committed its own work: no commit of Crew, the head is the agent's commit", async () => {
    const committer: AgentDef = {
      name: 'committer',
      runner: 'command',
      command: [
        'sh',
        '-c',
        [
          'echo mine > own.txt && git add own.txt &&',
          'GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@a GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@a',
          'git commit -q -m "agent: own work"',
        ].join(' '),
      ],
      shared: false,
      skills: [],
    };
    const { lines, id, repo } = await gitProcessesOf('commit it', committer);
    // The agent's own git add and commit are in the trace too; Crew's part is the same as for a clean run
    // plus the diff and the tip check.
    expect(
      lines.filter((l) => l.startsWith('git commit')),
      lines.join('\n'),
    ).toEqual(["git commit -q -m 'agent: own work'"]);
    const status = open[0] ? await open[0].gateway.status(id, operator) : undefined;
    expect(status?.ok && status.run.workspace).toMatchObject({
      filesChanged: 1,
      committedForAgent: 0,
      head: sh(repo, 'rev-parse', `crew/${id}`),
      files: [{ path: 'own.txt', insertions: 1, deletions: 0 }],
    });
    expect(sh(repo, 'log', '-1', '--format=%s', `crew/${id}`)).toBe('agent: own work');
  }, 60_000);

  it('a run that changes nothing: one admission call, the worktree and one status', async () => {
    const { lines, id } = await gitProcessesOf('nothing to write');
    expect(lines, lines.join('\n')).toHaveLength(6);
    const status = open[0] ? await open[0].gateway.status(id, operator) : undefined;
    expect(status?.ok && status.run.workspace).toMatchObject({ filesChanged: 0, committedForAgent: 0 });
  }, 60_000);
});
