import type { ErrorKind } from '../core/error-kind.js';
import type { Conversation, RestoredWave } from '../core/scheduler-types.js';
import type { DeliveryStatus, ParentKey, Run, RunId, RunSpec } from '../core/types.js';
import type { WorkspaceFacts } from '../core/workspace-facts.js';
import type { ChatRecord } from './chat-record.js';

/**
 * The Store port: runs, waves, conversations and the outbox (DESIGN §3, §6). Every `apply` is one
 * atomic unit (one SQLite transaction, `BEGIN IMMEDIATE`), so a run's terminal record and its outbox
 * event are written together or not at all. `now` comes in; a store never reads the clock.
 *
 * Left out: transcripts (files beside the store), scheduling decisions (the core), delivery attempts
 * (the relay decides; the store only records outcomes).
 */
export interface Store {
  /**
   * Applies one step's writes atomically. Terminal records are fenced by `epoch` (see {@link StoreTx}).
   * The store may keep the runs, specs and conversations it is given without a copy: a caller never
   * changes them afterwards (a scheduler `Run` is immutable; a spec is fixed at admission).
   */
  apply(tx: StoreTx): void;
  run(id: RunId): RunRecord | undefined;
  /** Runs, newest first; `parent` filters to runs whose parent key is one of those given. */
  runs(query?: RunQuery): RunRecord[];
  /** Runs per status (the dashboard's header while its read model of history fills). */
  statusCounts(): Map<string, number>;
  /** Outbox events in creation order. */
  outbox(query: OutboxQuery): OutboxEvent[];
  outboxEvent(id: string): OutboxEvent | undefined;
  /** A kept conversation in its latest state (released ones too, until history drops them). */
  conversation(id: string): Conversation | undefined;
  /**
   * What a new gateway needs to recover: queued runs, runs that were executing, open waves, and the
   * conversations not yet released. Proportional to what is live, never to history.
   */
  restartState(): RestartState;
  /**
   * One page of the settled runs whose transcript has not been pruned yet, oldest first: at most `limit`
   * of those recorded after the cursor `after` (0: from the first). Pass the page's `next` to read on; a
   * page shorter than `limit` is the last. The reaper reads the history it inherits at start this way, a
   * page at a time, so a restart costs nothing in proportion to it (issue 32 §4).
   */
  unprunedSettled(after: number, limit: number): UnprunedPage;
  /**
   * Deletes history in one transaction (DESIGN: long-lived means bounded). It walks runs oldest first (the
   * order they were recorded) and deletes each one that has ended, is settled and belongs to no
   * conversation in `protect` (a kept conversation's runs live as long as it does); it stops after
   * `limit` deletions, or at the first run admitted at or after `admittedBefore` while the store holds no
   * more than `keepRuns` runs. With each run go its spec, the settled events that start with it and its
   * conversation once released.
   */
  pruneHistory(options: HistoryPrune): PrunedHistory;
  /** Open hosted chats (issue 12 §4) in the order first saved. */
  chats(): ChatRecord[];
  /** Writes a chat's latest state (new, or replacing the last one), in one transaction. */
  saveChat(record: ChatRecord): void;
  /** Forgets a chat (it closed); an unknown id is a no-op. One transaction. */
  deleteChat(id: string): void;
  /** Begins a new owner epoch (one per gateway start); runs launched from now on carry it. */
  nextEpoch(): number;
  /** What the store has done, counted by itself (benchmarks claim from this, not by assumption). */
  stats(): StoreStats;
  close(): void;
}

export interface StoreStats {
  /** Write transactions committed: `apply`, `pruneHistory`, `nextEpoch`, `saveChat` and `deleteChat` calls. */
  transactions: number;
}

export interface UnprunedPage {
  runs: UnprunedRun[];
  /** The cursor after this page's last run (opaque: only for the next call); `after` when it is empty. */
  next: number;
}

export interface UnprunedRun {
  id: RunId;
  /** When its event settled (delivered or undeliverable). */
  settledAt: number;
  /** It belongs to a kept conversation (its transcript lives as long as the conversation). */
  kept: boolean;
}

export interface HistoryPrune {
  /** Runs admitted before this instant go (once ended and settled). */
  admittedBefore: number;
  /** Beyond this many runs, the oldest ended and settled ones go. */
  keepRuns: number;
  /** At most this many runs per call (one bounded transaction). */
  limit: number;
  /** Conversation ids whose runs stay. */
  protect: readonly string[];
}

export interface PrunedHistory {
  runs: { id: RunId; transcriptPruned: boolean }[];
  /** Outbox events deleted with them. */
  events: number;
  conversationIds: string[];
}

export interface RunQuery {
  parents?: ParentKey[];
  ids?: RunId[];
  /** Runs admitted with this idempotency key. */
  commandId?: string;
  /** Members of this wave. */
  batchId?: string;
  live?: boolean;
  /** Runs recorded before this one (a cursor for reading history newest first, a page at a time). */
  before?: RunId;
  limit?: number;
}

export interface OutboxQuery {
  state?: OutboxState;
  parent?: ParentKey;
  limit?: number;
  /** Events whose first run is this one (a run's completion event, or its wave's digest). */
  firstRun?: RunId;
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
  /** Bytes of the run's output lost to failed transcript writes (a full disk); absent when none. */
  transcriptGapBytes?: number;
  peakMemGb?: number;
  /** The typed cause of a failure (`error_kind`), read from the agent's error. */
  errorKind?: ErrorKind;
  /** The agent's last `usage_update`: tokens in use, the context size, and the cost when given. */
  usageTokens?: number;
  usageContextTokens?: number;
  usageCostUsd?: number;
  /** What the provider gateway counted for the run's model calls (issue 17). */
  providerUsage?: ProviderUsage;
  /** Cluster mode: the gateway that executes it (its transcript lives there). */
  host?: string;
  /** Set when the transcript was pruned by the reaper. */
  prunedAt?: number;
  deliveredAt?: number;
  /** When a person acknowledged its completion event (dashboard, Slack). */
  ackedAt?: number;
  /** Its isolated workspace (issue 31): branch, base, head, changes, conflicts. */
  workspace?: WorkspaceFacts;
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
  /** When a person acknowledged it (dashboard, Slack); once. */
  ackedAt?: number;
}

export interface RunInfoUpdate {
  id: RunId;
  pid?: number;
  startTime?: number;
  resultPath?: string;
  resultChars?: number;
  transcriptGapBytes?: number;
  peakMemGb?: number;
  errorKind?: ErrorKind;
  usageTokens?: number;
  usageContextTokens?: number;
  usageCostUsd?: number;
  providerUsage?: ProviderUsage;
  host?: string;
  prunedAt?: number;
  /** Replaces the run's workspace facts. */
  workspace?: WorkspaceFacts;
}

/** A run's model calls as the provider gateway counted them: tokens from the responses, requests, 429s. */
export interface ProviderUsage {
  inputTokens: number;
  outputTokens: number;
  requests: number;
  /** Answers 429 / 529 / 503. */
  rateLimited: number;
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
  /** Acknowledgements of events (the first one counts); the runs an event names take its `ackedAt`. */
  acks?: { eventId: string; at: number }[];
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
  /**
   * Past every live run's seq and the newest record's (seqs only order live runs; ended ones may share
   * theirs with later runs once pruned). Not a maximum over history, so a restart reads no history.
   */
  nextSeq: number;
  /** Conversations not released, in the order first recorded. */
  conversations: Conversation[];
}

/** The conversation a run belongs to: the one it continues, or its own when it was started kept. */
export function conversationOf(run: Run): string | undefined {
  return run.conversationId ?? (run.keep ? run.id : undefined);
}
