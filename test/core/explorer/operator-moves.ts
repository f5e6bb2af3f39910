import { isTerminal } from '../../../src/core/types.js';
import type { Move, MoveKind } from './move.js';
import { outcome } from './reply.js';

/** Cancelling each live run: it and its live descendants end or are stopped; the queue only loses it. */
export const cancelRuns: MoveKind = (world) =>
  world.live().map(
    (run): Move => ({
      label: `cancel ${run.id}`,
      progress: false,
      apply: (w) => {
        const subtree = w.liveSubtree(run.id);
        const wasQueued = run.status === 'queued';
        const othersQueued = w.queue.filter((id) => id !== run.id);
        w.now += 1;
        const result = w.step({ type: 'cancel', runId: run.id });
        if (!result.reply.ok) w.fail(`cancel of live ${run.id} answered ${outcome(result.reply)}`);
        for (const id of subtree) {
          if (w.isLive(id) && !w.stopping.has(id)) w.fail(`cancel of ${run.id} left ${id} running unstopped`);
        }
        if (wasQueued && w.records.get(run.id)?.status !== 'cancelled')
          w.fail(`cancelled queued ${run.id} ended ${w.records.get(run.id)?.status}`);
        // The others keep their order; only the head may have left, for a permit the cancel freed.
        const after = w.scheduler.queuedIds();
        if (!isSuffix(after, othersQueued))
          w.fail(`cancel of ${run.id} reordered the queue: [${othersQueued}] → [${after}]`);
        for (const id of othersQueued) if (!w.isLive(id)) w.fail(`cancel of ${run.id} ended queued ${id}`);
      },
    }),
  );

/** Steering each live run: accepted only while it runs, and it never touches a permit or a record. */
export const steerRuns: MoveKind = (world) =>
  world.live().map(
    (run): Move => ({
      label: `steer ${run.id}`,
      progress: false,
      apply: (w) => {
        const permits = [...w.scheduler.permitHolders()].join(';');
        const steerable = run.status === 'running' && !w.stopping.has(run.id);
        w.now += 1;
        const result = w.step({ type: 'steer', runId: run.id, message: 'go', mode: 'interrupt' });
        if (result.reply.ok !== steerable)
          w.fail(
            `steer of ${run.id} (${run.status}${w.stopping.has(run.id) ? ', stopping' : ''}) answered ${outcome(result.reply)}`,
          );
        if ([...w.scheduler.permitHolders()].join(';') !== permits)
          w.fail(`steering ${run.id} changed the permits`);
        const kinds = result.commands.map((c) => c.type);
        if (kinds.some((k) => k !== 'steer') || kinds.length !== (steerable ? 1 : 0))
          w.fail(`steering ${run.id} commanded [${kinds}]`);
      },
    }),
  );

/** Releasing each conversation: only an idle one is released; a busy one is refused. */
export const releaseConversations: MoveKind = (world) =>
  [...world.conversations.keys()].map(
    (conversationId): Move => ({
      label: `release ${conversationId}`,
      progress: false,
      apply: (w) => {
        const conversation = w.conversations.get(conversationId);
        if (!conversation) return;
        const expected = {
          busy: 'conversation_busy',
          idle: 'ok',
          released: 'conversation_released',
          ended: undefined,
        }[conversation.state];
        w.now += 1;
        const stored = w.scheduler.conversation(conversationId)
          ? undefined
          : w.storedConversations.get(conversationId);
        const result = w.step({
          type: 'release',
          conversationId,
          reason: 'requested',
          ...(stored ? { stored } : {}),
        });
        const got = outcome(result.reply);
        if (expected !== undefined && got !== expected)
          w.fail(`release of ${conversation.state} ${conversationId} answered ${got}, expected ${expected}`);
        if (result.reply.ok) conversation.state = 'released';
        if (result.commands.some((c) => c.type === 'persist' && isTerminal(c.run.status)))
          w.fail(`release of ${conversationId} ended a run`);
      },
    }),
  );

function isSuffix(part: string[], whole: string[]): boolean {
  const offset = whole.length - part.length;
  return offset >= 0 && part.every((id, i) => whole[offset + i] === id);
}
