import type { Refusal } from './errors.js';
import { type FifoLinks, LinkedFifo } from './fifo.js';
import { MinHeap } from './min-heap.js';
import {
  capSourceOf,
  initialProviderCap,
  onCleanCompletion,
  onRateLimited,
  type ProviderCapState,
  policyFor,
  providerStartsAllowed,
} from './provider-cap.js';
import * as refusals from './refusals.js';
import { type LiveRunMemory, reserveStarts } from './reservation.js';
import type {
  AdmittedRun,
  Announcement,
  Conversation,
  MemorySample,
  SchedulerCommand,
  SchedulerEvent,
  SchedulerLimits,
  SchedulerReply,
  StepResult,
  StopCause,
} from './scheduler-types.js';
import {
  assertNever,
  type EndedRun,
  type ParentKey,
  parentRunId,
  type QueuedRun,
  type Run,
  type RunId,
  type RunStatus,
  type StopNote,
  type TerminalStatus,
  withEveryField,
} from './types.js';

/** One provider's cap as the scheduler holds it (`resource_status`'s `providers`). */
export interface ProviderStatus {
  cap: number;
  /** `configured` (`providers.NAME.cap`) or `adaptive`. */
  source: 'configured' | 'adaptive';
  holdUntil: number;
  running: number;
  lastRateLimitedAt?: number;
}

/** A live run and the bookkeeping admission needs about it (queued: its links in the queue). */
interface Node extends FifoLinks<Node> {
  run: Run;
  /** Its tree's live count, one object shared by the root and every descendant. */
  tree: Tree;
  /**
   * Live nested children; made with the first (most runs have none, and a queued run is held by the
   * thousand: an empty set per run is an object and a table every young collection copies).
   */
  children: Set<RunId> | undefined;
  /** The first stop the scheduler asked for; it decides the terminal status when the runner confirms. */
  stopping?: StopCause;
  deadlineAt?: number | undefined;
  /** Tool calls made so far, against `run.maxTurns`. */
  toolCalls: number;
  /** Tokens its model calls used so far, against `run.maxTokens`. */
  tokens: number;
}

interface AdmissionMark {
  seq: number;
  lastLaunchAt: number | undefined;
  commandKey?: string;
  batchId?: string;
  /** A continued conversation as it was before the admission. */
  conversation?: Conversation;
}

interface Wave {
  parent: ParentKey;
  memberIds: RunId[];
  remaining: number;
}

/** Live runs in one tree (the top-level run itself included); the root's permit returns at 0. */
interface Tree {
  live: number;
}

/** A node for a run just tracked, counted live in `tree`: every field set, so all nodes share one shape. */
function newNode(run: Run, tree: Tree): Node {
  tree.live++;
  return {
    run,
    tree,
    children: undefined,
    toolCalls: 0,
    tokens: 0,
    fifoPrev: undefined,
    fifoNext: undefined,
    inFifo: false,
  };
}

const DONE: SchedulerReply = { kind: 'done', ok: true };

function refused(refusal: Refusal): SchedulerReply {
  return { kind: 'refused', ok: false, refusal };
}

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
  /** FIFO of queued top-level runs: O(1) to take the head or remove a cancelled run from the middle. */
  private readonly queue = new LinkedFifo<Node>();
  private queuedSingles = 0;
  private queuedWaveMembers = 0;
  /**
   * Queued top-level runs that start elsewhere (cluster proxies, see `SchedulerLimits.startsHere`): a new one
   * queues behind these, not behind runs waiting for this host's memory.
   */
  private queuedElsewhere = 0;
  /** Permit tokens by the top-level run that holds them. */
  private readonly permits = new Map<RunId, number>();
  private nextPermit = 1;
  /** Top-level runs holding a permit that the stagger has not yet let start, in order. */
  private pendingLaunch: RunId[] = [];
  private lastLaunchAt: number | undefined;
  private readonly waves = new Map<string, Wave>();
  /**
   * Command ids of this process's admissions with live runs, by parent (a key names runs of its own
   * parent only). An entry goes when its last run ends: the store answers for ended ones (`known`).
   */
  private readonly commandIndex = new Map<string, { runIds: RunId[]; batchId?: string; live: number }>();
  private readonly conversations = new Map<string, Conversation>();
  /**
   * Live runs by deadline. It holds the nodes, not their ids: the step's wake-up reads its top every step,
   * and a node says itself whether its entry still stands (`deadlineAt`, cleared when it leaves `nodes`)
   * without a lookup in a map of every live run.
   */
  private readonly deadlines = new MinHeap<Node>();
  private seq = 0;
  private commands: SchedulerCommand[] = [];
  /** Live runs by status, kept on every transition so status views cost O(1). */
  private readonly statusCounts = { queued: 0, starting: 0, running: 0 };
  /** Top-level runs starting or running (each holds a permit; nested runs run under their ancestor's). */
  private topLevelExecuting = 0;
  /** The sampler's last view of memory, for the reservation gate; absent until one arrives. */
  private memory: MemorySample | undefined;
  /** Each provider's adaptive cap, from its first run on (`limits.provider` set). */
  private readonly providerCaps = new Map<string, ProviderCapState>();
  /** The provider of each permit's run (a root may end before its permit returns). */
  private readonly permitProvider = new Map<RunId, string>();
  /** Live runs that met a 429: their completion is not a clean one. */
  private readonly limitedRuns = new Set<RunId>();
  /** `now` of the last step, so `nextWakeAt` can tell a hold still to come. */
  private lastNow = 0;

  constructor(readonly limits: SchedulerLimits) {}

  step(event: SchedulerEvent, now: number): StepResult {
    this.commands = [];
    this.lastNow = now;
    const before =
      event.type === 'spawn' || event.type === 'continue' ? this.admissionMark(event) : undefined;
    const reply = this.apply(event, now);
    this.pump(now);
    const commands = this.commands;
    this.commands = [];
    if (before && reply.kind === 'admitted' && !reply.existing) {
      return {
        commands,
        reply,
        rollback: () =>
          this.unadmit(
            before,
            reply.runs.map((r) => r.id),
          ),
      };
    }
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
    // A provider hold that keeps queued runs waiting ends with a tick.
    if (this.queue.size > 0) {
      for (const state of this.providerCaps.values()) {
        if (state.holdUntil > this.lastNow && (wake === undefined || state.holdUntil < wake))
          wake = state.holdUntil;
      }
    }
    return wake;
  }

  /** Counts for status views; cheap. */
  counts(): {
    running: number;
    starting: number;
    topLevel: number;
    queued: number;
    queuedSingles: number;
    permitsHeld: number;
    live: number;
  } {
    const { running, starting } = this.statusCounts;
    return {
      running,
      starting,
      topLevel: this.topLevelExecuting,
      queued: this.queue.size,
      queuedSingles: this.queuedSingles,
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
      if (node.children) for (const child of node.children) walk(child);
    };
    walk(id);
    return out;
  }

  /** Which top-level runs hold a permit, and its token. */
  permitHolders(): ReadonlyMap<RunId, number> {
    return this.permits;
  }

  queuedIds(): RunId[] {
    const ids: RunId[] = [];
    for (const node of this.queue) ids.push(node.run.id);
    return ids;
  }

  /** A conversation that is busy or idle; released ones are forgotten (the store keeps them). */
  conversation(id: string): Conversation | undefined {
    return this.conversations.get(id);
  }

  /** Whether this parent's command id names live runs the scheduler holds. */
  knowsCommand(parent: ParentKey, commandId: string): boolean {
    return this.commandIndex.has(commandKey(parent, commandId));
  }

  /** Ids of the conversations not released (busy or idle); released ones are forgotten. */
  liveConversationIds(): string[] {
    return [...this.conversations.keys()];
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
        return this.spawn(event, now);
      case 'continue':
        return this.continueConversation(event, now);
      case 'started':
        return this.started(event.runId, now);
      case 'tool_call':
        return this.toolCall(event.runId);
      case 'tokens':
        return this.countTokens(event.runId, event.tokens);
      case 'start_failed':
        return this.startFailed(event.runId, event.error, now);
      case 'ended':
        return this.runnerEnded(event, now);
      case 'cancel':
        return this.cancel(event.runId, event.ended, now);
      case 'steer':
        return this.steer(event.runId, event.message, event.mode, event.ended);
      case 'release':
        return this.release(event, now);
      case 'tick':
        this.expireDeadlines(now);
        return DONE;
      case 'memory':
        this.memory = event.sample;
        return DONE;
      case 'provider_limited':
        return this.providerLimited(event, now);
      case 'restore':
        return this.restore(event, now);
      default:
        return assertNever(event);
    }
  }

  // ── admission ────────────────────────────────────────────────────────────────────────────────

  /** Admission, DESIGN §3's numbered checks from 2 on (1, validation, happened at the edge). */
  private spawn(
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
        : (this.commandIndex.get(commandKey(parent, commandId)) ?? event.known);
    if (known) {
      const runs = known.runIds.map((id) => ({ id, status: this.nodes.get(id)?.run.status ?? 'completed' }));
      return {
        kind: 'admitted',
        ok: true,
        runs,
        existing: true,
        ...(known.batchId ? { batchId: known.batchId } : {}),
      };
    }
    const parentId = parentRunId(parent);
    const parentNode = parentId === undefined ? undefined : this.nodes.get(parentId);
    // A parent told to stop may not spawn: its child would escape the cascade that stops the tree.
    if (
      parentId !== undefined &&
      (parentNode?.run.status !== 'running' || parentNode.stopping !== undefined)
    ) {
      return refused(refusals.parentNotRunning(parentId));
    }
    // 3. depth.
    const depth = parentNode ? parentNode.run.depth + 1 : 1;
    if (depth > this.limits.maxDepth) {
      this.sel('refused_depth', { parent, depth, max_depth: this.limits.maxDepth });
      return refused(refusals.depthExceeded(depth, this.limits.maxDepth));
    }
    // 4. memory gate, for a run that starts on this host: a nested run, or a top-level one that `startsHere`
    // (in cluster mode a proxy executes where its job is taken; a gateway short of memory takes none).
    if (memory?.critical && (parentNode !== undefined || this.startsHere(parent))) {
      this.sel('refused_memory_critical', { parent, available_gb: memory.availableGb, min_gb: memory.minGb });
      return refused(refusals.memoryCritical(memory));
    }
    const isWave = batchId !== undefined;
    if (parentNode) {
      // 5. nested: no permit, bounded by refusal.
      const live = parentNode.children?.size ?? 0;
      if (live + members.length > this.limits.maxChildren) {
        this.sel('refused_children_limit', { parent, live_children: live, asked: members.length });
        return refused(refusals.childrenLimit(parentNode.run.id, live, this.limits.maxChildren));
      }
    } else {
      // 7. queue bounds, for the members that would queue.
      const free = this.queuedAhead(parent)
        ? 0
        : this.admissionRoom(
            Math.max(0, this.limits.cap - this.permits.size),
            members.slice(0, this.limits.cap),
            now,
            parent,
          );
      const wouldQueue = Math.max(0, members.length - free);
      if (wouldQueue > 0 && !isWave && this.queuedSingles >= this.limits.maxQueued) {
        this.sel('refused_queue_full', {
          parent,
          max_queued: this.limits.maxQueued,
          queue_depth: this.queuedSingles,
        });
        return refused(refusals.queueFull(this.queuedSingles, this.limits.maxQueued));
      }
      if (isWave && this.queuedWaveMembers + wouldQueue > this.limits.maxQueuedWaveMembers) {
        this.sel('refused_queue_full', {
          parent,
          max_queued_wave_members: this.limits.maxQueuedWaveMembers,
          queue_depth: this.queuedWaveMembers,
          wave_size: members.length,
        });
        return refused(
          refusals.waveQueueFull(
            members.length,
            wouldQueue,
            this.queuedWaveMembers,
            this.limits.maxQueuedWaveMembers,
          ),
        );
      }
    }

    // Top-level members start at once while permits are free and the reservation gate lets them.
    const direct =
      parentNode || this.queuedAhead(parent)
        ? 0
        : this.admissionRoom(this.limits.cap - this.permits.size, members, now, parent);
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
        maxTokens: tokenBudgetOf(member.maxTokens, parentNode && this.tokensLeft(parentNode)),
        provider: member.provider,
        createdAt: now,
        seq: this.seq++,
        launchedAt: undefined,
        startedAt: undefined,
        endedAt: undefined,
        stop: undefined,
        error: undefined,
      };
      const node = newNode(run, parentNode ? parentNode.tree : { live: 0 });
      this.track(node);
      if (parentNode) {
        parentNode.children ??= new Set();
        parentNode.children.add(id);
        this.transition(node, { ...run, status: 'starting' });
        this.launch(node, now);
        admitted.push({ id, status: 'starting' });
      } else if (granted < direct) {
        granted++;
        this.grantPermit(node, now);
        admitted.push({ id, status: 'starting' });
      } else {
        this.enqueue(node);
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
      this.commandIndex.set(commandKey(parent, commandId), {
        runIds: members.map((m) => m.id),
        live: members.length,
        ...(batchId !== undefined ? { batchId } : {}),
      });
    }
    this.sel('admitted', { parent, runs: members.length, ...(batchId ? { batch_id: batchId } : {}), depth });
    return {
      kind: 'admitted',
      ok: true,
      runs: admitted,
      existing: false,
      ...(batchId !== undefined ? { batchId } : {}),
    };
  }

  private continueConversation(
    event: Extract<SchedulerEvent, { type: 'continue' }>,
    now: number,
  ): SchedulerReply {
    if (
      event.commandId !== undefined &&
      (event.known !== undefined || this.knowsCommand(event.parent, event.commandId))
    ) {
      return this.spawn(
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
      this.conversations.get(event.conversationId) ??
      (event.stored?.id === event.conversationId ? event.stored : undefined);
    if (!conversation) return refused(refusals.noConversation(event.conversationId));
    if (conversation.state === 'released') {
      return refused(refusals.conversationReleased(conversation.id, conversation.releasedReason));
    }
    if (conversation.state === 'busy') {
      return refused(refusals.conversationBusy(conversation.id, conversation.latestRunId));
    }
    const reply = this.spawn(
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
      this.putConversation(conversation);
    }
    return reply;
  }

  // ── permits and starts ───────────────────────────────────────────────────────────────────────

  /**
   * A permit for a top-level run, and its launch when nothing would hold it back: no start waiting before
   * it, no stagger gap still running, no per-run stagger rule. Such a run is recorded once, starting and
   * launched (one run state, one record); otherwise it waits in `pendingLaunch` for `pump`.
   */
  private grantPermit(node: Node, now: number): void {
    this.permits.set(node.run.id, this.nextPermit++);
    if (node.run.provider !== undefined) this.permitProvider.set(node.run.id, node.run.provider);
    if (this.launchesAtOnce(now)) {
      this.lastLaunchAt = now;
      this.launchRun(node, { ...node.run, status: 'starting', launchedAt: now }, now);
      return;
    }
    this.transition(node, { ...node.run, status: 'starting' });
    this.persist(node.run);
    this.pendingLaunch.push(node.run.id);
  }

  /** Whether a start granted now launches in the same step (what `pump`'s launch loop would do next). */
  private launchesAtOnce(now: number): boolean {
    return this.pendingLaunch.length === 0 && this.limits.startsHere === undefined && !this.staggerHolds(now);
  }

  /** Whether the stagger's gap since the last launch is still running at `now`. */
  private staggerHolds(now: number): boolean {
    const { staggerMs } = this.limits;
    return staggerMs > 0 && this.lastLaunchAt !== undefined && now < this.lastLaunchAt + staggerMs;
  }

  /** Returns a top-level run's permit; a second release is a no-op. */
  private releasePermit(rootId: RunId): void {
    this.permits.delete(rootId);
    this.permitProvider.delete(rootId);
  }

  /**
   * Fills free permits from the queue in order (a run held back by the reservation gate lets a run behind
   * it that starts elsewhere pass), then launches what the stagger allows.
   */
  private pump(now: number): void {
    const room = Math.max(0, Math.min(this.limits.cap - this.permits.size, this.queue.size));
    if (room > 0 && (this.memory || this.providerCaps.size > 0)) {
      for (const node of this.startable(room, now)) {
        this.dequeue(node);
        this.grantPermit(node, now);
      }
    } else {
      for (let i = 0; i < room && this.queue.size > 0; i++) {
        const node = this.queue.peek() as Node;
        this.dequeue(node);
        this.grantPermit(node, now);
      }
    }
    const { startsHere } = this.limits;
    if (startsHere && this.pendingLaunch.length > 0) {
      // Starts the stagger does not space go at once, also past a staggered one still waiting.
      this.pendingLaunch = this.pendingLaunch.filter((id) => {
        const node = this.nodes.get(id);
        if (node && startsHere(node.run.parent)) return true;
        if (node) this.launch(node, now);
        return false;
      });
    }
    while (this.pendingLaunch.length > 0) {
      if (this.staggerHolds(now)) break;
      const id = this.pendingLaunch.shift() as RunId;
      const node = this.nodes.get(id);
      if (!node) continue;
      this.lastLaunchAt = now;
      this.launch(node, now);
    }
  }

  private launch(node: Node, now: number): void {
    if (node.run.status !== 'starting') return;
    this.launchRun(node, { ...node.run, launchedAt: now }, now);
  }

  /** Records `run` (the node's run, launched now) and asks for its launch. */
  private launchRun(node: Node, run: Run, now: number): void {
    this.transition(node, run);
    // Until the agent is ready the same span bounds its start; `started` sets the run's own deadline.
    this.setDeadline(node, now + this.limits.timeoutMs);
    this.persist(run);
    this.commands.push({ type: 'launch', runId: run.id });
  }

  private setDeadline(node: Node, at: number): void {
    node.deadlineAt = at;
    this.deadlines.push(at, node);
  }

  private enqueue(node: Node): void {
    this.queue.push(node);
    if (node.run.batchId !== undefined) this.queuedWaveMembers++;
    else this.queuedSingles++;
    if (!this.startsHere(node.run.parent)) this.queuedElsewhere++;
  }

  private dequeue(node: Node): void {
    if (!this.queue.delete(node)) return;
    if (node.run.batchId !== undefined) this.queuedWaveMembers--;
    else this.queuedSingles--;
    if (!this.startsHere(node.run.parent)) this.queuedElsewhere--;
  }

  /** Whether a top-level run of `parent` starts a process on this host (see `SchedulerLimits.startsHere`). */
  private startsHere(parent: ParentKey): boolean {
    return this.limits.startsHere?.(parent) ?? true;
  }

  /**
   * Whether a new top-level run of `parent` must queue behind runs already queued: any of them, for a run
   * that starts here (one FIFO); only those that start elsewhere too, for one that does not (a run waiting
   * for this host's memory holds nothing it needs).
   */
  private queuedAhead(parent: ParentKey): boolean {
    return this.startsHere(parent) ? this.queue.size > 0 : this.queuedElsewhere > 0;
  }

  private started(runId: RunId, now: number): SchedulerReply {
    const node = this.nodes.get(runId);
    const launched = node?.run.launchedAt;
    if (node?.run.status !== 'starting' || launched === undefined) {
      return refused(refusals.notLive(runId, undefined));
    }
    const running: Run = { ...node.run, status: 'running', launchedAt: launched, startedAt: now };
    this.transition(node, running);
    this.persist(running);
    // The timeout counts the agent's working time, as `duration_secs` does (started → ended).
    if (node.stopping === undefined) this.setDeadline(node, now + this.limits.timeoutMs);
    return DONE;
  }

  /** A tool call counts against the run's budget; at the budget the turn is stopped (first stop wins). */
  private toolCall(runId: RunId): SchedulerReply {
    const node = this.nodes.get(runId);
    if (!node || node.run.launchedAt === undefined) return refused(refusals.notLive(runId, undefined));
    node.toolCalls++;
    const budget = node.run.maxTurns ?? 0;
    if (budget > 0 && node.toolCalls >= budget && node.stopping === undefined) {
      node.stopping = 'turn_limit';
      this.commands.push({ type: 'stop', runId, reason: 'turn_limit' });
    }
    return DONE;
  }

  /**
   * A model call's tokens count against the run's budget; past it the turn is stopped, and the run ends
   * `completed` with `stop: token_budget` (first stop wins).
   */
  private countTokens(runId: RunId, tokens: number): SchedulerReply {
    const node = this.nodes.get(runId);
    if (!node || node.run.launchedAt === undefined) return refused(refusals.notLive(runId, undefined));
    node.tokens += Math.max(0, tokens);
    const budget = node.run.maxTokens ?? 0;
    if (budget > 0 && node.tokens > budget && node.stopping === undefined) {
      node.stopping = 'token_budget';
      this.commands.push({ type: 'stop', runId, reason: 'token_budget' });
    }
    return DONE;
  }

  /**
   * What is left of the token budgets of `node` and its live ancestors (the least of them), or undefined
   * when none of them has a budget: a nested run's budget is narrowed to it at admission.
   */
  private tokensLeft(node: Node): number | undefined {
    let left: number | undefined;
    for (let at: Node | undefined = node; at; ) {
      const budget = at.run.maxTokens ?? 0;
      if (budget > 0) left = Math.min(left ?? Number.POSITIVE_INFINITY, budget - at.tokens);
      const parentId = parentRunId(at.run.parent);
      at = parentId === undefined ? undefined : this.nodes.get(parentId);
    }
    return left;
  }

  /** A launch that never began: nothing runs, so the run ends `failed` at once (its permit returns). */
  private startFailed(runId: RunId, error: string, now: number): SchedulerReply {
    const node = this.nodes.get(runId);
    if (!node || node.run.launchedAt === undefined) return refused(refusals.notLive(runId, undefined));
    this.finishSubtree(node.run.id, error, now);
    return DONE;
  }

  // ── ends ─────────────────────────────────────────────────────────────────────────────────────

  private runnerEnded(event: Extract<SchedulerEvent, { type: 'ended' }>, now: number): SchedulerReply {
    const node = this.nodes.get(event.runId);
    if (!node || node.run.launchedAt === undefined) {
      // A second report, or one for a run that never launched: nothing to end twice.
      return refused(refusals.notLive(event.runId, undefined));
    }
    const outcome = endOutcome(node.stopping, event);
    this.finish(node, outcome.status, now, outcome.stop, outcome.error);
    return DONE;
  }

  /** The one terminal transition: record, announce, free the permit when the tree is done. */
  private finish(node: Node, status: TerminalStatus, now: number, stop?: StopNote, error?: string): void {
    const run = node.run;
    this.untrack(node);
    this.dequeue(node);
    if (run.status === 'starting' && run.launchedAt === undefined) {
      this.pendingLaunch = this.pendingLaunch.filter((id) => id !== run.id);
    }
    this.providerRunEnded(run, status, now);
    const ended: EndedRun = { ...run, status, endedAt: now };
    if (stop !== undefined) ended.stop = stop;
    if (error !== undefined) ended.error = error;
    this.persist(ended);

    const parentId = parentRunId(run.parent);
    if (parentId !== undefined) this.dropChild(parentId, run.id);
    // The root may end before its descendants; its permit waits for the last of them.
    if (--node.tree.live <= 0) this.releasePermit(run.rootId);

    this.announceEnd(ended);
    this.updateConversationOnEnd(ended, now);
    this.releaseCommand(ended);
    const metadata: Record<string, unknown> = { run_id: run.id, status };
    if (stop) metadata.stop = stop;
    if (error) metadata.error = error;
    this.sel('ended', metadata);
  }

  /** The command id's entry goes with the last of its runs. */
  private releaseCommand(run: EndedRun): void {
    if (run.commandId === undefined) return;
    const key = commandKey(run.parent, run.commandId);
    const entry = this.commandIndex.get(key);
    if (!entry) return; // admitted by a previous process: the store answers for it
    entry.live--;
    if (entry.live <= 0) this.commandIndex.delete(key);
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

  private cancel(runId: RunId, ended: RunStatus | undefined, now: number): SchedulerReply {
    const node = this.nodes.get(runId);
    if (!node) return refused(refusals.notLive(runId, ended));
    // Descendants first, so a parent's end never precedes its children's in the record.
    for (const id of this.subtree(runId).reverse()) this.stopOrEnd(id, 'cancel', now);
    return DONE;
  }

  /** A start failure of a run that may already have children: they are cancelled, it fails. */
  private finishSubtree(runId: RunId, error: string, now: number): void {
    for (const id of this.subtree(runId).reverse()) {
      if (id !== runId) this.stopOrEnd(id, 'cancel', now);
    }
    const node = this.nodes.get(runId);
    if (node) this.finish(node, 'failed', now, undefined, error);
  }

  private stopOrEnd(runId: RunId, reason: 'cancel' | 'timeout', now: number): void {
    const node = this.nodes.get(runId);
    if (!node || node.stopping !== undefined) return;
    if (node.run.launchedAt === undefined) {
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
      const node = this.deadlines.pop() as Node;
      if (node.deadlineAt !== at) continue;
      const runId = node.run.id;
      for (const id of this.subtree(runId).reverse())
        this.stopOrEnd(id, id === runId ? 'timeout' : 'cancel', now);
    }
  }

  private dropStaleDeadlines(): void {
    for (;;) {
      const node = this.deadlines.peekValue();
      if (node === undefined) return;
      if (node.deadlineAt === this.deadlines.peekKey() && node.stopping === undefined) return;
      this.deadlines.pop();
    }
  }

  private steer(
    runId: RunId,
    message: string,
    mode: 'interrupt' | 'follow_up',
    ended: RunStatus | undefined,
  ): SchedulerReply {
    const node = this.nodes.get(runId);
    if (!node) return refused(refusals.notLive(runId, ended));
    if (node.run.status !== 'running' || node.stopping !== undefined) {
      return refused(refusals.notSteerable(runId, node.stopping ? 'stopping' : node.run.status));
    }
    // Steering reaches the live run directly: it takes no permit and waits for nothing.
    this.commands.push({ type: 'steer', runId, message, mode });
    return DONE;
  }

  private release(event: Extract<SchedulerEvent, { type: 'release' }>, now: number): SchedulerReply {
    const { conversationId, reason } = event;
    const conversation =
      this.conversations.get(conversationId) ??
      (event.stored?.id === conversationId ? event.stored : undefined);
    if (!conversation) return refused(refusals.noConversation(conversationId));
    if (conversation.state === 'released') return refused(refusals.alreadyReleased(conversationId));
    if (conversation.state === 'busy') {
      return refused(refusals.releaseBusy(conversationId, conversation.latestRunId));
    }
    conversation.state = 'released';
    conversation.releasedReason = reason;
    conversation.lastUsedAt = now;
    this.putConversation(conversation);
    this.commands.push({ type: 'release_session', conversationId, agent: conversation.agent });
    this.sel('conversation_released', { conversation: conversationId, reason });
    return DONE;
  }

  // ── restart ──────────────────────────────────────────────────────────────────────────────────

  private restore(event: Extract<SchedulerEvent, { type: 'restore' }>, now: number): SchedulerReply {
    this.seq = Math.max(this.seq, event.nextSeq);
    // A run that held a permit but was never launched (the stagger held it back) created nothing: it
    // queues again, ahead of the queued runs it was admitted before, instead of ending lost.
    const unlaunched = event.executing.filter(
      (run) => run.status === 'starting' && run.launchedAt === undefined,
    );
    const executing = event.executing.filter((run) => !unlaunched.includes(run));
    const queued = [...event.queued, ...unlaunched].sort((a, b) => a.seq - b.seq);
    const queuedIds = new Set(queued.map((run) => run.id));
    // A kept conversation's session lived in a process of the previous gateway: continuing it now
    // answers conversation_released (not not_found), with the reason. One whose run is still queued
    // has no session yet, so it stays busy until that run ends.
    for (const conversation of event.conversations ?? []) {
      if (conversation.state === 'released') continue;
      if (queuedIds.has(conversation.latestRunId)) {
        this.conversations.set(conversation.id, { ...conversation, state: 'busy' });
        continue;
      }
      this.putConversation({
        ...conversation,
        state: 'released',
        releasedReason: 'the gateway restarted and its session ended',
        lastUsedAt: now,
      });
    }
    for (const wave of event.waves) {
      this.waves.set(wave.batchId, {
        parent: wave.parent,
        memberIds: wave.memberIds,
        remaining: wave.remaining,
      });
    }
    // Runs that were executing died with the previous process: each ends `lost`, once.
    for (const run of [...executing].sort((a, b) => b.depth - a.depth || a.seq - b.seq)) {
      // Its tree's other runs are gone too (each ends here), so it counts alone.
      const node = newNode(withEveryField(run), { live: 0 });
      this.track(node);
      this.finish(node, 'lost', now, undefined, 'the gateway restarted while this run was executing');
    }
    for (const run of queued) {
      const record: Run = { ...withEveryField(run), status: 'queued' };
      const node = newNode(record, { live: 0 });
      this.track(node);
      if (run.status !== 'queued') this.persist(record);
      this.enqueue(node);
      // Its command id is answered from the store (`known`), which holds the whole admission.
    }
    return DONE;
  }

  /**
   * How many of one spawn's top-level members (in order, at most `room`) may start at once: the provider
   * caps' room, and for runs that start here the reservation gate's.
   */
  private admissionRoom(
    room: number,
    members: readonly { agent: string; provider?: string | undefined }[],
    now: number,
    parent: ParentKey,
  ): number {
    if (room <= 0) return 0;
    room = Math.min(room, this.providerRoom(members, now));
    if (room <= 0 || !this.startsHere(parent) || !this.isGating()) return room;
    return Math.min(room, this.memoryRoom(members.slice(0, room)));
  }

  /**
   * Which queued runs may start now, at most `room`, in queue order. The candidates are the first `room`
   * runs that start here and the first `room` that start elsewhere (cluster proxies); of them a prefix by
   * the provider caps, and within it every run that starts elsewhere and as many runs here from the front
   * as the reservation gate lets (a run here held back holds the runs here behind it, not the others).
   */
  private startable(room: number, now: number): Node[] {
    const heads: Node[] = [];
    const wantHere = Math.min(room, this.queue.size - this.queuedElsewhere);
    const wantElsewhere = Math.min(room, this.queuedElsewhere);
    let here = 0;
    let elsewhere = 0;
    for (const node of this.queue) {
      if (this.startsHere(node.run.parent)) {
        if (here++ < wantHere) heads.push(node);
      } else if (elsewhere++ < wantElsewhere) {
        heads.push(node);
      }
      if (here >= wantHere && elsewhere >= wantElsewhere) break;
    }
    const runs = heads.map((node) => node.run);
    const candidates = heads.slice(0, this.providerRoom(runs, now));
    let allowed = this.memoryRoom(
      candidates.filter((node) => this.startsHere(node.run.parent)).map((node) => node.run),
    );
    return candidates.filter((node) => !this.startsHere(node.run.parent) || allowed-- > 0).slice(0, room);
  }

  /** Whether the reservation gate holds anything back: it needs a memory sample and a buffer. */
  private isGating(): boolean {
    return this.memory !== undefined && this.limits.reservationBufferGb !== undefined;
  }

  /**
   * The reservation gate: how many of `next` (runs that would start a process here, in order) may start
   * now, given the memory the live runs here (nested ones too; not the proxies of runs that execute
   * elsewhere) may still grow into. No samples, no gate.
   */
  private memoryRoom(next: readonly { agent: string }[]): number {
    const sample = this.memory;
    const bufferGb = this.limits.reservationBufferGb;
    if (!sample || bufferGb === undefined) return next.length;
    const expected = (agent: string) => sample.expectedGb[agent] ?? this.limits.fallbackCostGb ?? 0.5;
    const spread = (agent: string) => sample.spreadGb?.[agent] ?? 0;
    const runs: LiveRunMemory[] = [];
    for (const node of this.nodes.values()) {
      const { run } = node;
      if (run.status === 'queued' || (run.depth === 1 && !this.startsHere(run.parent))) continue;
      runs.push({
        expectedGb: expected(run.agent),
        spreadGb: spread(run.agent),
        currentGb: sample.currentGb[run.id] ?? 0,
        settledGb: sample.settledGb?.[run.id],
      });
    }
    return reserveStarts({
      availableGb: sample.availableGb,
      runs,
      nextExpectedGb: next.map((run) => expected(run.agent)),
      nextSpreadGb: next.map((run) => spread(run.agent)),
      bufferGb,
    }).startsAllowed;
  }

  // ── the provider cap ──────────────────────────────────────────────────────────────────────────

  /**
   * How many of `next`, from the front, each provider's cap and hold let start now. The first that may not
   * stops the count: the queue is FIFO across providers (one provider's hold keeps the runs behind it
   * waiting too; most hosts call one provider).
   */
  private providerRoom(next: readonly { provider?: string | undefined }[], now: number): number {
    const policy = this.limits.provider;
    if (!policy) return next.length;
    const starting = new Map<string, number>();
    let room = 0;
    for (const run of next) {
      if (run.provider !== undefined && capSourceOf(policy, run.provider) !== undefined) {
        const state = this.providerCap(run.provider);
        const extra = starting.get(run.provider) ?? 0;
        if (providerStartsAllowed(state, now, this.providerRunning(run.provider) + extra) <= 0) break;
        starting.set(run.provider, extra + 1);
      }
      room++;
    }
    return room;
  }

  private providerCap(provider: string): ProviderCapState {
    let state = this.providerCaps.get(provider);
    if (!state) {
      const policy = this.limits.provider ?? { initialCap: this.limits.cap, maxCap: this.limits.cap };
      state = initialProviderCap(policyFor(policy, provider));
      this.providerCaps.set(provider, state);
    }
    return state;
  }

  /** Top-level runs holding a permit against `provider` (their trees run under it). */
  private providerRunning(provider: string): number {
    let running = 0;
    for (const p of this.permitProvider.values()) if (p === provider) running++;
    return running;
  }

  private providerLimited(
    event: Extract<SchedulerEvent, { type: 'provider_limited' }>,
    now: number,
  ): SchedulerReply {
    const policy = this.limits.provider;
    const rootId = event.runId === undefined ? undefined : this.nodes.get(event.runId)?.run.rootId;
    // Only a live root: an entry for one that ended would never be removed.
    if (rootId !== undefined && this.nodes.has(rootId)) this.limitedRuns.add(rootId);
    if (!policy) return DONE;
    const source = capSourceOf(policy, event.provider);
    if (source === undefined) return DONE;
    const before = this.providerCap(event.provider);
    const after = onRateLimited(before, policyFor(policy, event.provider), {
      now,
      ...(event.retryAfterMs !== undefined ? { retryAfterMs: event.retryAfterMs } : {}),
      running: this.providerRunning(event.provider),
    });
    // A configured cap is the operator's: the 429 holds starts, but the cap stays.
    this.providerCaps.set(event.provider, source === 'configured' ? { ...after, cap: before.cap } : after);
    return DONE;
  }

  /** A top-level run ended: a clean completion (no 429 in its tree) lets its provider's cap climb. */
  private providerRunEnded(run: Run, status: TerminalStatus, now: number): void {
    const limited = this.limitedRuns.delete(run.id);
    const policy = this.limits.provider;
    if (!policy || run.provider === undefined || run.depth !== 1 || status !== 'completed' || limited) return;
    this.providerCaps.set(
      run.provider,
      onCleanCompletion(this.providerCap(run.provider), policyFor(policy, run.provider), {
        running: this.providerRunning(run.provider),
        now,
      }),
    );
  }

  /** Each provider's cap, hold and running count, for `resource_status`. */
  providerStatus(): Record<string, ProviderStatus> {
    const out: Record<string, ProviderStatus> = {};
    const policy = this.limits.provider;
    for (const [provider, state] of this.providerCaps) {
      const source = policy && capSourceOf(policy, provider);
      if (source === undefined) continue;
      out[provider] = {
        cap: state.cap,
        source,
        holdUntil: state.holdUntil,
        running: this.providerRunning(provider),
        ...(state.lastRateLimitedAt !== undefined ? { lastRateLimitedAt: state.lastRateLimitedAt } : {}),
      };
    }
    return out;
  }

  /** Whether a queued run waits for its provider (cap reached or starts held) rather than for a permit. */
  waitsForProvider(run: Run, now: number): { holdUntil?: number } | undefined {
    if (!this.limits.provider || run.status !== 'queued' || run.provider === undefined) return undefined;
    if (capSourceOf(this.limits.provider, run.provider) === undefined) return undefined;
    const state = this.providerCaps.get(run.provider);
    if (!state) return undefined;
    if (now < state.holdUntil) return { holdUntil: state.holdUntil };
    return this.providerRunning(run.provider) >= state.cap ? {} : undefined;
  }

  // ── undoing an admission whose store write failed ─────────────────────────────────────────────

  /** What an admission changes besides adding its members: restored by {@link unadmit}. */
  private admissionMark(event: Extract<SchedulerEvent, { type: 'spawn' | 'continue' }>): AdmissionMark {
    const conversation = event.type === 'continue' ? this.conversations.get(event.conversationId) : undefined;
    // Assigned, not spread: every admission makes one.
    const mark: AdmissionMark = { seq: this.seq, lastLaunchAt: this.lastLaunchAt };
    if (event.commandId !== undefined) mark.commandKey = commandKey(event.parent, event.commandId);
    if (event.type === 'spawn' && event.batchId !== undefined) mark.batchId = event.batchId;
    if (conversation) mark.conversation = { ...conversation };
    return mark;
  }

  /** Removes the members an admission added, newest first, and restores what it changed. */
  private unadmit(mark: AdmissionMark, ids: readonly RunId[]): void {
    for (const id of [...ids].reverse()) {
      const node = this.nodes.get(id);
      if (!node) continue;
      this.dequeue(node);
      this.untrack(node);
      this.permits.delete(id);
      this.permitProvider.delete(id);
      this.pendingLaunch = this.pendingLaunch.filter((pending) => pending !== id);
      node.tree.live--;
      const parentId = parentRunId(node.run.parent);
      if (parentId !== undefined) this.dropChild(parentId, id);
      // A kept member's conversation was created by this admission.
      if (node.run.keep && node.run.conversationId === undefined) this.conversations.delete(id);
    }
    if (mark.batchId !== undefined) this.waves.delete(mark.batchId);
    if (mark.commandKey !== undefined) this.commandIndex.delete(mark.commandKey);
    if (mark.conversation) this.conversations.set(mark.conversation.id, mark.conversation);
    this.seq = mark.seq;
    this.lastLaunchAt = mark.lastLaunchAt;
  }

  // ── bookkeeping ──────────────────────────────────────────────────────────────────────────────

  private track(node: Node): void {
    this.nodes.set(node.run.id, node);
    this.count(node.run, 1);
  }

  private untrack(node: Node): void {
    node.deadlineAt = undefined; // its entry in `deadlines`, if any, is stale now
    if (this.nodes.delete(node.run.id)) this.count(node.run, -1);
  }

  /** A child no longer live under its parent; a parent with none left holds no set (as before its first). */
  private dropChild(parentId: RunId, childId: RunId): void {
    const parent = this.nodes.get(parentId);
    if (parent?.children === undefined) return;
    parent.children.delete(childId);
    if (parent.children.size === 0) parent.children = undefined;
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
    if (run.depth === 1 && (run.status === 'starting' || run.status === 'running'))
      this.topLevelExecuting += delta;
  }

  // ── outputs ──────────────────────────────────────────────────────────────────────────────────

  /**
   * Records a run's new state. A run object is never changed once made (each transition makes a new
   * one), so the command carries it as is: no copy per state change.
   */
  private persist(run: Run): void {
    this.commands.push({ type: 'persist', run });
  }

  /** Records a conversation's new state; a released one is forgotten here (the store answers for it). */
  private putConversation(conversation: Conversation): void {
    if (conversation.state === 'released') this.conversations.delete(conversation.id);
    else this.conversations.set(conversation.id, conversation);
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

function commandKey(parent: ParentKey, commandId: string): string {
  return `${parent}\n${commandId}`;
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
