import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  eventsUntil,
  makeRepo,
  makeWorkspaceGateway,
  makeWorkspaces,
  openGateways,
  sh,
  snapshot,
  workspaceConfig,
} from './git-rig.js';

const { open, closeAll } = openGateways();
afterEach(closeAll);

const PARENT = 'mcp:wave';
const operator = { kind: 'operator' } as const;

describe('isolation: worktree (issue 31)', () => {
  it('gives 5 wave members their own worktrees, reports the 2 that conflict, merges the other 3 and leaves the parent untouched', async () => {
    const { dir, repo } = makeRepo();
    // The parent has work in progress: an unstaged edit and an untracked file stay exactly as they are.
    sh(repo, 'config', 'user.name', 'p');
    require('node:fs').writeFileSync(join(repo, 'readme.md'), 'parent is editing\n');
    require('node:fs').writeFileSync(join(repo, 'notes.txt'), 'untracked\n');
    const config = workspaceConfig(dir);
    const workspaces = makeWorkspaces(dir, config);
    const { gateway, runner } = makeWorkspaceGateway(dir, config, workspaces);
    open.push({ gateway, runner, dir });
    const before = snapshot(repo);
    const base = sh(repo, 'rev-parse', 'HEAD');

    const spawned = gateway.spawn(PARENT, {
      tasks: [
        'a.txt=from a',
        'b/b.txt=from b',
        'c.txt=from c',
        'shared.txt=one\\nTWO by d\\nthree\\n',
        'shared.txt=one\\ntwo by e\\nthree\\n',
      ],
      isolation: 'worktree',
      cwd: repo,
    });
    expect(spawned.ok ? spawned : JSON.stringify(spawned)).toMatchObject({ ok: true });
    if (!spawned.ok) return;
    const ids = spawned.runs.map((r) => r.id);
    const events = await eventsUntil(gateway, PARENT, (e) => e.some((x) => x.batch_id === spawned.batch_id));
    const digest = events.find((e) => e.batch_id === spawned.batch_id)?.text ?? '';

    // The digest names exactly the two members whose changes to shared.txt conflict.
    const conflictLines = digest.split('\n').filter((l) => l.startsWith('[conflict]'));
    expect(conflictLines).toHaveLength(1);
    expect(conflictLines[0]).toContain(ids[3]);
    expect(conflictLines[0]).toContain(ids[4]);
    expect(conflictLines[0]).toContain('shared.txt');
    expect(digest).toMatch(new RegExp(`conflicting: (${ids[3]}, ${ids[4]}|${ids[4]}, ${ids[3]})`));

    // Each member's record says what changed on its own branch from the recorded base.
    for (const [i, id] of ids.entries()) {
      const status = await gateway.status(id, operator);
      expect(status.ok).toBe(true);
      if (!status.ok) continue;
      const ws = status.run.workspace;
      expect(ws?.branch).toBe(`crew/${id}`);
      expect(ws?.base).toBe(base);
      expect(ws?.filesChanged).toBe(1);
      expect(ws?.committedForAgent).toBe(1);
      expect(ws?.path).toBeUndefined();
      expect(sh(repo, 'rev-parse', `crew/${id}`)).toBe(ws?.head);
      expect(ws?.files?.[0]?.path).toBe(['a.txt', 'b/b.txt', 'c.txt', 'shared.txt', 'shared.txt'][i]);
    }
    // The agents ran in their worktrees, not in the parent's checkout; the worktrees are gone once they ended.
    expect(
      sh(repo, 'worktree', 'list', '--porcelain')
        .split('\n')
        .filter((l) => l.startsWith('worktree ')),
    ).toEqual([`worktree ${repo}`]);
    expect(snapshot(repo)).toBe(before);

    const merged = await gateway.merge({ batch_id: spawned.batch_id, target: 'integration' }, operator);
    expect(merged.ok).toBe(true);
    if (!merged.ok) return;
    expect(merged.merged).toEqual(ids.slice(0, 3));
    expect(merged.refused.map((r) => r.id)).toEqual(ids.slice(3));
    for (const r of merged.refused) {
      expect(r.refusal.code).toBe('merge_conflict');
      expect(r.refusal.files).toEqual(['shared.txt']);
      expect(r.refusal.message).toContain('shared.txt');
    }
    expect(sh(repo, 'show', 'integration:a.txt')).toBe('from a');
    expect(sh(repo, 'show', 'integration:b/b.txt')).toBe('from b');
    expect(sh(repo, 'show', 'integration:c.txt')).toBe('from c');
    expect(sh(repo, 'show', 'integration:shared.txt')).toBe('one\ntwo\nthree');
    // Merging touched no checkout either.
    expect(snapshot(repo)).toBe(before);

    // The parent picks one side of the conflict by merging it alone; the other side then is a typed
    // refusal naming the file, and the target stays where it was.
    const first = await gateway.merge({ agent_id: ids[3], target: 'integration' }, operator);
    expect(first).toMatchObject({ ok: true, merged: [ids[3]] });
    const tip = sh(repo, 'rev-parse', 'integration');
    const alone = await gateway.merge({ agent_id: ids[4], target: 'integration' }, operator);
    expect(alone).toMatchObject({ ok: false, refusal: { code: 'merge_conflict', files: ['shared.txt'] } });
    expect(sh(repo, 'rev-parse', 'integration')).toBe(tip);
    // The parent's own branch is checked out: refused, never updated under its files.
    const onMain = await gateway.merge({ agent_id: ids[3], target: 'main' }, operator);
    expect(onMain).toMatchObject({ ok: false, refusal: { code: 'merge_target_checked_out' } });
    expect(snapshot(repo)).toBe(before);
  }, 60_000);

  it('creates nothing for a queued run, so cancelling it leaves no worktree or branch', async () => {
    const { dir, repo } = makeRepo();
    const config = workspaceConfig(dir);
    const workspaces = makeWorkspaces(dir, config);
    const { gateway, runner } = makeWorkspaceGateway(dir, config, workspaces);
    open.push({ gateway, runner, dir });
    const spawned = gateway.spawn(PARENT, {
      tasks: ['x=1;hang', 'y=1;hang', 'z=1;hang', 'queued.txt=never'],
      isolation: 'worktree',
      cwd: repo,
    });
    expect(spawned.ok ? spawned : JSON.stringify(spawned)).toMatchObject({ ok: true });
    if (!spawned.ok) return;
    const queued = spawned.runs[3]?.id as string;
    expect(spawned.runs[3]?.status).toBe('queued');
    expect(gateway.cancel(queued, operator).ok).toBe(true);
    expect(existsSync(join(workspaces.root, queued))).toBe(false);
    expect(sh(repo, 'branch', '--list', `crew/${queued}`)).toBe('');
    for (const run of spawned.runs.slice(0, 3)) gateway.cancel(run.id, operator);
    await eventsUntil(gateway, PARENT, (e) => e.some((x) => x.batch_id === spawned.batch_id));
    expect(sh(repo, 'branch', '--list', `crew/${queued}`)).toBe('');
  }, 60_000);

  it('refuses a worktree outside a git repository and a base that names no commit, admitting nothing', async () => {
    const { dir, repo } = makeRepo();
    const config = workspaceConfig(dir);
    const workspaces = makeWorkspaces(dir, config);
    const { gateway, runner } = makeWorkspaceGateway(dir, config, workspaces);
    open.push({ gateway, runner, dir });
    const outside = gateway.spawn(PARENT, { task: 'a=1', isolation: 'worktree', cwd: dir });
    expect(outside).toMatchObject({ ok: false, refusal: { code: 'invalid_argument', path: 'isolation' } });
    const badBase = gateway.spawn(PARENT, {
      task: 'a=1',
      isolation: 'worktree',
      cwd: repo,
      base: 'no-such-branch',
    });
    expect(badBase).toMatchObject({ ok: false, refusal: { code: 'invalid_argument', path: 'base' } });
    const hostile = gateway.spawn(PARENT, {
      task: 'a=1',
      isolation: 'worktree',
      cwd: repo,
      base: '--output=/tmp/x',
    });
    expect(hostile).toMatchObject({ ok: false, refusal: { code: 'invalid_argument', path: 'base' } });
    const baseAlone = gateway.spawn(PARENT, { task: 'a=1', cwd: repo, base: 'main' });
    expect(baseAlone).toMatchObject({ ok: false, refusal: { code: 'invalid_argument', path: 'base' } });
    expect(gateway.list(operator).runs).toHaveLength(0);
  });
});
