import { LinkedFifo } from '../fifo.js';
import type { Announcement, Conversation, SchedulerCommand, SchedulerLimits } from '../scheduler-types.js';
import type { ParentKey, Run, RunId } from '../types.js';
import type { Node, Wave } from './run-node.js';

/**
 * The state every seam of the scheduler reads: the live runs (`nodes`), the queue of top-level runs, the
 * waves, command ids and conversations of live admissions, and the step's commands as they accumulate.
 * Every change of a run's status goes through {@link transition} (its counts stay exact); every output
 * through {@link persist}, {@link putConversation}, {@link announce} and {@link sel}.
 */
export class RunTable {
  readonly nodes = new Map<RunId, Node>();
  /** FIFO of queued top-level runs: O(1) to take the head or remove a cancelled run from the middle. */
  readonly queue = new LinkedFifo<Node>();
  queuedSingles = 0;
  queuedWaveMembers = 0;
  /**
   * Queued top-level runs that start elsewhere (cluster proxies, see `SchedulerLimits.startsHere`): a new one
   * queues behind these, not behind runs waiting for this host's memory.
   */
  queuedElsewhere = 0;
  readonly waves = new Map<string, Wave>();
  /**
   * Command ids of this process's admissions with live runs, by parent (a key names runs of its own
   * parent only). An entry goes when its last run ends: the store answers for ended ones (`known`).
   */
  readonly commandIndex = new Map<string, { runIds: RunId[]; batchId?: string; live: number }>();
  readonly conversations = new Map<string, Conversation>();
  seq = 0;
  commands: SchedulerCommand[] = [];
  /** Live runs by status, kept on every transition so status views cost O(1). */
  readonly statusCounts = { queued: 0, starting: 0, running: 0 };
  /** Top-level runs starting or running (each holds a permit; nested runs run under their ancestor's). */
  topLevelExecuting = 0;

  constructor(readonly limits: SchedulerLimits) {}

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

  enqueue(node: Node): void {
    this.queue.push(node);
    if (node.run.batchId !== undefined) this.queuedWaveMembers++;
    else this.queuedSingles++;
    if (!this.startsHere(node.run.parent)) this.queuedElsewhere++;
  }

  dequeue(node: Node): void {
    if (!this.queue.delete(node)) return;
    if (node.run.batchId !== undefined) this.queuedWaveMembers--;
    else this.queuedSingles--;
    if (!this.startsHere(node.run.parent)) this.queuedElsewhere--;
  }

  /** Whether a top-level run of `parent` starts a process on this host (see `SchedulerLimits.startsHere`). */
  startsHere(parent: ParentKey): boolean {
    return this.limits.startsHere?.(parent) ?? true;
  }

  /**
   * Whether a new top-level run of `parent` must queue behind runs already queued: any of them, for a run
   * that starts here (one FIFO); only those that start elsewhere too, for one that does not (a run waiting
   * for this host's memory holds nothing it needs).
   */
  queuedAhead(parent: ParentKey): boolean {
    return this.startsHere(parent) ? this.queue.size > 0 : this.queuedElsewhere > 0;
  }

  // ── bookkeeping ──────────────────────────────────────────────────────────────────────────────

  track(node: Node): void {
    this.nodes.set(node.run.id, node);
    this.count(node.run, 1);
  }

  untrack(node: Node): void {
    node.deadlineAt = undefined; // its entry in `deadlines`, if any, is stale now
    if (this.nodes.delete(node.run.id)) this.count(node.run, -1);
  }

  /** A child no longer live under its parent; a parent with none left holds no set (as before its first). */
  dropChild(parentId: RunId, childId: RunId): void {
    const parent = this.nodes.get(parentId);
    if (parent?.children === undefined) return;
    parent.children.delete(childId);
    if (parent.children.size === 0) parent.children = undefined;
  }

  transition(node: Node, run: Run): void {
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
  persist(run: Run): void {
    this.commands.push({ type: 'persist', run });
  }

  /** Records a conversation's new state; a released one is forgotten here (the store answers for it). */
  putConversation(conversation: Conversation): void {
    if (conversation.state === 'released') this.conversations.delete(conversation.id);
    else this.conversations.set(conversation.id, conversation);
    this.commands.push({ type: 'persist_conversation', conversation: { ...conversation } });
  }

  announce(announcement: Announcement): void {
    this.commands.push({ type: 'announce', announcement });
  }

  sel(outcome: Extract<SchedulerCommand, { type: 'sel' }>['outcome'], metadata: Record<string, unknown>) {
    this.commands.push({ type: 'sel', outcome, metadata });
  }
}
