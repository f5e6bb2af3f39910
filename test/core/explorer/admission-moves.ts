import type { SchedulerEvent, SpawnMember, StepResult } from '../../../src/core/scheduler-types.js';
import { isTerminal, type ParentKey, type Run, type RunId } from '../../../src/core/types.js';
import { deepClone } from './deep-clone.js';
import type { Move, MoveKind } from './move.js';
import { outcome } from './reply.js';
import { schedulerKey } from './state-key.js';
import type { World } from './world.js';

/** Single top-level spawns from every parent, kept and not. */
export const spawnSingles: MoveKind = (world, { bounds }) => {
  if (world.nextRun > bounds.maxRuns) return [];
  return bounds.parents.flatMap((parent) =>
    (bounds.keep ? [false, true] : [false]).map(
      (keep): Move => ({
        label: `spawn ${parent}${keep ? ' keep' : ''}`,
        progress: false,
        apply: (w) => admit(w, parent, 1, { keep, wave: false, maxTurns: bounds.maxTurns }),
      }),
    ),
  );
};

/** Top-level waves of each configured size from every parent. */
export const spawnWaves: MoveKind = (world, { bounds }) =>
  bounds.parents.flatMap((parent) =>
    bounds.waveSizes
      .filter((size) => world.nextRun - 1 + size <= bounds.maxRuns)
      .map(
        (size): Move => ({
          label: `wave ${parent} ×${size}`,
          progress: false,
          apply: (w) => admit(w, parent, size, { keep: false, wave: true, maxTurns: bounds.maxTurns }),
        }),
      ),
  );

/** Spawns by a running run (parent `run:<id>`); optionally by one being stopped, a race its runner can lose. */
export const spawnNested: MoveKind = (world, { bounds }) =>
  world
    .live()
    .filter((run) => run.status === 'running' && (bounds.spawnWhileStopping || !world.stopping.has(run.id)))
    .flatMap((run) =>
      bounds.nestedSizes
        .filter((size) => world.nextRun - 1 + size <= bounds.maxRuns)
        .map(
          (size): Move => ({
            label: `nested run:${run.id} ×${size}`,
            progress: false,
            apply: (w) =>
              admit(w, `run:${run.id}`, size, { keep: false, wave: size > 1, maxTurns: bounds.maxTurns }),
          }),
        ),
    );

/** Continuing each conversation, whatever its state: busy and released ones must refuse. */
export const continueConversations: MoveKind = (world, { bounds }) => {
  if (world.nextRun > bounds.maxRuns) return [];
  return [...world.conversations.keys()].map(
    (conversationId): Move => ({
      label: `continue ${conversationId}`,
      progress: false,
      apply: (w) => continueConversation(w, conversationId),
    }),
  );
};

function admit(
  world: World,
  parent: ParentKey,
  size: number,
  options: { keep: boolean; wave: boolean; maxTurns: number },
): void {
  const members: SpawnMember[] = Array.from({ length: size }, (_, i) => ({
    id: `r${world.nextRun + i}`,
    agent: 'sim',
    keep: options.keep,
    ...(options.maxTurns > 0 ? { maxTurns: options.maxTurns } : {}),
  }));
  const ids = members.map((m) => m.id);
  const batchId = options.wave ? `w${world.nextBatch}` : undefined;
  // Known before the step, so the digest check sees the wave if a member ends inside it.
  if (batchId !== undefined) world.waves.set(batchId, { parent, members: ids, digested: false });
  const expected = expectedAdmission(world, parent, size, options.wave);
  world.now += 1;
  const result = world.step({
    type: 'spawn',
    parent,
    members,
    ...(batchId !== undefined ? { batchId } : {}),
  });
  judgeAdmission(world, `spawn of [${ids}] by ${parent}`, expected, result);
  if (!result.reply.ok) {
    if (batchId !== undefined) world.waves.delete(batchId);
    return;
  }
  world.nextRun += size;
  if (batchId !== undefined) world.nextBatch += 1;
  for (const id of ids) {
    if (!world.records.has(id)) world.fail(`admitted run ${id} was never recorded`);
    if (options.keep) world.conversations.set(id, { parent, latest: id, state: 'busy' });
  }
}

function continueConversation(world: World, conversationId: string): void {
  const conversation = world.conversations.get(conversationId);
  if (!conversation) return;
  const id = `r${world.nextRun}`;
  const expected =
    conversation.state === 'busy'
      ? 'conversation_busy'
      : conversation.state === 'released'
        ? 'conversation_released'
        : conversation.state === 'idle'
          ? expectedAdmission(world, conversation.parent, 1, false)
          : undefined; // ended other than completed: the design leaves the answer open
  world.now += 1;
  // As the gateway does: a conversation the scheduler forgot (released) comes with the store's record.
  const stored = world.scheduler.conversation(conversationId)
    ? undefined
    : world.storedConversations.get(conversationId);
  const result = world.step({
    type: 'continue',
    parent: conversation.parent,
    conversationId,
    id,
    ...(stored ? { stored } : {}),
  });
  if (expected !== undefined) judgeAdmission(world, `continue of ${conversationId}`, expected, result);
  if (!result.reply.ok) return;
  world.nextRun += 1;
  const run = world.records.get(id);
  if (run?.conversationId !== conversationId)
    world.fail(`continue of ${conversationId} admitted ${id} outside the conversation`);
  conversation.latest = id;
  conversation.state = 'busy';
}

/**
 * What admission should answer (DESIGN §3, in its order): `ok`, or the refusal code. Depth, then the
 * children bound for a nested spawn; the queue bounds for the members of a top-level spawn that would
 * queue (a wave is judged whole).
 */
function expectedAdmission(world: World, parent: ParentKey, size: number, wave: boolean): string {
  const { limits } = world;
  if (parent.startsWith('run:')) {
    const parentRun = world.records.get(parent.slice(4)) as Run;
    // A parent told to stop may not spawn: its child would escape the cascade.
    if (world.stopping.has(parentRun.id)) return 'not_running';
    if (parentRun.depth + 1 > limits.maxDepth) return 'depth_exceeded';
    const children = world.live().filter((r) => r.parent === parent).length;
    return children + size > limits.maxChildren ? 'children_limit' : 'ok';
  }
  const inFlight = new Set(world.live().flatMap((r) => (r.status === 'queued' ? [] : [r.rootId]))).size;
  const free = world.queue.length > 0 ? 0 : Math.max(0, limits.cap - inFlight);
  const wouldQueue = Math.max(0, size - free);
  if (wouldQueue === 0) return 'ok';
  const queuedWave = world.queue.filter((id) => world.records.get(id)?.batchId !== undefined).length;
  const queuedSingles = world.queue.length - queuedWave;
  if (!wave) return queuedSingles >= limits.maxQueued ? 'queue_full' : 'ok';
  return queuedWave + wouldQueue > limits.maxQueuedWaveMembers ? 'queue_full' : 'ok';
}

/** The answer matches the expectation, and a refusal admitted nothing (a wave is refused whole). */
function judgeAdmission(world: World, what: string, expected: string, result: StepResult): void {
  const got = outcome(result.reply);
  if (got !== expected) world.fail(`${what} answered ${got}, expected ${expected}`);
  if (!result.reply.ok) {
    const admitted = result.commands.flatMap((c) =>
      c.type === 'persist' && !isTerminal(c.run.status) ? [c.run.id as RunId] : [],
    );
    if (admitted.length > 0) world.fail(`${what} was refused but recorded [${admitted}]`);
  }
}

/**
 * An admission whose store transaction fails: the gateway rolls the scheduler back, which must leave
 * it exactly as before (the runs were never admitted). The gateway ticks first when a wake-up is due,
 * so the move applies only when none is. A self-loop: the world's model sees nothing happen.
 */
export const failedAdmissions: MoveKind = (world, context) => {
  if ((world.scheduler.nextWakeAt() ?? Number.POSITIVE_INFINITY) <= world.now) return [];
  const spawns = [
    ...spawnSingles(world, context),
    ...spawnWaves(world, context),
    ...spawnNested(world, context),
  ];
  return spawns.map(
    (spawn): Move => ({
      label: `${spawn.label}, its write fails`,
      progress: false,
      apply: (w) => {
        const before = schedulerKey(w);
        const probe = deepClone(w);
        probe.journal = undefined;
        // Run the spawn on a copy to learn the event, then replay that event on the real scheduler.
        let event: SchedulerEvent | undefined;
        const step = probe.step.bind(probe);
        probe.step = (e) => {
          event = e;
          return step(e);
        };
        spawn.apply(probe, context);
        if (event === undefined) return;
        const result = w.scheduler.step(event, w.now);
        if (!result.rollback) {
          if (result.reply.ok && result.reply.kind === 'admitted')
            w.fail(`${spawn.label} admitted runs and offered no rollback`);
          return;
        }
        result.rollback();
        const after = schedulerKey(w);
        if (after !== before) w.fail(`${spawn.label}: the rollback left the scheduler changed`);
      },
    }),
  );
};
