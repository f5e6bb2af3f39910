import * as refusals from '../refusals.js';
import type { SchedulerEvent, SchedulerReply, StopCause } from '../scheduler-types.js';
import { assertNever, type EndedRun, parentRunId, type StopNote, type TerminalStatus } from '../types.js';
import type { SchedulerParts } from './parts.js';
import { commandKey, DONE, type Node, refused } from './run-node.js';

/**
 * Ends: the one terminal transition every run goes through exactly once ({@link finish}), with what it
 * settles: the record, the announcement (a wave member's through its wave's one digest), the permit when
 * the tree is done, the provider's cap, the conversation and the command id.
 */
export function runnerEnded(
  s: SchedulerParts,
  event: Extract<SchedulerEvent, { type: 'ended' }>,
  now: number,
): SchedulerReply {
  const node = s.table.nodes.get(event.runId);
  if (!node || node.run.launchedAt === undefined) {
    // A second report, or one for a run that never launched: nothing to end twice.
    return refused(refusals.notLive(event.runId, undefined));
  }
  const outcome = endOutcome(node.stopping, event);
  finish(s, node, outcome.status, now, outcome.stop, outcome.error);
  return DONE;
}

/** The one terminal transition: record, announce, free the permit when the tree is done. */
export function finish(
  s: SchedulerParts,
  node: Node,
  status: TerminalStatus,
  now: number,
  stop?: StopNote,
  error?: string,
): void {
  const { table } = s;
  const run = node.run;
  table.untrack(node);
  table.dequeue(node);
  if (run.status === 'starting' && run.launchedAt === undefined) {
    s.permits.pendingLaunch = s.permits.pendingLaunch.filter((id) => id !== run.id);
  }
  s.provider.runEnded(run, status, now);
  const ended: EndedRun = { ...run, status, endedAt: now };
  if (stop !== undefined) ended.stop = stop;
  if (error !== undefined) ended.error = error;
  table.persist(ended);

  const parentId = parentRunId(run.parent);
  if (parentId !== undefined) table.dropChild(parentId, run.id);
  // The root may end before its descendants; its permit waits for the last of them.
  if (--node.tree.live <= 0) s.permits.release(s, run.rootId);

  announceEnd(s, ended);
  updateConversationOnEnd(s, ended, now);
  releaseCommand(s, ended);
  const metadata: Record<string, unknown> = { run_id: run.id, status };
  if (stop) metadata.stop = stop;
  if (error) metadata.error = error;
  table.sel('ended', metadata);
}

/** The command id's entry goes with the last of its runs. */
function releaseCommand(s: SchedulerParts, run: EndedRun): void {
  if (run.commandId === undefined) return;
  const key = commandKey(run.parent, run.commandId);
  const entry = s.table.commandIndex.get(key);
  if (!entry) return; // admitted by a previous process: the store answers for it
  entry.live--;
  if (entry.live <= 0) s.table.commandIndex.delete(key);
}

function announceEnd(s: SchedulerParts, run: EndedRun): void {
  if (run.batchId !== undefined) {
    const wave = s.table.waves.get(run.batchId);
    if (wave) {
      wave.remaining--;
      if (wave.remaining <= 0) {
        s.table.waves.delete(run.batchId);
        s.table.announce({
          kind: 'digest',
          batchId: run.batchId,
          parent: wave.parent,
          runIds: wave.memberIds,
        });
      }
      return;
    }
  }
  s.table.announce({ kind: 'completion', runId: run.id, parent: run.parent });
}

function updateConversationOnEnd(s: SchedulerParts, run: EndedRun, now: number): void {
  const conversationId = run.conversationId ?? (run.keep ? run.id : undefined);
  if (conversationId === undefined) return;
  const conversation = s.table.conversations.get(conversationId);
  if (!conversation || conversation.latestRunId !== run.id) return;
  conversation.lastUsedAt = now;
  if (run.status === 'completed') {
    conversation.state = 'idle';
  } else {
    // Only a completed turn leaves a session behind to continue; a killed or lost one does not.
    conversation.state = 'released';
    conversation.releasedReason = `its run ended ${run.status}`;
  }
  s.table.putConversation(conversation);
}

/**
 * How a launched run ends, given the first stop the scheduler asked for and the runner's report: a
 * cancel ends it `cancelled`, a timeout `timed_out`, the turn budget `completed` with `stop: turn_limit`
 * (unless the agent failed on the way out); with no stop asked, the runner's own report stands.
 */
function endOutcome(
  stopping: StopCause | undefined,
  event: Extract<SchedulerEvent, { type: 'ended' }>,
): { status: TerminalStatus; stop?: StopNote; error?: string } {
  const own: { status: TerminalStatus; stop?: StopNote; error?: string } = { status: event.status };
  if (event.stop !== undefined) own.stop = event.stop;
  if (event.error !== undefined) own.error = event.error;
  switch (stopping) {
    case undefined:
      return own;
    case 'cancel':
      return { ...own, status: 'cancelled' };
    case 'timeout':
      return { ...own, status: 'timed_out' };
    case 'turn_limit':
    case 'token_budget':
      return event.status === 'failed' ? own : { status: 'completed', stop: stopping };
    default:
      return assertNever(stopping);
  }
}
