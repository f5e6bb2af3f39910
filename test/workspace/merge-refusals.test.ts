import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { realClock } from '../../src/clock/real-clock.js';
import type { Gateway } from '../../src/gateway/gateway.js';
import type { Runner } from '../../src/runners/runner.js';
import { MemorySelSink } from '../../src/sel/memory-sel-sink.js';
import {
  eventsUntil,
  makeRepo,
  makeWorkspaceGateway,
  makeWorkspaces,
  sh,
  workspaceConfig,
} from './git-rig.js';

const open: { gateway: Gateway; runner: Runner; dir: string }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    await o.gateway.close();
    await o.runner.close();
    rmSync(o.dir, { recursive: true, force: true });
  }
});

const operator = { kind: 'operator' } as const;

/**
 * spawn_merge's refusals on real branches, each with its one SEL line (the refusal audit of issue 13
 * covers the other codes in test/http/refusal-audit.test.ts).
 */
describe('spawn_merge refusals (issue 31)', () => {
  it('merge_conflict, merge_target_checked_out and merge_target_moved each refuse with one SEL line and move nothing', async () => {
    const { dir, repo } = makeRepo();
    const config = workspaceConfig(dir);
    const sel = new MemorySelSink(realClock);
    const { gateway, runner } = makeWorkspaceGateway(
      dir,
      config,
      makeWorkspaces(dir, config),
      undefined,
      [],
      sel,
    );
    open.push({ gateway, runner, dir });
    const spawned = gateway.spawn('mcp:m', {
      tasks: ['shared.txt=edited by a', 'shared.txt=edited by b'],
      isolation: 'worktree',
      cwd: repo,
    });
    if (!spawned.ok) throw new Error(JSON.stringify(spawned));
    const [a, b] = spawned.runs.map((r) => r.id) as [string, string];
    await eventsUntil(gateway, 'mcp:m', (e) => e.some((x) => x.batch_id === spawned.batch_id)).catch(
      (error) => {
        throw new Error(`${error}: ${JSON.stringify(gateway.list(operator).runs)}`);
      },
    );
    const codes = () =>
      sel.records.filter((l) => l.metadata?.code !== undefined).map((l) => l.metadata?.code);

    expect(await gateway.merge({ agent_id: a, target: 'side' }, operator)).toMatchObject({
      ok: true,
      merged: [a],
    });
    const side = sh(repo, 'rev-parse', 'side');
    expect(await gateway.merge({ agent_id: b, target: 'side' }, operator)).toMatchObject({
      ok: false,
      refusal: { code: 'merge_conflict', files: ['shared.txt'] },
    });
    expect(sh(repo, 'rev-parse', 'side')).toBe(side);

    expect(await gateway.merge({ agent_id: b, target: 'main' }, operator)).toMatchObject({
      ok: false,
      refusal: { code: 'merge_target_checked_out' },
    });

    // A target rewritten so it no longer holds the base the runs started from needs a person.
    writeFileSync(join(dir, 'x'), '');
    sh(repo, 'checkout', '-q', '--orphan', 'rewritten');
    sh(repo, 'commit', '-qm', 'unrelated history');
    sh(repo, 'checkout', '-q', 'main');
    expect(await gateway.merge({ agent_id: b, target: 'rewritten' }, operator)).toMatchObject({
      ok: false,
      refusal: { code: 'merge_target_moved' },
    });
    expect(codes()).toEqual(['merge_conflict', 'merge_target_checked_out', 'merge_target_moved']);

    // Hostile input: an invalid branch name and both ids at once are invalid_argument, never a git error.
    expect(await gateway.merge({ agent_id: b, target: '--delete' }, operator)).toMatchObject({
      ok: false,
      refusal: { code: 'invalid_argument', path: 'target' },
    });
    expect(await gateway.merge({ agent_id: b, batch_id: 'x', target: 't' }, operator)).toMatchObject({
      ok: false,
      refusal: { code: 'invalid_argument' },
    });
  }, 60_000);
});
