import * as refusals from '../refusals.js';
import type { AdmittedRun, SchedulerEvent, SchedulerReply } from '../scheduler-types.js';
import { type ParentKey, parentRunId, type QueuedRun, type RunId } from '../types.js';
import type { SchedulerParts } from './parts.js';
import { type AdmissionMark, commandKey, type Node, newNode, refused } from './run-node.js';

/**
 * Admission (DESIGN §3): spawn and continue, checked in order, each run queued or granted a permit at
 * once; and undoing an admission whose store write failed.
 */

/** Whether this parent's command id names live runs the scheduler holds. */
export function knowsCommand(s: SchedulerParts, parent: ParentKey, commandId: string): boolean {
  return s.table.commandIndex.has(commandKey(parent, commandId));
}

/** Admission, DESIGN §3's numbered checks from 2 on (1, validation, happened at the edge). */
export function spawn(
  s: SchedulerParts,
  event: Pick<
    Extract<SchedulerEvent, { type: 'spawn' }>,
    'parent' | 'members' | 'batchId' | 'commandId' | 'known' | 'memory'
  >,
  now: number,
  conversationId?: string,
): SchedulerReply {
  const { parent, members, batchId, commandId, memory } = event;
  // 2. idempotency: a command id that names runs returns them; a refusal stored nothing.
  const known =
    commandId === undefined
      ? undefined
      : (s.table.commandIndex.get(commandKey(parent, commandId)) ?? event.known);
  if (known) {
    const runs = known.runIds.map((id) => ({
      id,
      status: s.table.nodes.get(id)?.run.status ?? 'completed',
    }));
    return {
      kind: 'admitted',
      ok: true,
      runs,
      existing: true,
      ...(known.batchId ? { batchId: known.batchId } : {}),
    };
  }
  const parentId = parentRunId(parent);
  const parentNode = parentId === undefined ? undefined : s.table.nodes.get(parentId);
  // A parent told to stop may not spawn: its child would escape the cascade that stops the tree.
  if (parentId !== undefined && (parentNode?.run.status !== 'running' || parentNode.stopping !== undefined)) {
    return refused(refusals.parentNotRunning(parentId));
  }
  // 3. depth.
  const depth = parentNode ? parentNode.run.depth + 1 : 1;
  if (depth > s.table.limits.maxDepth) {
    s.table.sel('refused_depth', { parent, depth, max_depth: s.table.limits.maxDepth });
    return refused(refusals.depthExceeded(depth, s.table.limits.maxDepth));
  }
  // 4. memory gate, for a run that starts on this host: a nested run, or a top-level one that `startsHere`
  // (in cluster mode a proxy executes where its job is taken; a gateway short of memory takes none).
  if (memory?.critical && (parentNode !== undefined || s.table.startsHere(parent))) {
    s.table.sel('refused_memory_critical', {
      parent,
      available_gb: memory.availableGb,
      min_gb: memory.minGb,
    });
    return refused(refusals.memoryCritical(memory));
  }
  const isWave = batchId !== undefined;
  if (parentNode) {
    // 5. nested: no permit, bounded by refusal.
    const live = parentNode.children?.size ?? 0;
    if (live + members.length > s.table.limits.maxChildren) {
      s.table.sel('refused_children_limit', { parent, live_children: live, asked: members.length });
      return refused(refusals.childrenLimit(parentNode.run.id, live, s.table.limits.maxChildren));
    }
  } else {
    // 7. queue bounds, for the members that would queue.
    const free = s.table.queuedAhead(parent)
      ? 0
      : s.permits.admissionRoom(
          s,
          Math.max(0, s.table.limits.cap - s.permits.held.size),
          members.slice(0, s.table.limits.cap),
          now,
          parent,
        );
    const wouldQueue = Math.max(0, members.length - free);
    if (wouldQueue > 0 && !isWave && s.table.queuedSingles >= s.table.limits.maxQueued) {
      s.table.sel('refused_queue_full', {
        parent,
        max_queued: s.table.limits.maxQueued,
        queue_depth: s.table.queuedSingles,
      });
      return refused(refusals.queueFull(s.table.queuedSingles, s.table.limits.maxQueued));
    }
    if (isWave && s.table.queuedWaveMembers + wouldQueue > s.table.limits.maxQueuedWaveMembers) {
      s.table.sel('refused_queue_full', {
        parent,
        max_queued_wave_members: s.table.limits.maxQueuedWaveMembers,
        queue_depth: s.table.queuedWaveMembers,
        wave_size: members.length,
      });
      return refused(
        refusals.waveQueueFull(
          members.length,
          wouldQueue,
          s.table.queuedWaveMembers,
          s.table.limits.maxQueuedWaveMembers,
        ),
      );
    }
  }

  // Top-level members start at once while permits are free and the reservation gate lets them.
  const direct =
    parentNode || s.table.queuedAhead(parent)
      ? 0
      : s.permits.admissionRoom(s, s.table.limits.cap - s.permits.held.size, members, now, parent);
  let granted = 0;
  const admitted: AdmittedRun[] = [];
  for (const member of members) {
    const id = member.id;
    // Every field in the literal, absent ones undefined, always in this order: every run and each of its
    // states (copies of this with `status` and times changed) share one hidden class (see `RunBase`).
    const run: QueuedRun = {
      id,
      status: 'queued',
      parent,
      agent: member.agent,
      depth,
      rootId: parentNode ? parentNode.run.rootId : id,
      batchId,
      commandId,
      conversationId,
      keep: member.keep,
      maxTurns: member.maxTurns ? member.maxTurns : undefined,
      maxTokens: tokenBudgetOf(member.maxTokens, parentNode && tokensLeft(s, parentNode)),
      provider: member.provider,
      createdAt: now,
      seq: s.table.seq++,
      launchedAt: undefined,
      startedAt: undefined,
      endedAt: undefined,
      stop: undefined,
      error: undefined,
    };
    const node = newNode(run, parentNode ? parentNode.tree : { live: 0 });
    s.table.track(node);
    if (parentNode) {
      parentNode.children ??= new Set();
      parentNode.children.add(id);
      s.table.transition(node, { ...run, status: 'starting' });
      s.permits.launch(s, node, now);
      admitted.push({ id, status: 'starting' });
    } else if (granted < direct) {
      granted++;
      s.permits.grant(s, node, now);
      admitted.push({ id, status: 'starting' });
    } else {
      s.table.enqueue(node);
      s.table.persist(run);
      admitted.push({ id, status: 'queued', position: s.table.queue.size });
    }
    if (member.keep && conversationId === undefined) {
      s.table.putConversation({
        id,
        agent: member.agent,
        parent,
        latestRunId: id,
        state: 'busy',
        lastUsedAt: now,
      });
    }
  }
  if (batchId !== undefined) {
    s.table.waves.set(batchId, {
      parent,
      memberIds: members.map((m) => m.id),
      remaining: members.length,
    });
  }
  if (commandId !== undefined) {
    s.table.commandIndex.set(commandKey(parent, commandId), {
      runIds: members.map((m) => m.id),
      live: members.length,
      ...(batchId !== undefined ? { batchId } : {}),
    });
  }
  s.table.sel('admitted', {
    parent,
    runs: members.length,
    ...(batchId ? { batch_id: batchId } : {}),
    depth,
  });
  return {
    kind: 'admitted',
    ok: true,
    runs: admitted,
    existing: false,
    ...(batchId !== undefined ? { batchId } : {}),
  };
}

export function continueConversation(
  s: SchedulerParts,
  event: Extract<SchedulerEvent, { type: 'continue' }>,
  now: number,
): SchedulerReply {
  if (
    event.commandId !== undefined &&
    (event.known !== undefined || knowsCommand(s, event.parent, event.commandId))
  ) {
    return spawn(
      s,
      {
        parent: event.parent,
        members: [],
        commandId: event.commandId,
        ...(event.known ? { known: event.known } : {}),
      },
      now,
    );
  }
  const conversation =
    s.table.conversations.get(event.conversationId) ??
    (event.stored?.id === event.conversationId ? event.stored : undefined);
  if (!conversation) return refused(refusals.noConversation(event.conversationId));
  if (conversation.state === 'released') {
    return refused(refusals.conversationReleased(conversation.id, conversation.releasedReason));
  }
  if (conversation.state === 'busy') {
    return refused(refusals.conversationBusy(conversation.id, conversation.latestRunId));
  }
  const reply = spawn(
    s,
    {
      parent: event.parent,
      members: [
        {
          id: event.id,
          agent: conversation.agent,
          keep: true,
          ...(event.maxTurns !== undefined ? { maxTurns: event.maxTurns } : {}),
          ...(event.maxTokens !== undefined ? { maxTokens: event.maxTokens } : {}),
        },
      ],
      ...(event.commandId !== undefined ? { commandId: event.commandId } : {}),
      ...(event.memory !== undefined ? { memory: event.memory } : {}),
    },
    now,
    conversation.id,
  );
  if (reply.ok) {
    conversation.state = 'busy';
    conversation.latestRunId = event.id;
    conversation.lastUsedAt = now;
    s.table.putConversation(conversation);
  }
  return reply;
}

/**
 * What is left of the token budgets of `node` and its live ancestors (the least of them), or undefined
 * when none of them has a budget: a nested run's budget is narrowed to it at admission.
 */
function tokensLeft(s: SchedulerParts, node: Node): number | undefined {
  let left: number | undefined;
  for (let at: Node | undefined = node; at; ) {
    const budget = at.run.maxTokens ?? 0;
    if (budget > 0) left = Math.min(left ?? Number.POSITIVE_INFINITY, budget - at.tokens);
    const parentId = parentRunId(at.run.parent);
    at = parentId === undefined ? undefined : s.table.nodes.get(parentId);
  }
  return left;
}

// ── undoing an admission whose store write failed ─────────────────────────────────────────────

/** What an admission changes besides adding its members: restored by {@link undo}. */
export function mark(
  s: SchedulerParts,
  event: Extract<SchedulerEvent, { type: 'spawn' | 'continue' }>,
): AdmissionMark {
  const conversation =
    event.type === 'continue' ? s.table.conversations.get(event.conversationId) : undefined;
  // Assigned, not spread: every admission makes one.
  const mark: AdmissionMark = { seq: s.table.seq, lastLaunchAt: s.permits.lastLaunchAt };
  if (event.commandId !== undefined) mark.commandKey = commandKey(event.parent, event.commandId);
  if (event.type === 'spawn' && event.batchId !== undefined) mark.batchId = event.batchId;
  if (conversation) mark.conversation = { ...conversation };
  return mark;
}

/** Removes the members an admission added, newest first, and restores what it changed. */
export function undo(s: SchedulerParts, mark: AdmissionMark, ids: readonly RunId[]): void {
  for (const id of [...ids].reverse()) {
    const node = s.table.nodes.get(id);
    if (!node) continue;
    s.table.dequeue(node);
    s.table.untrack(node);
    s.permits.forget(s, id);
    node.tree.live--;
    const parentId = parentRunId(node.run.parent);
    if (parentId !== undefined) s.table.dropChild(parentId, id);
    // A kept member's conversation was created by this admission.
    if (node.run.keep && node.run.conversationId === undefined) s.table.conversations.delete(id);
  }
  if (mark.batchId !== undefined) s.table.waves.delete(mark.batchId);
  if (mark.commandKey !== undefined) s.table.commandIndex.delete(mark.commandKey);
  if (mark.conversation) s.table.conversations.set(mark.conversation.id, mark.conversation);
  s.table.seq = mark.seq;
  s.permits.lastLaunchAt = mark.lastLaunchAt;
}

/**
 * A run's token budget: its own (0 = none), narrowed to what its ancestors have left (`left`, undefined
 * when none has a budget). An ancestor with nothing left still gives 1, so the child stops at its first
 * counted call rather than getting no budget at all.
 */
function tokenBudgetOf(own: number | undefined, left: number | undefined): number | undefined {
  const mine = own !== undefined && own > 0 ? own : Number.POSITIVE_INFINITY;
  const budget = Math.min(mine, left === undefined ? Number.POSITIVE_INFINITY : Math.max(1, left));
  return Number.isFinite(budget) ? budget : undefined;
}
