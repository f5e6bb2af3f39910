import type { Conversation, KeptSession } from '../scheduler-types.js';
import type { RunId } from '../types.js';
import type { SchedulerParts } from './parts.js';

/**
 * Kept conversations across a restart (issue 29): the agent session behind a conversation is recorded
 * when its turn starts, and a restart keeps an idle conversation whose agent can reopen its session
 * (ACP `loadSession`); the runner reopens it with `session/load` when the next turn starts.
 */

/** Records on its conversation the session a kept run's turn runs in (the runner reported it). */
export function noteSession(s: SchedulerParts, runId: RunId, session: KeptSession): void {
  const node = s.table.nodes.get(runId);
  if (!node) return;
  const conversationId = node.run.conversationId ?? (node.run.keep ? node.run.id : undefined);
  if (conversationId === undefined) return;
  const conversation = s.table.conversations.get(conversationId);
  if (!conversation || conversation.latestRunId !== runId) return;
  const known = conversation.session;
  if (known?.id === session.id && known.cwd === session.cwd && known.loadable === session.loadable) return;
  conversation.session = { ...session };
  s.table.putConversation(conversation);
}

/**
 * What a new process makes of a kept conversation the previous one left (not released): busy while its
 * run is still queued (it has no session yet); idle again when it was idle and its agent can reload its
 * session (its TTL still counts from its last turn); otherwise released, with the reason the caller reads
 * in `conversation_released`.
 */
export function restoredConversation(
  conversation: Conversation,
  queued: ReadonlySet<RunId>,
  now: number,
): Conversation {
  if (queued.has(conversation.latestRunId)) return { ...conversation, state: 'busy' };
  if (conversation.state === 'idle' && conversation.session?.loadable === true) return { ...conversation };
  return {
    ...conversation,
    state: 'released',
    releasedReason: releasedReasonAtRestart(conversation),
    lastUsedAt: now,
  };
}

function releasedReasonAtRestart(conversation: Conversation): string {
  if (conversation.state === 'busy') return 'the gateway restarted while its turn ran, and its session ended';
  if (conversation.session !== undefined) {
    return `the gateway restarted and its session ended: agent "${conversation.agent}" cannot reload sessions (it does not advertise ACP loadSession)`;
  }
  return 'the gateway restarted and its session ended';
}
