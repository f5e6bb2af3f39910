import type { Refusal } from '../errors.js';
import type { FifoLinks } from '../fifo.js';
import type { Conversation, SchedulerReply, StopCause } from '../scheduler-types.js';
import type { ParentKey, Run, RunId } from '../types.js';

/** A live run and the bookkeeping admission needs about it (queued: its links in the queue). */
export interface Node extends FifoLinks<Node> {
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

/** What an admission changes besides adding its members: restored when its store write fails. */
export interface AdmissionMark {
  seq: number;
  lastLaunchAt: number | undefined;
  commandKey?: string;
  batchId?: string;
  /** A continued conversation as it was before the admission. */
  conversation?: Conversation;
}

export interface Wave {
  parent: ParentKey;
  memberIds: RunId[];
  remaining: number;
}

/** Live runs in one tree (the top-level run itself included); the root's permit returns at 0. */
export interface Tree {
  live: number;
}

/** A node for a run just tracked, counted live in `tree`: every field set, so all nodes share one shape. */
export function newNode(run: Run, tree: Tree): Node {
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

export const DONE: SchedulerReply = { kind: 'done', ok: true };

export function refused(refusal: Refusal): SchedulerReply {
  return { kind: 'refused', ok: false, refusal };
}

/** The command index's key: a command id names runs of its own parent only. */
export function commandKey(parent: ParentKey, commandId: string): string {
  return `${parent}\n${commandId}`;
}
