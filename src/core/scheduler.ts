import { refuse } from './errors.js';
import { MinHeap } from './min-heap.js';
import type {
  AdmittedRun,
  Announcement,
  Conversation,
  MemoryReading,
  SchedulerCommand,
  SchedulerEvent,
  SchedulerLimits,
  SchedulerReply,
  SpawnMember,
  StepResult,
} from './scheduler-types.js';
import {
  assertNever,
  type EndedRun,
  type ParentKey,
  parentRunId,
  type QueuedRun,
  type Run,
  type RunId,
  type StopNote,
  type TerminalStatus,
} from './types.js';

/** A live run and the bookkeeping admission needs about it. */
interface Node {
  run: Run;
  /** Live nested children. */
  children: Set<RunId>;
  /** A stop the scheduler asked for; decides the terminal status when the runner confirms. */
  stopping?: 'cancel' | 'timeout';
  deadlineAt?: number;
}

interface Wave {
  parent: ParentKey;
  memberIds: RunId[];
  remaining: number;
}

const QUEUE_RETRY_SECS = 5;

/**
 * Admission and the run lifecycle as decisions only (DESIGN §3): `step(event, now)` changes the state
 * and returns the commands for the adapters to carry out plus the caller's answer. No I/O, no clock:
 * time comes in as `now`. The state lives inside the instance and is changed in place (copying it per
 * event would make admission O(runs)); every transition of a run happens in this file.
 *
 * Invariants kept here (property-tested): permits held ≤ cap; a permit is bound to one top-level run
 * and returns exactly once, when that run and all its descendants have ended; every admitted run ends
 * exactly once and is announced exactly once (a wave member through its wave's one digest).
 */
export class Scheduler {
  private readonly nodes = new Map<RunId, Node>();
  /** FIFO of queued top-level runs; a Map keeps insertion order and removes from the middle in O(1). */
  private readonly queue = new Map<RunId, true>();
  private queuedSingles = 0;
  private queuedWaveMembers = 0;
  /** Permit tokens by the top-level run that holds them. */
  private readonly permits = new Map<RunId, number>();
  /** Live runs per tree (top-level run id → count, the root itself included); the permit returns at 0. */
  private readonly treeLive = new Map<RunId, number>();
  private nextPermit = 1;
  /** Top-level runs holding a permit that the stagger has not yet let start, in order. */
  private pendingLaunch: RunId[] = [];
  private lastLaunchAt: number | undefined;
  private readonly waves = new Map<string, Wave>();
  private readonly commandIndex = new Map<string, { runIds: RunId[]; batchId?: string }>();
  private readonly conversations = new Map<string, Conversation>();
  private readonly deadlines = new MinHeap<RunId>();
  private seq = 0;
  private commands: SchedulerCommand[] = [];
  /** Live runs by status, kept on every transition so status views cost O(1). */
  private readonly statusCounts = { queued: 0, starting: 0, running: 0 };

  constructor(readonly limits: SchedulerLimits) {}

  step(event: SchedulerEvent, now: number): StepResult {
    this.commands = [];
    const reply = this.apply(event, now);
    this.pump(now);
    const commands = this.commands;
    this.commands = [];
    return { commands, reply };
  }

  /** When the scheduler next needs a `tick`: the stagger's next start or the nearest deadline. */
  nextWakeAt(): number | undefined {
    let wake: number | undefined;
    if (this.pendingLaunch.length > 0 && this.lastLaunchAt !== undefined) {
      wake = this.lastLaunchAt + this.limits.staggerMs;
    }
    this.dropStaleDeadlines();
    const deadline = this.deadlines.peekKey();
    if (deadline !== undefined && (wake === undefined || deadline < wake)) wake = deadline;
    return wake;
  }

  /** Counts for status views; cheap. */
  counts(): { running: number; starting: number; queued: number; permitsHeld: number; live: number } {
    const { running, starting } = this.statusCounts;
    return {
      running,
      starting,
      queued: this.queue.size,
      permitsHeld: this.permits.size,
      live: this.nodes.size,
    };
  }

  /** The live run with this id, if any. */
  liveRun(id: RunId): Run | undefined {
    return this.nodes.get(id)?.run;
  }

  /** Ids of the live runs in `id`'s subtree, itself first. */
  subtree(id: RunId): RunId[] {
    const out: RunId[] = [];
    const walk = (runId: RunId) => {
      const node = this.nodes.get(runId);
      if (!node) return;
      out.push(runId);
      for (const child of node.children) walk(child);
    };
    walk(id);
    return out;
  }

  /** Which top-level runs hold a permit, and its token. */
  permitHolders(): ReadonlyMap<RunId, number> {
    return this.permits;
  }

  queuedIds(): RunId[] {
    return [...this.queue.keys()];
  }

  conversation(id: string): Conversation | undefined {
    return this.conversations.get(id);
  }

  /** Idle kept conversations, least recently used first. */
  idleConversations(): Conversation[] {
    return [...this.conversations.values()]
      .filter((c) => c.state === 'idle')
      .sort((a, b) => a.lastUsedAt - b.lastUsedAt);
  }

  private apply(event: SchedulerEvent, now: number): SchedulerReply {
    switch (event.type) {
      case 'spawn':
        return this.spawn(event.parent, event.members, now, event.batchId, event.commandId, event.memory);
      case 'continue':
        return this.continueConversation(event, now);
      case 'started':
        return this.started(event.runId, now);
      case 'ended':
        return this.runnerEnded(event, now);
      case 'cancel':
        return this.cancel(event.runId, now);
      case 'steer':
        return this.steer(event.runId, event.message, event.mode);
      case 'release':
        return this.release(event.conversationId, event.reason, now);
      case 'tick':
        this.expireDeadlines(now);
        return { ok: true };
      case 'restore':
        return this.restore(event, now);
      case 'forget':
        for (const id of event.commandIds) this.commandIndex.delete(id);
        return { ok: true };
      default:
        return assertNever(event);
    }
  }

  // ── admission ────────────────────────────────────────────────────────────────────────────────

  private spawn(
    parent: ParentKey,
    members: SpawnMember[],
    now: number,
    batchId: string | undefined,
    commandId: string | undefined,
    memory: MemoryReading | undefined,
    conversationId?: string,
  ): SchedulerReply {
    // 2. idempotency: a command id that names runs returns them; a refusal stored nothing.
    if (commandId !== undefined) {
      const known = this.commandIndex.get(commandId);
      if (known) {
        const runs = known.runIds.map((id) => ({
          id,
          status: this.nodes.get(id)?.run.status ?? 'completed',
        }));
        return { ok: true, runs, existing: true, ...(known.batchId ? { batchId: known.batchId } : {}) };
      }
    }
    const parentId = parentRunId(parent);
    const parentNode = parentId === undefined ? undefined : this.nodes.get(parentId);
    if (parentId !== undefined && parentNode?.run.status !== 'running') {
      return {
        ok: false,
        refusal: refuse(
          'not_running',
          `parent run ${parentId} is not running, so it cannot spawn; nothing was admitted`,
        ),
      };
    }
    // 3. depth.
    const depth = parentNode ? parentNode.run.depth + 1 : 1;
    if (depth > this.limits.maxDepth) {
      this.sel('refused_depth', { parent, depth, max_depth: this.limits.maxDepth });
      return {
        ok: false,
        refusal: refuse(
          'depth_exceeded',
          this.limits.maxDepth === 1
            ? 'sub-agents cannot spawn sub-agents here (agent.subagent_max_depth is 1); do the work yourself or return it to your parent'
            : `nesting depth ${depth} exceeds agent.subagent_max_depth ${this.limits.maxDepth}; do the work in this run instead`,
          { limit: this.limits.maxDepth, current: depth },
        ),
      };
    }
    // 4. memory gate.
    if (memory?.critical) {
      this.sel('refused_memory_critical', { parent, available_gb: memory.availableGb, min_gb: memory.minGb });
      return {
        ok: false,
        refusal: refuse(
          'memory_critical',
          `host memory is critical (${memory.availableGb?.toFixed(2) ?? 'unknown'} GiB available, below ${memory.minGb} GiB); retry when running sub-agents finish`,
          { limit: memory.minGb, retry_after_secs: 30 },
        ),
      };
    }
    const isWave = batchId !== undefined;
    // 5. nested: no permit, bounded by refusal.
    if (parentNode) {
      const live = parentNode.children.size;
      if (live + members.length > this.limits.maxChildren) {
        this.sel('refused_children_limit', { parent, live_children: live, asked: members.length });
        return {
          ok: false,
          refusal: refuse(
            'children_limit',
            `run ${parentNode.run.id} has ${live} live children and may have at most ${this.limits.maxChildren}; wait for one to end (spawn_wait) before spawning more`,
            { limit: this.limits.maxChildren, current: live },
          ),
        };
      }
    } else {
      // 7. queue bounds, for the members that would queue.
      const free = this.queue.size > 0 ? 0 : Math.max(0, this.limits.cap - this.permits.size);
      const wouldQueue = Math.max(0, members.length - free);
      if (wouldQueue > 0 && !isWave && this.queuedSingles >= this.limits.maxQueued) {
        this.sel('refused_queue_full', {
          parent,
          max_queued: this.limits.maxQueued,
          queue_depth: this.queuedSingles,
        });
        return {
          ok: false,
          refusal: refuse(
            'queue_full',
            `spawn queue is full (${this.queuedSingles} of ${this.limits.maxQueued}); retry when a run ends, or pass all tasks of a fan-out in one call as a wave`,
            { limit: this.limits.maxQueued, current: this.queuedSingles, retry_after_secs: QUEUE_RETRY_SECS },
          ),
        };
      }
      if (isWave && this.queuedWaveMembers + wouldQueue > this.limits.maxQueuedWaveMembers) {
        this.sel('refused_queue_full', {
          parent,
          max_queued_wave_members: this.limits.maxQueuedWaveMembers,
          queue_depth: this.queuedWaveMembers,
          wave_size: members.length,
        });
        return {
          ok: false,
          refusal: refuse(
            'queue_full',
            `a wave of ${members.length} would queue ${wouldQueue} members, past the bound of ${this.limits.maxQueuedWaveMembers} queued wave members (${this.queuedWaveMembers} queued now); the whole wave was refused — retry later or send a smaller wave`,
            {
              limit: this.limits.maxQueuedWaveMembers,
              current: this.queuedWaveMembers,
              retry_after_secs: QUEUE_RETRY_SECS,
            },
          ),
        };
      }
    }

    const admitted: AdmittedRun[] = [];
    for (const member of members) {
      const id = member.id;
      const run: QueuedRun = {
        id,
        status: 'queued',
        parent,
        agent: member.agent,
        depth,
        rootId: parentNode ? parentNode.run.rootId : id,
        keep: member.keep,
        createdAt: now,
        seq: this.seq++,
        ...(batchId !== undefined ? { batchId } : {}),
        ...(commandId !== undefined ? { commandId } : {}),
        ...(conversationId !== undefined ? { conversationId } : {}),
      };
      const node: Node = { run, children: new Set() };
      this.track(node);
      this.treeLive.set(run.rootId, (this.treeLive.get(run.rootId) ?? 0) + 1);
      if (parentNode) {
        parentNode.children.add(id);
        this.transition(node, { ...run, status: 'starting' });
        this.launch(node, now);
        admitted.push({ id, status: 'starting' });
      } else if (this.queue.size === 0 && this.permits.size < this.limits.cap) {
        this.grantPermit(node);
        admitted.push({ id, status: 'starting' });
      } else {
        this.queue.set(id, true);
        if (isWave) this.queuedWaveMembers++;
        else this.queuedSingles++;
        this.persist(run);
        admitted.push({ id, status: 'queued', position: this.queue.size });
      }
      if (member.keep && conversationId === undefined) {
        this.putConversation({
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
      this.waves.set(batchId, { parent, memberIds: members.map((m) => m.id), remaining: members.length });
    }
    if (commandId !== undefined) {
      this.commandIndex.set(commandId, {
        runIds: members.map((m) => m.id),
        ...(batchId !== undefined ? { batchId } : {}),
      });
    }
    this.sel('admitted', { parent, runs: members.length, ...(batchId ? { batch_id: batchId } : {}), depth });
    return { ok: true, runs: admitted, ...(batchId !== undefined ? { batchId } : {}) };
  }

  private continueConversation(
    event: Extract<SchedulerEvent, { type: 'continue' }>,
    now: number,
  ): SchedulerReply {
    if (event.commandId !== undefined && this.commandIndex.has(event.commandId)) {
      return this.spawn(event.parent, [], now, undefined, event.commandId, undefined);
    }
    const conversation = this.conversations.get(event.conversationId);
    if (!conversation) {
      return {
        ok: false,
        refusal: refuse(
          'not_found',
          `no conversation ${event.conversationId}; start one with spawn_run keep=true`,
        ),
      };
    }
    if (conversation.state === 'released') {
      return {
        ok: false,
        refusal: refuse(
          'conversation_released',
          `conversation ${conversation.id} was released (${conversation.releasedReason ?? 'released'}); start a new one with spawn_run keep=true`,
        ),
      };
    }
    if (conversation.state === 'busy') {
      return {
        ok: false,
        refusal: refuse(
          'conversation_busy',
          `conversation ${conversation.id} is still working on run ${conversation.latestRunId}; wait for its completion event, or steer it with spawn_steer`,
        ),
      };
    }
    const reply = this.spawn(
      event.parent,
      [{ id: event.id, agent: conversation.agent, keep: true }],
      now,
      undefined,
      event.commandId,
      event.memory,
      conversation.id,
    );
    if (reply.ok) {
      conversation.state = 'busy';
      conversation.latestRunId = event.id;
      conversation.lastUsedAt = now;
      this.putConversation(conversation);
    }
    return reply;
  }

  // ── permits and starts ───────────────────────────────────────────────────────────────────────

  private grantPermit(node: Node): void {
    this.permits.set(node.run.id, this.nextPermit++);
    this.transition(node, { ...node.run, status: 'starting' });
    this.persist(node.run);
    this.pendingLaunch.push(node.run.id);
  }

  /** Returns a top-level run's permit; a second release is a no-op. */
  private releasePermit(rootId: RunId): void {
    this.permits.delete(rootId);
  }

  /** Fills free permits from the queue in order, then launches what the stagger allows. */
  private pump(now: number): void {
    while (this.permits.size < this.limits.cap && this.queue.size > 0) {
      const id = this.queue.keys().next().value as RunId;
      this.dequeue(id);
      const node = this.nodes.get(id);
      if (node) this.grantPermit(node);
    }
    while (this.pendingLaunch.length > 0) {
      if (
        this.limits.staggerMs > 0 &&
        this.lastLaunchAt !== undefined &&
        now < this.lastLaunchAt + this.limits.staggerMs
      ) {
        break;
      }
      const id = this.pendingLaunch.shift() as RunId;
      const node = this.nodes.get(id);
      if (!node) continue;
      this.lastLaunchAt = now;
      this.launch(node, now);
    }
  }

  private launch(node: Node, now: number): void {
    const run = node.run;
    if (run.status !== 'starting') return;
    run.launchedAt = now;
    node.deadlineAt = now + this.limits.timeoutMs;
    this.deadlines.push(node.deadlineAt, run.id);
    this.persist(run);
    this.commands.push({ type: 'launch', runId: run.id });
  }

  private dequeue(id: RunId): void {
    if (!this.queue.delete(id)) return;
    const node = this.nodes.get(id);
    if (node?.run.batchId !== undefined) this.queuedWaveMembers--;
    else this.queuedSingles--;
  }

  private started(runId: RunId, now: number): SchedulerReply {
    const node = this.nodes.get(runId);
    const launched = node ? launchedAt(node.run) : undefined;
    if (node?.run.status !== 'starting' || launched === undefined) {
      return { ok: false, refusal: refuse('not_found', `run ${runId} is not starting`) };
    }
    const running: Run = { ...node.run, status: 'running', launchedAt: launched, startedAt: now };
    this.transition(node, running);
    this.persist(running);
    return { ok: true };
  }

  // ── ends ─────────────────────────────────────────────────────────────────────────────────────

  private runnerEnded(event: Extract<SchedulerEvent, { type: 'ended' }>, now: number): SchedulerReply {
    const node = this.nodes.get(event.runId);
    if (!node || launchedAt(node.run) === undefined) {
      // A second report, or one for a run that never launched: nothing to end twice.
      return { ok: false, refusal: refuse('not_found', `run ${event.runId} is not executing`) };
    }
    let status: TerminalStatus = event.status;
    if (node.stopping === 'cancel') status = 'cancelled';
    else if (node.stopping === 'timeout') status = 'timed_out';
    this.finish(node, status, now, event.stop, event.error);
    return { ok: true };
  }

  /** The one terminal transition: record, announce, free the permit when the tree is done. */
  private finish(node: Node, status: TerminalStatus, now: number, stop?: StopNote, error?: string): void {
    const run = node.run;
    this.untrack(node);
    this.dequeue(run.id);
    if (run.status === 'starting' && run.launchedAt === undefined) {
      this.pendingLaunch = this.pendingLaunch.filter((id) => id !== run.id);
    }
    const ended: EndedRun = {
      ...run,
      status,
      endedAt: now,
      ...(stop !== undefined ? { stop } : {}),
      ...(error !== undefined ? { error } : {}),
    };
    this.persist(ended);

    const parentId = parentRunId(run.parent);
    if (parentId !== undefined) this.nodes.get(parentId)?.children.delete(run.id);
    // The root may end before its descendants; its permit waits for the last of them.
    const left = (this.treeLive.get(run.rootId) ?? 1) - 1;
    if (left > 0) {
      this.treeLive.set(run.rootId, left);
    } else {
      this.treeLive.delete(run.rootId);
      this.releasePermit(run.rootId);
    }

    this.announceEnd(ended);
    this.updateConversationOnEnd(ended, now);
    this.sel('ended', { run_id: run.id, status, ...(stop ? { stop } : {}), ...(error ? { error } : {}) });
  }

  private announceEnd(run: EndedRun): void {
    if (run.batchId !== undefined) {
      const wave = this.waves.get(run.batchId);
      if (wave) {
        wave.remaining--;
        if (wave.remaining <= 0) {
          this.waves.delete(run.batchId);
          this.announce({
            kind: 'digest',
            batchId: run.batchId,
            parent: wave.parent,
            runIds: wave.memberIds,
          });
        }
        return;
      }
    }
    this.announce({ kind: 'completion', runId: run.id, parent: run.parent });
  }

  private updateConversationOnEnd(run: EndedRun, now: number): void {
    const conversationId = run.conversationId ?? (run.keep ? run.id : undefined);
    if (conversationId === undefined) return;
    const conversation = this.conversations.get(conversationId);
    if (!conversation || conversation.latestRunId !== run.id) return;
    conversation.lastUsedAt = now;
    if (run.status === 'completed') {
      conversation.state = 'idle';
    } else {
      // Only a completed turn leaves a session behind to continue; a killed or lost one does not.
      conversation.state = 'released';
      conversation.releasedReason = `its run ended ${run.status}`;
    }
    this.putConversation(conversation);
  }

  // ── cancel, timeout, steer, release ──────────────────────────────────────────────────────────

  private cancel(runId: RunId, now: number): SchedulerReply {
    const node = this.nodes.get(runId);
    if (!node) return { ok: false, refusal: refuse('not_found', `run ${runId} is not live`) };
    // Descendants first, so a parent's end never precedes its children's in the record.
    for (const id of this.subtree(runId).reverse()) this.stopOrEnd(id, 'cancel', now);
    return { ok: true };
  }

  private stopOrEnd(runId: RunId, reason: 'cancel' | 'timeout', now: number): void {
    const node = this.nodes.get(runId);
    if (!node || node.stopping !== undefined) return;
    if (launchedAt(node.run) === undefined) {
      // Queued, or holding a permit the stagger has not let start: nothing was created, end it now.
      this.finish(node, 'cancelled', now);
      return;
    }
    node.stopping = reason;
    this.commands.push({ type: 'stop', runId, reason });
  }

  private expireDeadlines(now: number): void {
    for (;;) {
      this.dropStaleDeadlines();
      const at = this.deadlines.peekKey();
      if (at === undefined || at > now) return;
      const runId = this.deadlines.pop() as RunId;
      const node = this.nodes.get(runId);
      if (!node || node.deadlineAt !== at) continue;
      for (const id of this.subtree(runId).reverse())
        this.stopOrEnd(id, id === runId ? 'timeout' : 'cancel', now);
    }
  }

  private dropStaleDeadlines(): void {
    for (;;) {
      const id = this.deadlines.peekValue();
      if (id === undefined) return;
      const node = this.nodes.get(id);
      if (node && node.deadlineAt === this.deadlines.peekKey() && node.stopping === undefined) return;
      this.deadlines.pop();
    }
  }

  private steer(runId: RunId, message: string, mode: 'interrupt' | 'follow_up'): SchedulerReply {
    const node = this.nodes.get(runId);
    if (!node) return { ok: false, refusal: refuse('not_found', `run ${runId} is not live`) };
    if (node.run.status !== 'running' || node.stopping !== undefined) {
      return {
        ok: false,
        refusal: refuse(
          'not_running',
          `run ${runId} is ${node.stopping ? 'stopping' : node.run.status}; steer it once it is running, or cancel it`,
        ),
      };
    }
    // Steering reaches the live run directly: it takes no permit and waits for nothing.
    this.commands.push({ type: 'steer', runId, message, mode });
    return { ok: true };
  }

  private release(
    conversationId: string,
    reason: 'requested' | 'expired' | 'evicted',
    now: number,
  ): SchedulerReply {
    const conversation = this.conversations.get(conversationId);
    if (!conversation) {
      return { ok: false, refusal: refuse('not_found', `no conversation ${conversationId}`) };
    }
    if (conversation.state === 'released') {
      return {
        ok: false,
        refusal: refuse('conversation_released', `conversation ${conversationId} was already released`),
      };
    }
    if (conversation.state === 'busy') {
      return {
        ok: false,
        refusal: refuse(
          'conversation_busy',
          `conversation ${conversationId} is working on run ${conversation.latestRunId}; release it after its completion event, or cancel that run`,
        ),
      };
    }
    conversation.state = 'released';
    conversation.releasedReason = reason;
    conversation.lastUsedAt = now;
    this.putConversation(conversation);
    this.commands.push({ type: 'release_session', conversationId });
    this.sel('conversation_released', { conversation: conversationId, reason });
    return { ok: true };
  }

  // ── restart ──────────────────────────────────────────────────────────────────────────────────

  private restore(event: Extract<SchedulerEvent, { type: 'restore' }>, now: number): SchedulerReply {
    this.seq = Math.max(this.seq, event.nextSeq);
    // A kept conversation's session lived in a process of the previous gateway: continuing it now
    // answers conversation_released (not not_found), with the reason.
    for (const conversation of event.conversations ?? []) {
      if (conversation.state === 'released') {
        this.conversations.set(conversation.id, { ...conversation });
      } else {
        this.putConversation({
          ...conversation,
          state: 'released',
          releasedReason: 'the gateway restarted and its session ended',
          lastUsedAt: now,
        });
      }
    }
    for (const wave of event.waves) {
      this.waves.set(wave.batchId, {
        parent: wave.parent,
        memberIds: wave.memberIds,
        remaining: wave.remaining,
      });
    }
    // Runs that were executing died with the previous process: each ends `lost`, once.
    for (const run of [...event.executing].sort((a, b) => b.depth - a.depth || a.seq - b.seq)) {
      const node: Node = { run, children: new Set() };
      this.track(node);
      this.finish(node, 'lost', now, undefined, 'the gateway restarted while this run was executing');
    }
    for (const run of [...event.queued].sort((a, b) => a.seq - b.seq)) {
      const queued: Run = { ...run, status: 'queued' };
      this.track({ run: queued, children: new Set() });
      this.treeLive.set(run.id, 1);
      this.queue.set(run.id, true);
      if (run.batchId !== undefined) this.queuedWaveMembers++;
      else this.queuedSingles++;
      if (run.commandId !== undefined) {
        const entry = this.commandIndex.get(run.commandId);
        if (entry) entry.runIds.push(run.id);
        else
          this.commandIndex.set(run.commandId, {
            runIds: [run.id],
            ...(run.batchId !== undefined ? { batchId: run.batchId } : {}),
          });
      }
    }
    return { ok: true };
  }

  // ── bookkeeping ──────────────────────────────────────────────────────────────────────────────

  private track(node: Node): void {
    this.nodes.set(node.run.id, node);
    this.count(node.run, 1);
  }

  private untrack(node: Node): void {
    if (this.nodes.delete(node.run.id)) this.count(node.run, -1);
  }

  private transition(node: Node, run: Run): void {
    this.count(node.run, -1);
    node.run = run;
    this.count(run, 1);
  }

  private count(run: Run, delta: number): void {
    if (run.status === 'queued' || run.status === 'starting' || run.status === 'running') {
      this.statusCounts[run.status] += delta;
    }
  }

  // ── outputs ──────────────────────────────────────────────────────────────────────────────────

  private persist(run: Run): void {
    this.commands.push({ type: 'persist', run: { ...run } });
  }

  private putConversation(conversation: Conversation): void {
    this.conversations.set(conversation.id, conversation);
    this.commands.push({ type: 'persist_conversation', conversation: { ...conversation } });
  }

  private announce(announcement: Announcement): void {
    this.commands.push({ type: 'announce', announcement });
  }

  private sel(
    outcome: Extract<SchedulerCommand, { type: 'sel' }>['outcome'],
    metadata: Record<string, unknown>,
  ) {
    this.commands.push({ type: 'sel', outcome, metadata });
  }
}

function launchedAt(run: Run): number | undefined {
  return run.status === 'queued' ? undefined : run.launchedAt;
}
