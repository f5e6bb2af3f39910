import { describe, expect, it } from 'vitest';
import { runningLine } from '../../src/gateway/answers.js';
import { fakeWorld } from '../helpers/fake-gateway.js';

/** What `crew list` and `spawn_list`'s header read: the answer as JSON. */
const asJson = (value: unknown): Record<string, unknown> => JSON.parse(JSON.stringify(value));

/**
 * The list header (`crew list`, `spawn_list`'s first line) on one host (issue 30): a top-level run that
 * ended while its nested runs go on still holds its permit, and the header says so, or a cap that is full
 * reads as "running 0 at cap 1".
 */
describe('the list header counts permits held by ended parents for their running children', () => {
  it('says so while a child runs on after its parent ended, and no more once the child ends', async () => {
    const world = fakeWorld({ cap: 1, 'agent.subagent_max_depth': 2 });
    const parent = await world.gateway.admit('cli:p', { task: 'sleep=100' });
    const parentId = parent.ok ? parent.runs[0]!.id : '';
    const child = await world.gateway.admit(`run:${parentId}`, { task: 'hang' });
    const childId = child.ok ? child.runs[0]!.id : '';
    await world.clock.advance(200);
    expect(world.gateway.statusOf(parentId)).toBe('completed');
    expect(world.gateway.statusOf(childId)).toBe('running');

    const list = world.gateway.list({ kind: 'operator' });
    expect(list).toMatchObject({ running_top_level: 0, running_nested: 1, permits_held_by_ended_parents: 1 });
    expect(runningLine(asJson(list))).toBe(
      'running 0 (+1 nested) at cap 1, 1 permit held by an ended parent for its running children',
    );
    // The held permit is why the next top-level run waits.
    const next = await world.gateway.admit('cli:p', { task: 'x' });
    expect(next).toMatchObject({ ok: true, runs: [{ status: 'queued' }] });

    world.gateway.cancel(childId, { kind: 'operator' });
    await world.clock.advance(0);
    const after = world.gateway.list({ kind: 'operator' });
    expect(after.permits_held_by_ended_parents).toBe(0);
    expect(runningLine(asJson(after))).not.toMatch(/ended parent/);
  });

  it('names several', () => {
    expect(
      runningLine({ running_top_level: 1, running_nested: 3, cap: 3, permits_held_by_ended_parents: 2 }),
    ).toBe('running 1 (+3 nested) at cap 3, 2 permits held by ended parents for their running children');
  });
});
