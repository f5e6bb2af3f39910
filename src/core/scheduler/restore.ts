import type { SchedulerEvent, SchedulerReply } from '../scheduler-types.js';
import { type Run, withEveryField } from '../types.js';
import { finish } from './ends.js';
import { restoredConversation } from './kept-session.js';
import type { SchedulerParts } from './parts.js';
import { DONE, newNode } from './run-node.js';

/**
 * Restart (DESIGN §4): the state a new process takes over from the store. Runs that were executing died
 * with the previous process and end `lost`, once; queued runs queue again in their order.
 */
export function restore(
  s: SchedulerParts,
  event: Extract<SchedulerEvent, { type: 'restore' }>,
  now: number,
): SchedulerReply {
  s.table.seq = Math.max(s.table.seq, event.nextSeq);
  // A run that held a permit but was never launched (the stagger held it back) created nothing: it
  // queues again, ahead of the queued runs it was admitted before, instead of ending lost.
  const unlaunched = event.executing.filter(
    (run) => run.status === 'starting' && run.launchedAt === undefined,
  );
  const executing = event.executing.filter((run) => !unlaunched.includes(run));
  const queued = [...event.queued, ...unlaunched].sort((a, b) => a.seq - b.seq);
  const queuedIds = new Set(queued.map((run) => run.id));
  // A kept conversation's session lived in a process of the previous gateway: an idle one whose agent
  // can reload sessions stays idle (its next turn reopens the session); any other answers
  // conversation_released (not not_found), with the reason. See kept-session.ts.
  for (const conversation of event.conversations ?? []) {
    if (conversation.state === 'released') continue;
    const restored = restoredConversation(conversation, queuedIds, now);
    if (restored.state === 'released') s.table.putConversation(restored);
    else s.table.conversations.set(restored.id, restored);
  }
  for (const wave of event.waves) {
    s.table.waves.set(wave.batchId, {
      parent: wave.parent,
      memberIds: wave.memberIds,
      remaining: wave.remaining,
    });
  }
  // Runs that were executing died with the previous process: each ends `lost`, once.
  for (const run of [...executing].sort((a, b) => b.depth - a.depth || a.seq - b.seq)) {
    // Its tree's other runs are gone too (each ends here), so it counts alone.
    const node = newNode(withEveryField(run), { live: 0 });
    s.table.track(node);
    finish(s, node, 'lost', now, undefined, 'the gateway restarted while this run was executing');
  }
  for (const run of queued) {
    const record: Run = { ...withEveryField(run), status: 'queued' };
    const node = newNode(record, { live: 0 });
    s.table.track(node);
    if (run.status !== 'queued') s.table.persist(record);
    s.table.enqueue(node);
    // Its command id is answered from the store (`known`), which holds the whole admission.
  }
  return DONE;
}
