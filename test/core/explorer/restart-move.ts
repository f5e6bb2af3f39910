import { MemoryStore } from '../../../src/store/memory-store.js';
import type { MoveContext, MoveKind } from './move.js';
import type { World } from './world.js';

/**
 * A new gateway process: the old one's runners die with it, and a fresh scheduler is restored from
 * what the store holds (the records and conversations the commands persisted, read back through the
 * real store's `restartState`, as the restart property test does). Checks: queued runs queue again in
 * their order, and every run that was executing ends `lost`, once, with its event.
 */
export const restartGateway: MoveKind = (world, { bounds }) =>
  world.restarts >= bounds.maxRestarts ? [] : [{ label: 'restart', progress: false, apply: restart }];

function restart(world: World, context: MoveContext): void {
  const store = new MemoryStore();
  store.apply({
    epoch: store.nextEpoch(),
    newRuns: [...world.records.values()].map((run) => ({ run, spec: { task: 'x', agent: run.agent } })),
    conversations: [...world.storedConversations.values()],
  });
  const state = store.restartState();
  // A run that held a permit but was never launched (the stagger held it) created nothing: it queues
  // again with the queued runs, in admission order; every other executing run ends lost.
  const unlaunched = state.executing
    .map((r) => r.run)
    .filter((run) => run.status === 'starting' && run.launchedAt === undefined);
  const executing = state.executing.map((r) => r.run.id).filter((id) => !unlaunched.some((u) => u.id === id));
  const requeued = [...state.queued, ...unlaunched].sort((a, b) => a.seq - b.seq).map((run) => run.id);
  world.restarts += 1;
  world.scheduler = context.makeScheduler(world.limits);
  world.journal?.push('restart: a new Scheduler(limits) restores what the store holds');
  world.launched.clear();
  world.stopping.clear();
  world.queue = requeued;
  // Every session died with the old process: no conversation can be continued any more, except one
  // whose run is queued again, which never had a session and stays busy until that run ends.
  for (const conversation of world.conversations.values()) {
    if (conversation.state === 'released') continue;
    conversation.state = requeued.includes(conversation.latest) ? 'busy' : 'released';
  }
  world.now += 1;
  world.step({
    type: 'restore',
    queued: state.queued,
    executing: state.executing.map((r) => r.run),
    waves: state.waves,
    nextSeq: state.nextSeq,
    conversations: state.conversations,
  });
  for (const id of executing) {
    const run = world.records.get(id);
    if (run?.status !== 'lost')
      world.fail(`${id} was executing at the restart and ended ${run?.status}, not lost`);
  }
  // The old runners are gone: nothing can be running until the new process's runner says so.
  for (const run of world.live())
    if (run.status === 'running') world.fail(`${run.id} is running right after the restart`);
}
