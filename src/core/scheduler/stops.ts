import * as refusals from '../refusals.js';
import type { SchedulerEvent, SchedulerReply } from '../scheduler-types.js';
import type { RunId, RunStatus } from '../types.js';
import { finish } from './ends.js';
import type { SchedulerParts } from './parts.js';
import { DONE, refused } from './run-node.js';

/**
 * Stops: cancel, timeout, the turn and token budgets, steer and release. A run not yet launched ends at
 * once; a launched one is asked to stop, and the first stop asked decides how it ends when the runner
 * confirms ({@link finish}).
 */

/** A tool call counts against the run's budget; at the budget the turn is stopped (first stop wins). */
export function toolCall(s: SchedulerParts, runId: RunId): SchedulerReply {
  const node = s.table.nodes.get(runId);
  if (!node || node.run.launchedAt === undefined) return refused(refusals.notLive(runId, undefined));
  node.toolCalls++;
  const budget = node.run.maxTurns ?? 0;
  if (budget > 0 && node.toolCalls >= budget && node.stopping === undefined) {
    node.stopping = 'turn_limit';
    s.table.commands.push({ type: 'stop', runId, reason: 'turn_limit' });
  }
  return DONE;
}

/**
 * A model call's tokens count against the run's budget; past it the turn is stopped, and the run ends
 * `completed` with `stop: token_budget` (first stop wins).
 */
export function countTokens(s: SchedulerParts, runId: RunId, tokens: number): SchedulerReply {
  const node = s.table.nodes.get(runId);
  if (!node || node.run.launchedAt === undefined) return refused(refusals.notLive(runId, undefined));
  node.tokens += Math.max(0, tokens);
  const budget = node.run.maxTokens ?? 0;
  if (budget > 0 && node.tokens > budget && node.stopping === undefined) {
    node.stopping = 'token_budget';
    s.table.commands.push({ type: 'stop', runId, reason: 'token_budget' });
  }
  return DONE;
}

/** A launch that never began: nothing runs, so the run ends `failed` at once (its permit returns). */
export function startFailed(s: SchedulerParts, runId: RunId, error: string, now: number): SchedulerReply {
  const node = s.table.nodes.get(runId);
  if (!node || node.run.launchedAt === undefined) return refused(refusals.notLive(runId, undefined));
  finishSubtree(s, node.run.id, error, now);
  return DONE;
}

export function cancel(
  s: SchedulerParts,
  runId: RunId,
  ended: RunStatus | undefined,
  now: number,
): SchedulerReply {
  const node = s.table.nodes.get(runId);
  if (!node) return refused(refusals.notLive(runId, ended));
  // Descendants first, so a parent's end never precedes its children's in the record.
  for (const id of s.table.subtree(runId).reverse()) stopOrEnd(s, id, 'cancel', now);
  return DONE;
}

/** A start failure of a run that may already have children: they are cancelled, it fails. */
function finishSubtree(s: SchedulerParts, runId: RunId, error: string, now: number): void {
  for (const id of s.table.subtree(runId).reverse()) {
    if (id !== runId) stopOrEnd(s, id, 'cancel', now);
  }
  const node = s.table.nodes.get(runId);
  if (node) finish(s, node, 'failed', now, undefined, error);
}

function stopOrEnd(s: SchedulerParts, runId: RunId, reason: 'cancel' | 'timeout', now: number): void {
  const node = s.table.nodes.get(runId);
  if (!node || node.stopping !== undefined) return;
  if (node.run.launchedAt === undefined) {
    // Queued, or holding a permit the stagger has not let start: nothing was created, end it now.
    finish(s, node, 'cancelled', now);
    return;
  }
  node.stopping = reason;
  s.table.commands.push({ type: 'stop', runId, reason });
}

/** Every run past its deadline is stopped `timeout`, its descendants cancelled. */
export function expireDeadlines(s: SchedulerParts, now: number): void {
  for (let node = s.deadlines.takeDue(now); node; node = s.deadlines.takeDue(now)) {
    const runId = node.run.id;
    for (const id of s.table.subtree(runId).reverse())
      stopOrEnd(s, id, id === runId ? 'timeout' : 'cancel', now);
  }
}

export function steer(
  s: SchedulerParts,
  runId: RunId,
  message: string,
  mode: 'interrupt' | 'follow_up',
  ended: RunStatus | undefined,
): SchedulerReply {
  const node = s.table.nodes.get(runId);
  if (!node) return refused(refusals.notLive(runId, ended));
  if (node.run.status !== 'running' || node.stopping !== undefined) {
    return refused(refusals.notSteerable(runId, node.stopping ? 'stopping' : node.run.status));
  }
  // Steering reaches the live run directly: it takes no permit and waits for nothing.
  s.table.commands.push({ type: 'steer', runId, message, mode });
  return DONE;
}

export function release(
  s: SchedulerParts,
  event: Extract<SchedulerEvent, { type: 'release' }>,
  now: number,
): SchedulerReply {
  const { conversationId, reason } = event;
  const conversation =
    s.table.conversations.get(conversationId) ??
    (event.stored?.id === conversationId ? event.stored : undefined);
  if (!conversation) return refused(refusals.noConversation(conversationId));
  if (conversation.state === 'released') return refused(refusals.alreadyReleased(conversationId));
  if (conversation.state === 'busy') {
    return refused(refusals.releaseBusy(conversationId, conversation.latestRunId));
  }
  conversation.state = 'released';
  conversation.releasedReason = reason;
  conversation.lastUsedAt = now;
  s.table.putConversation(conversation);
  s.table.commands.push({ type: 'release_session', conversationId, agent: conversation.agent });
  s.table.sel('conversation_released', { conversation: conversationId, reason });
  return DONE;
}
