import type { SchedulerCommand } from '../../../src/core/scheduler-types.js';
import { isTerminal, type Run } from '../../../src/core/types.js';
import type { World } from './world.js';

/**
 * Carries one command into the model (the store's records, the outbox, the runner's live set) and
 * checks what can be judged from the command alone: a run changes only while live, a permit goes to
 * the head of the queue, nothing launches twice or after it ended, every run is announced once and a
 * wave member only in its wave's one digest.
 */
export function observe(world: World, command: SchedulerCommand): void {
  switch (command.type) {
    case 'persist':
      record(world, command.run);
      return;
    case 'persist_conversation':
      world.storedConversations.set(command.conversation.id, Object.freeze({ ...command.conversation }));
      return;
    case 'launch': {
      const run = world.records.get(command.runId);
      if (run?.status !== 'starting')
        world.fail(
          `launch of ${command.runId}, recorded ${run?.status ?? 'never'} (only a starting run launches)`,
        );
      if (world.launched.has(command.runId)) world.fail(`run ${command.runId} launched twice`);
      world.launched.add(command.runId);
      return;
    }
    case 'stop':
      if (!world.launched.has(command.runId)) world.fail(`stop of ${command.runId}, which is not executing`);
      world.stopping.set(command.runId, command.reason);
      return;
    case 'announce':
      announce(world, command.announcement);
      return;
    case 'steer':
    case 'release_session':
    case 'sel':
      return;
  }
}

function record(world: World, run: Run): void {
  const previous = world.records.get(run.id);
  if (previous && isTerminal(previous.status)) {
    world.fail(`run ${run.id} recorded ${run.status} after it ended ${previous.status}`);
    return;
  }
  if (!previous && run.status === 'queued') {
    if (run.depth > 1) world.fail(`nested run ${run.id} queued (nested runs take no permit)`);
    world.queue.push(run.id);
  }
  if (previous?.status === 'queued' && !isTerminal(run.status)) {
    if (world.queue[0] !== run.id)
      world.fail(`FIFO broken: ${run.id} left the queue while ${world.queue[0]} was ahead of it`);
    world.queue = world.queue.filter((id) => id !== run.id);
  }
  if (isTerminal(run.status)) {
    world.queue = world.queue.filter((id) => id !== run.id);
    world.launched.delete(run.id);
    world.stopping.delete(run.id);
    const conversationId = world.conversationOf(run);
    const conversation = conversationId === undefined ? undefined : world.conversations.get(conversationId);
    if (conversation?.latest === run.id && conversation.state === 'busy')
      conversation.state = run.status === 'completed' ? 'idle' : 'ended';
  }
  // Frozen: records are replaced, never changed, so forked states share them.
  world.records.set(run.id, Object.freeze({ ...run }));
}

function announce(
  world: World,
  announcement: Extract<SchedulerCommand, { type: 'announce' }>['announcement'],
): void {
  const named = announcement.kind === 'digest' ? announcement.runIds : [announcement.runId];
  for (const id of named) {
    const run = world.records.get(id);
    if (!run || !isTerminal(run.status)) world.fail(`run ${id} announced before it ended`);
    if (world.announced.has(id)) world.fail(`run ${id} announced twice`);
    world.announced.add(id);
  }
  if (announcement.kind === 'completion') {
    const run = world.records.get(announcement.runId);
    if (run?.batchId !== undefined)
      world.fail(
        `wave member ${run.id} got its own completion event instead of a place in ${run.batchId}'s digest`,
      );
    if (run && announcement.parent !== run.parent)
      world.fail(`completion of ${run.id} sent to ${announcement.parent}, not its parent ${run.parent}`);
    return;
  }
  const wave = world.waves.get(announcement.batchId);
  if (!wave) {
    world.fail(`digest for unknown wave ${announcement.batchId}`);
    return;
  }
  if (wave.digested) world.fail(`wave ${announcement.batchId} digested twice`);
  wave.digested = true;
  if (announcement.parent !== wave.parent)
    world.fail(`digest of ${announcement.batchId} sent to ${announcement.parent}, not ${wave.parent}`);
  const got = [...announcement.runIds].sort().join(',');
  const want = [...wave.members].sort().join(',');
  if (got !== want) world.fail(`digest of ${announcement.batchId} names [${got}], the wave is [${want}]`);
}
