import { describe, expect, it } from 'vitest';
import { fakeWorld } from '../helpers/fake-gateway.js';

/**
 * spawn_continue is the next turn of the same conversation (issue 29): it keeps the context scope its
 * first run was given, so a conversation started with include_memory: false never gets the memory
 * files prepended on a later turn.
 */
describe('spawn_continue keeps the original run’s context scope', () => {
  it.each([
    [{ include_memory: false }, { includeMemory: false }],
    [
      { include_lessons: false, include_project: true },
      { includeLessons: false, includeProject: true },
    ],
    [
      { include_memory: false, include_lessons: false, include_project: false },
      { includeMemory: false, includeLessons: false, includeProject: false },
    ],
  ])('started with %o: every continuation has %o', async (args, expected) => {
    const world = fakeWorld();
    const first = await world.gateway.admit('cli:p', { task: 'sleep=10 first', keep: true, ...args });
    expect(first.ok).toBe(true);
    const conversation = first.ok ? first.runs[0]!.id : '';
    await world.clock.advance(50);
    for (const task of ['sleep=10 second', 'sleep=10 third']) {
      const next = world.gateway.continue('cli:p', { conversation, task });
      expect(next.ok).toBe(true);
      const id = next.ok ? next.runs[0]!.id : '';
      expect(world.store.run(id)?.spec).toMatchObject(expected);
      await world.clock.advance(50);
    }
  });

  it('a conversation started with the defaults stays on the defaults', async () => {
    const world = fakeWorld();
    const first = await world.gateway.admit('cli:p', { task: 'sleep=10 first', keep: true });
    const conversation = first.ok ? first.runs[0]!.id : '';
    await world.clock.advance(50);
    const next = world.gateway.continue('cli:p', { conversation, task: 'sleep=10 again' });
    const spec = world.store.run(next.ok ? next.runs[0]!.id : '')?.spec;
    expect(spec?.includeMemory).toBeUndefined();
    expect(spec?.includeLessons).toBeUndefined();
  });
});
