import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { SpawnResult } from '../../src/gateway/gateway.js';
import { fakeWorld } from '../helpers/fake-gateway.js';

/**
 * Issue 28, item 4: a queued run's `cwd` is judged at admission and again at start. A real directory under
 * the allowed root, swapped for a symlink that leads outside while the run waits in the queue, must not be
 * where the run starts: it ends `failed` (it was admitted, so it ends once, with one completion event),
 * its error naming `cwd_not_allowed`, and no runner ever sees it.
 */

const op = { kind: 'operator' } as const;

function idsOf(result: SpawnResult): string[] {
  if (!result.ok) throw new Error(`refused: ${JSON.stringify(result)}`);
  return result.runs.map((run) => run.id);
}

describe('cwd judged again when a queued run starts', () => {
  const root = mkdtempSync(join(tmpdir(), 'crew-cwd-start-'));
  const allowed = join(root, 'allowed');
  mkdirSync(join(root, 'outside'), { recursive: true });
  mkdirSync(allowed, { recursive: true });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('a directory swapped for a symlink out while queued: the run ends failed cwd_not_allowed, never started', async () => {
    const work = join(allowed, 'work');
    mkdirSync(work);
    const world = fakeWorld({ 'agent.subagent_cwd_allowed_roots': [allowed] });
    const { gateway, runner, store, clock } = world;
    const holders = idsOf(gateway.spawn('mcp:p', { tasks: ['hang a', 'hang b', 'hang c'] }));
    const [queued] = idsOf(gateway.spawn('mcp:p', { task: 'the queued one', cwd: work }));
    expect(store.run(queued!)?.run.status).toBe('queued');
    // While it waits: the directory goes, and a link to outside takes its name.
    rmSync(work, { recursive: true });
    symlinkSync(join(root, 'outside'), work);
    gateway.cancel(holders[0]!, op);
    await clock.advance(10);
    const run = store.run(queued!)?.run;
    expect(run?.status).toBe('failed');
    expect(run?.error).toMatch(
      /^cwd_not_allowed at start: cwd .*work resolves to .*outside, outside the allowed roots/,
    );
    expect(runner.started.map((request) => request.runId)).not.toContain(queued);
    expect(runner.started.some((request) => request.cwd.includes('outside'))).toBe(false);
    // Exactly one completion event for it.
    const events = store.outbox({}).filter((event) => event.runIds.includes(queued!));
    expect(events).toHaveLength(1);
    // The permit it would have taken went back: the queue moves on.
    const [next] = idsOf(gateway.spawn('mcp:p', { task: 'next' }));
    await clock.advance(10);
    expect(store.run(next!)?.run.status).toBe('running');
    await gateway.close();
  });

  it('a directory left alone starts where it resolved (its real path)', async () => {
    const work = join(allowed, 'stays');
    mkdirSync(work);
    const world = fakeWorld({ 'agent.subagent_cwd_allowed_roots': [allowed] });
    const { gateway, runner, store, clock } = world;
    const holders = idsOf(gateway.spawn('mcp:p', { tasks: ['hang a', 'hang b', 'hang c'] }));
    const [queued] = idsOf(gateway.spawn('mcp:p', { task: 'hang queued', cwd: work }));
    gateway.cancel(holders[0]!, op);
    await clock.advance(10);
    expect(store.run(queued!)?.run.status).toBe('running');
    expect(runner.started.find((request) => request.runId === queued)?.cwd).toBe(realpathSync(work));
    await gateway.close();
  });

  it('a run without a cwd argument (the parent directory) is not judged against the roots at start', async () => {
    const world = fakeWorld({ 'agent.subagent_cwd_allowed_roots': [allowed] });
    const { gateway, store, clock } = world;
    const [id] = idsOf(gateway.spawn('mcp:p', { task: 'hang' }));
    await clock.advance(10);
    expect(store.run(id!)?.run.status).toBe('running');
    await gateway.close();
  });
});
