import type { Conversation, RestoredWave } from '../core/scheduler-types.js';
import { isTerminal, type Run, type RunId } from '../core/types.js';
import type { ChatRecord } from './chat-record.js';
import {
  conversationOf,
  type HistoryPrune,
  type OutboxEvent,
  type OutboxQuery,
  type PrunedHistory,
  type RestartState,
  type RunInfoUpdate,
  type RunQuery,
  type RunRecord,
  type Store,
  type StoreStats,
  type StoreTx,
  type UnprunedPage,
} from './store.js';

/**
 * The Store port in memory: the default for tests and benchmarks, and the reference the SQLite store's
 * conformance suite is checked against. `apply` validates the whole transaction before writing any of
 * it, so a failed apply leaves nothing behind (atomicity). Runs and specs handed to `apply` are kept
 * without a copy (the port's contract: a caller never changes them afterwards); what the store changes
 * in place (its records, its events) are its own objects, and every read answers a copy.
 */
export class MemoryStore implements Store {
  private readonly records = new Map<RunId, RunRecord>();
  /** Each run's place in the order first written: the cursor of `unprunedSettled`, as SQLite's `ord`. */
  private readonly ords = new Map<RunId, number>();
  private lastOrd = 0;
  private readonly events = new Map<string, OutboxEvent>();
  private readonly conversations = new Map<string, Conversation>();
  private readonly chatRecords = new Map<string, string>();
  private epoch = 0;
  private transactions = 0;

  apply(tx: StoreTx): void {
    // An id repeated inside the transaction counts as existing too: the second write would replace the first.
    // One new run or event (the common step) needs no set to find a repeat within the transaction.
    if (tx.newRuns !== undefined) {
      const newIds = tx.newRuns.length > 1 ? new Set<RunId>() : undefined;
      for (const { run } of tx.newRuns) {
        // Internal: ids are generated unique; a duplicate is a bug (the SQLite store throws the same).
        if (this.records.has(run.id) || newIds?.has(run.id)) throw new Error(`run ${run.id} already exists`);
        newIds?.add(run.id);
      }
    }
    if (tx.outbox !== undefined) {
      const newEvents = tx.outbox.length > 1 ? new Set<string>() : undefined;
      for (const event of tx.outbox) {
        if (this.events.has(event.id) || newEvents?.has(event.id)) {
          // Internal, as above.
          throw new Error(`outbox event ${event.id} already exists`);
        }
        newEvents?.add(event.id);
      }
    }
    for (const { run, spec } of tx.newRuns ?? []) {
      // Held as given, not copied: a `Run` is immutable (each scheduler step makes a new one) and a spec is
      // never changed after admission; readers get copies (`run`, `runs`), so nobody can change these.
      const record: RunRecord = { run, spec, delivery: 'pending' };
      // A run launched in its admission step is recorded launched here, so it takes the epoch here.
      if (isLaunched(run)) record.epoch = tx.epoch;
      this.records.set(run.id, record);
      this.ords.set(run.id, ++this.lastOrd);
    }
    for (const id of tx.claim ?? []) {
      const record = this.records.get(id);
      if (record) record.epoch = tx.epoch;
    }
    for (const run of tx.runs ?? []) {
      const record = this.records.get(run.id);
      if (!record) continue;
      if (isTerminal(record.run.status)) continue; // ended exactly once
      if (isTerminal(run.status) && record.epoch !== undefined && record.epoch !== tx.epoch) continue; // fenced
      if (isLaunched(run) && record.epoch === undefined) record.epoch = tx.epoch;
      record.run = run;
    }
    for (const conversation of tx.conversations ?? [])
      this.conversations.set(conversation.id, { ...conversation });
    for (const event of tx.outbox ?? []) this.events.set(event.id, cloneEvent(event));
    for (const { eventId } of tx.attempts ?? []) {
      const event = this.events.get(eventId);
      if (event) event.attempts++;
    }
    for (const settle of tx.settle ?? []) {
      const event = this.events.get(settle.eventId);
      if (event?.state !== 'pending') continue;
      event.state = settle.state;
      event.settledAt = settle.at;
      for (const id of event.runIds) {
        const record = this.records.get(id);
        if (record) {
          record.delivery = settle.state;
          record.deliveredAt = settle.at;
        }
      }
    }
    for (const ack of tx.acks ?? []) {
      const event = this.events.get(ack.eventId);
      if (!event || event.ackedAt !== undefined) continue;
      event.ackedAt = ack.at;
      for (const id of event.runIds) {
        const record = this.records.get(id);
        if (record && record.ackedAt === undefined) record.ackedAt = ack.at;
      }
    }
    for (const info of tx.runInfo ?? []) {
      const record = this.records.get(info.id);
      if (record) assignInfo(record, info);
    }
    this.transactions++;
  }

  run(id: RunId): RunRecord | undefined {
    const record = this.records.get(id);
    return record ? clone(record) : undefined;
  }

  runs(query: RunQuery = {}): RunRecord[] {
    const out: RunRecord[] = [];
    const parents = query.parents ? new Set(query.parents) : undefined;
    const ids = query.ids ? new Set(query.ids) : undefined;
    let all = [...this.records.values()].reverse();
    if (query.before !== undefined) {
      const at = all.findIndex((r) => r.run.id === query.before);
      all = at < 0 ? [] : all.slice(at + 1);
    }
    for (const record of all) {
      if (parents && !parents.has(record.run.parent)) continue;
      if (ids && !ids.has(record.run.id)) continue;
      if (query.commandId !== undefined && record.run.commandId !== query.commandId) continue;
      if (query.batchId !== undefined && record.run.batchId !== query.batchId) continue;
      if (query.live !== undefined && query.live === isTerminal(record.run.status)) continue;
      if (query.limit !== undefined && out.length >= query.limit) break;
      out.push(clone(record));
    }
    return out;
  }

  statusCounts(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const { run } of this.records.values()) counts.set(run.status, (counts.get(run.status) ?? 0) + 1);
    return counts;
  }

  outbox(query: OutboxQuery): OutboxEvent[] {
    const out: OutboxEvent[] = [];
    for (const event of this.events.values()) {
      if (query.state !== undefined && event.state !== query.state) continue;
      if (query.parent !== undefined && event.parent !== query.parent) continue;
      if (query.firstRun !== undefined && event.runIds[0] !== query.firstRun) continue;
      if (query.limit !== undefined && out.length >= query.limit) break;
      out.push(cloneEvent(event));
    }
    return out;
  }

  outboxEvent(id: string): OutboxEvent | undefined {
    const event = this.events.get(id);
    return event ? cloneEvent(event) : undefined;
  }

  restartState(): RestartState {
    const queued: Run[] = [];
    const executing: RunRecord[] = [];
    let nextSeq = 0;
    let newest: Run | undefined;
    const waves = new Map<string, RestoredWave>();
    for (const record of this.records.values()) {
      const run = record.run;
      newest = run;
      if (!isTerminal(run.status)) nextSeq = Math.max(nextSeq, run.seq + 1);
      if (run.status === 'queued') queued.push({ ...run });
      else if (!isTerminal(run.status)) executing.push(clone(record));
      if (run.batchId !== undefined) {
        const wave = waves.get(run.batchId) ?? {
          batchId: run.batchId,
          parent: run.parent,
          memberIds: [],
          remaining: 0,
        };
        wave.memberIds.push(run.id);
        if (!isTerminal(run.status)) wave.remaining++;
        waves.set(run.batchId, wave);
      }
    }
    if (newest) nextSeq = Math.max(nextSeq, newest.seq + 1);
    return {
      // Admission order; the sort is stable, so equal seqs keep the order they were recorded in.
      queued: queued.sort((a, b) => a.seq - b.seq),
      executing,
      waves: [...waves.values()].filter((w) => w.remaining > 0),
      nextSeq,
      conversations: [...this.conversations.values()]
        .filter((c) => c.state !== 'released')
        .map((c) => ({ ...c })),
    };
  }

  conversation(id: string): Conversation | undefined {
    const conversation = this.conversations.get(id);
    return conversation ? { ...conversation } : undefined;
  }

  unprunedSettled(after: number, limit: number): UnprunedPage {
    const runs: UnprunedPage['runs'] = [];
    let next = after;
    for (const record of this.records.values()) {
      if (runs.length >= limit) break;
      const ord = this.ords.get(record.run.id) ?? 0;
      if (ord <= after) continue;
      if (isTerminal(record.run.status) && record.delivery !== 'pending' && record.prunedAt === undefined) {
        runs.push({
          id: record.run.id,
          settledAt: record.deliveredAt ?? 0,
          kept: conversationOf(record.run) !== undefined,
        });
        next = ord;
      }
    }
    return { runs, next };
  }

  pruneHistory(options: HistoryPrune): PrunedHistory {
    const protect = new Set(options.protect);
    let count = this.records.size;
    const deleted: RunRecord[] = [];
    for (const record of this.records.values()) {
      if (deleted.length >= options.limit) break;
      const overCount = count > options.keepRuns;
      if (!overCount && record.run.createdAt >= options.admittedBefore) break;
      if (!isPrunable(record, protect)) continue;
      deleted.push(record);
      count--;
    }
    const gone = new Set(deleted.map((r) => r.run.id));
    for (const id of gone) {
      this.records.delete(id);
      this.ords.delete(id);
    }
    let events = 0;
    for (const [id, event] of this.events) {
      if (event.state !== 'pending' && gone.has(event.runIds[0] as string)) {
        this.events.delete(id);
        events++;
      }
    }
    const conversationIds: string[] = [];
    for (const record of deleted) {
      const id = conversationOf(record.run);
      if (id !== undefined && this.conversations.get(id)?.state === 'released') {
        this.conversations.delete(id);
        conversationIds.push(id);
      }
    }
    this.transactions++;
    return {
      runs: deleted.map((r) => ({ id: r.run.id, transcriptPruned: r.prunedAt !== undefined })),
      events,
      conversationIds,
    };
  }

  chats(): ChatRecord[] {
    return [...this.chatRecords.values()].map((json) => JSON.parse(json) as ChatRecord);
  }

  saveChat(record: ChatRecord): void {
    // Kept as JSON, as SQLite keeps it: a record read back is a copy, and undefined fields vanish alike.
    this.chatRecords.set(record.id, JSON.stringify(record));
    this.transactions++;
  }

  deleteChat(id: string): void {
    this.chatRecords.delete(id);
    this.transactions++;
  }

  nextEpoch(): number {
    this.epoch++;
    this.transactions++;
    return this.epoch;
  }

  stats(): StoreStats {
    return { transactions: this.transactions };
  }

  close(): void {}
}

function clone(record: RunRecord): RunRecord {
  const copy = { ...record, run: { ...record.run }, spec: { ...record.spec } };
  if (record.workspace !== undefined) copy.workspace = structuredClone(record.workspace);
  return copy;
}

/**
 * Copies an update's facts onto its record, every field but the id, as `Object.assign` of the update
 * without its id would, but with no temporary object per update (one per run end, on the hot path).
 */
function assignInfo(record: RunRecord, info: RunInfoUpdate): void {
  const target = record as unknown as Record<string, unknown>;
  const source = info as unknown as Record<string, unknown>;
  for (const key in source) {
    if (key !== 'id' && Object.hasOwn(source, key)) target[key] = source[key];
  }
}

function cloneEvent(event: OutboxEvent): OutboxEvent {
  return { ...event, runIds: [...event.runIds] };
}

/** Ended, settled, and not part of a protected conversation: history that may go. */
export function isPrunable(record: RunRecord, protect: ReadonlySet<string>): boolean {
  if (!isTerminal(record.run.status) || record.delivery === 'pending') return false;
  const conversation = conversationOf(record.run);
  return conversation === undefined || !protect.has(conversation);
}

/** Recorded launched: the runner was asked to start it. Launches take the writer's epoch. */
function isLaunched(run: Run): boolean {
  return run.status !== 'queued' && run.launchedAt !== undefined;
}
