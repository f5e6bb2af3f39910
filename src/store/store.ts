import type { Conversation, RestoredWave } from '../core/scheduler-types.js';
import type { DeliveryStatus, ParentKey, Run, RunId, RunSpec } from '../core/types.js';

/**
 * The Store port: runs, waves, conversations and the outbox (DESIGN §3, §6). Every `apply` is one
 * atomic unit (one SQLite transaction, `BEGIN IMMEDIATE`), so a run's terminal record and its outbox
 * event are written together or not at all. `now` comes in; a store never reads the clock.
 *
 * Left out: transcripts (files beside the store), scheduling decisions (the core), delivery attempts
 * (the relay decides; the store only records outcomes).
 */
export interface Store {
  /** Applies one step's writes atomically. Terminal records are fenced by `epoch` (see {@link StoreTx}). */
  apply(tx: StoreTx): void;
  run(id: RunId): RunRecord | undefined;
  /** Runs, newest first; `parent` filters to runs whose parent key is one of those given. */
  runs(query?: RunQuery): RunRecord[];
  /** Outbox events in creation order. */
  outbox(query: OutboxQuery): OutboxEvent[];
  outboxEvent(id: string): OutboxEvent | undefined;
  /** What a new gateway needs to recover: queued runs, runs that were executing, open waves. */
  restartState(): RestartState;
  /** Begins a new owner epoch (one per gateway start); runs launched from now on carry it. */
  nextEpoch(): number;
  close(): void;
}

export interface RunQuery {
  parents?: ParentKey[];
  ids?: RunId[];
  live?: boolean;
  limit?: number;
}

export interface OutboxQuery {
  state?: OutboxState;
  parent?: ParentKey;
  limit?: number;
}

/** A run as stored: the scheduler's record plus what the gateway learned while it ran. */
export interface RunRecord {
  run: Run;
  spec: RunSpec;
  delivery: DeliveryStatus;
  /** The gateway start (owner epoch) that launched it. */
  epoch?: number;
  pid?: number;
  startTime?: number;
  resultPath?: string;
  resultChars?: number;
  peakMemGb?: number;
  /** Set when the transcript was pruned by the reaper. */
  prunedAt?: number;
  deliveredAt?: number;
}

export type OutboxState = 'pending' | 'delivered' | 'undeliverable';

/** One completion event (or a wave's digest) for one parent; its text is rendered at delivery. */
export interface OutboxEvent {
  id: string;
  parent: ParentKey;
  kind: 'completion' | 'digest' | 'notice';
  runIds: RunId[];
  batchId?: string;
  createdAt: number;
  state: OutboxState;
  attempts: number;
  settledAt?: number;
}

export interface RunInfoUpdate {
  id: RunId;
  pid?: number;
  startTime?: number;
  resultPath?: string;
  resultChars?: number;
  peakMemGb?: number;
  prunedAt?: number;
}

export interface StoreTx {
  /** Specs of newly admitted runs (written once). */
  newRuns?: { run: Run; spec: RunSpec }[];
  /** New states of existing runs. A terminal state for a run launched under another epoch is dropped. */
  runs?: Run[];
  conversations?: Conversation[];
  outbox?: OutboxEvent[];
  /** Outbox outcomes; the runs an event names take its state as their delivery status. */
  settle?: { eventId: string; state: 'delivered' | 'undeliverable'; at: number }[];
  attempts?: { eventId: string }[];
  runInfo?: RunInfoUpdate[];
  /** Runs this writer takes over before its run updates apply (restart: the new gateway ends them `lost`). */
  claim?: RunId[];
  /** The owner epoch of the writer; launches record it, terminal records must match it. */
  epoch: number;
}

export interface RestartState {
  queued: Run[];
  executing: RunRecord[];
  waves: RestoredWave[];
  nextSeq: number;
  conversations: Conversation[];
}
