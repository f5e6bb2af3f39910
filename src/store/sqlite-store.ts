import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { CrewFault, isCrewFault } from '../core/errors.js';
import type { Conversation, RestoredWave } from '../core/scheduler-types.js';
import { isTerminal, type Run, type RunId, type RunSpec } from '../core/types.js';
import type { ChatRecord } from './chat-record.js';
import { makePrivateDbFile } from './private-db-file.js';
import { type BuiltQuery, outboxQuery, runsQuery, STATUS_COUNTS_SQL } from './sqlite-queries.js';
import {
  isLaunched,
  type OutboxRow,
  type RunRow,
  toConversation,
  toOutboxEvent,
  toRunRecord,
} from './sqlite-rows.js';
import { migrate } from './sqlite-schema.js';
import { prepareStatements, type Statements } from './sqlite-statements.js';
import type {
  HistoryPrune,
  OutboxEvent,
  OutboxQuery,
  PrunedHistory,
  RestartState,
  RunInfoUpdate,
  RunQuery,
  RunRecord,
  Store,
  StoreStats,
  StoreTx,
  UnprunedPage,
} from './store.js';

/** Rows read per step while walking history for `pruneHistory`. */
const HISTORY_PAGE = 256;

/** Options for {@link SqliteStore}. */
export interface SqliteStoreOptions {
  /**
   * How long a write waits for another connection's write transaction (another process on the same
   * `crew.db`, such as the Claude hook) before it fails with `SQLITE_BUSY`.
   * @default 5000
   */
  busyTimeoutMs?: number;
}

/** @see SqliteStoreOptions.busyTimeoutMs */
export const DEFAULT_BUSY_TIMEOUT_MS = 5000;

/** WAL pages (4 KiB each by default) written before an automatic checkpoint. */
const WAL_AUTOCHECKPOINT_PAGES = 4000;

/**
 * The Store port on SQLite (`$CREW_HOME/crew.db`): WAL, `synchronous=NORMAL` (a process crash loses
 * nothing; a power cut can lose the last transactions, never corrupt), foreign keys on. Each `apply` is
 * one `BEGIN IMMEDIATE` transaction, so it takes the write lock before reading anything and cannot fail
 * half-way on a lock upgrade; if any write in it fails (a run or outbox id that already exists), the
 * whole transaction rolls back. Observably the same as `MemoryStore` (one conformance suite and a
 * property test hold both to it).
 *
 * @example
 * const store = new SqliteStore(join(crewHome, 'crew.db'));
 * const epoch = store.nextEpoch();
 */
export class SqliteStore implements Store {
  private readonly db: Database.Database;
  private readonly statements: Statements;
  /** `runs()` / `outbox()` statements by SQL text; the texts are few (one per combination of filters). */
  private readonly queries = new Map<string, Database.Statement<unknown[], unknown>>();
  private readonly applyTx: (tx: StoreTx) => void;
  private readonly readRestartState: () => RestartState;
  private readonly pruneTx: (options: HistoryPrune) => PrunedHistory;
  private transactions = 0;
  private readonly chatStatements: {
    all: Database.Statement<[], { record: string }>;
    upsert: Database.Statement<[string, string], unknown>;
    remove: Database.Statement<[string], unknown>;
  };

  /**
   * Opens (creating if needed) the store at `path`, creating its directory and bringing the schema up
   * to date. `':memory:'` gives a private in-memory database (no WAL).
   */
  constructor(path: string, options: SqliteStoreOptions = {}) {
    if (path !== ':memory:') {
      mkdirSync(dirname(path), { recursive: true });
      makePrivateDbFile(path);
    }
    let db: Database.Database;
    try {
      db = new Database(path, { timeout: options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS });
    } catch (error) {
      throw unusable(path, error);
    }
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      // Checkpoint every ~16 MB of WAL rather than SQLite's ~4 MB: each checkpoint fsyncs and stalls the
      // transaction that triggers it, and hot pages (the live index, the newest leaves) are copied once
      // per checkpoint however often they changed, so fewer checkpoints cut the p99 of apply.
      db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
      db.pragma('foreign_keys = ON');
      migrate(db);
      this.statements = prepareStatements(db);
    } catch (error) {
      db.close();
      throw unusable(path, error);
    }
    this.db = db;
    const write = db.transaction((tx: StoreTx) => this.write(tx));
    this.applyTx = (tx) => write.immediate(tx);
    // A read transaction: the parts of the restart state come from one snapshot.
    const read = db.transaction(() => this.restartSnapshot());
    this.readRestartState = () => read.deferred();
    const prune = db.transaction((options: HistoryPrune) => this.prune(options));
    this.pruneTx = (options) => prune.immediate(options);
    this.chatStatements = {
      all: db.prepare('SELECT record FROM chats ORDER BY ord'),
      upsert: db.prepare(
        'INSERT INTO chats (id, record) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET record = excluded.record',
      ),
      remove: db.prepare('DELETE FROM chats WHERE id = ?'),
    };
  }

  chats(): ChatRecord[] {
    return this.chatStatements.all.all().map((row) => JSON.parse(row.record) as ChatRecord);
  }

  saveChat(record: ChatRecord): void {
    // One statement is one transaction in SQLite (autocommit).
    this.chatStatements.upsert.run(record.id, JSON.stringify(record));
    this.transactions++;
  }

  deleteChat(id: string): void {
    this.chatStatements.remove.run(id);
    this.transactions++;
  }

  apply(tx: StoreTx): void {
    this.applyTx(tx);
    this.transactions++;
  }

  conversation(id: string): Conversation | undefined {
    const json = this.statements.selectConversation(id);
    return json === undefined ? undefined : toConversation(json);
  }

  unprunedSettled(after: number, limit: number): UnprunedPage {
    const rows = this.statements.unprunedSettled(after, limit);
    return {
      runs: rows.map((row) => ({ id: row.id, settledAt: row.delivered_at ?? 0, kept: row.kept === 1 })),
      next: rows.at(-1)?.ord ?? after,
    };
  }

  pruneHistory(options: HistoryPrune): PrunedHistory {
    const pruned = this.pruneTx(options);
    this.transactions++;
    return pruned;
  }

  stats(): StoreStats {
    return { transactions: this.transactions };
  }

  run(id: RunId): RunRecord | undefined {
    const row = this.statements.selectRun(id);
    return row ? toRunRecord(row) : undefined;
  }

  runs(query: RunQuery = {}): RunRecord[] {
    return (this.all(runsQuery(query)) as RunRow[]).map(toRunRecord);
  }

  statusCounts(): Map<string, number> {
    const rows = this.db.prepare(STATUS_COUNTS_SQL).all() as { status: string; n: number }[];
    return new Map(rows.map((r) => [r.status, r.n]));
  }

  outbox(query: OutboxQuery): OutboxEvent[] {
    return (this.all(outboxQuery(query)) as OutboxRow[]).map(toOutboxEvent);
  }

  outboxEvent(id: string): OutboxEvent | undefined {
    const row = this.statements.selectEvent(id);
    return row ? toOutboxEvent(row) : undefined;
  }

  restartState(): RestartState {
    return this.readRestartState();
  }

  nextEpoch(): number {
    const next = this.db.transaction(() => this.statements.nextEpoch());
    const epoch = next.immediate();
    this.transactions++;
    return epoch;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  /**
   * The body of `apply`, in the memory store's order; runs inside `BEGIN IMMEDIATE`. Two folds save
   * statements without changing what is written: a run admitted in this transaction is inserted in the
   * last state the transaction gives it (see {@link foldIntoInserts}), and a run's info update rides on
   * the first of its state changes that applies (the columns are disjoint, so applying it earlier than
   * the memory store does changes nothing; when no state change applies it is applied on its own).
   */
  private write(tx: StoreTx): void {
    const s = this.statements;
    let updates = tx.runs;
    if (tx.newRuns !== undefined && tx.newRuns.length > 0) {
      const folded =
        updates !== undefined && updates.length > 0 ? foldIntoInserts(tx.newRuns, updates) : undefined;
      if (folded) {
        for (const { run, spec, launched } of folded.inserts) {
          insertUnique(`run ${run.id}`, () =>
            s.insertRun(run, JSON.stringify(spec), launched ? tx.epoch : null),
          );
        }
        updates = folded.rest;
      } else {
        for (const { run, spec } of tx.newRuns) {
          insertUnique(`run ${run.id}`, () =>
            s.insertRun(run, JSON.stringify(spec), isLaunched(run) ? tx.epoch : null),
          );
        }
      }
    }
    for (const id of tx.claim ?? []) s.claim(id, tx.epoch);
    // The first info update of each run, until a state change of the run carries it.
    let infos: Map<RunId, RunInfoUpdate> | undefined;
    let carried: Set<RunInfoUpdate> | undefined;
    if (updates !== undefined && updates.length > 0 && tx.runInfo !== undefined && tx.runInfo.length > 0) {
      infos = new Map();
      for (const info of tx.runInfo) if (!infos.has(info.id)) infos.set(info.id, info);
      carried = new Set();
    }
    for (const run of updates ?? []) {
      const info = infos?.get(run.id);
      if (s.updateRun(run, tx.epoch, info) && info !== undefined) {
        infos?.delete(run.id);
        carried?.add(info);
      }
    }
    for (const conversation of tx.conversations ?? []) {
      s.upsertConversation(conversation.id, JSON.stringify(conversation), conversation.state !== 'released');
    }
    for (const event of tx.outbox ?? []) insertUnique(`outbox event ${event.id}`, () => s.insertEvent(event));
    for (const { eventId } of tx.attempts ?? []) s.attempt(eventId);
    for (const { eventId, state, at } of tx.settle ?? []) s.settle(eventId, state, at);
    for (const { eventId, at } of tx.acks ?? []) s.ack(eventId, at);
    for (const info of tx.runInfo ?? []) if (!carried?.has(info)) s.runInfo(info);
  }

  /** The body of `pruneHistory`, in the memory store's order; runs inside `BEGIN IMMEDIATE`. */
  private prune(options: HistoryPrune): PrunedHistory {
    const s = this.statements;
    const protect = new Set(options.protect);
    let count = s.runCount();
    const runs: PrunedHistory['runs'] = [];
    const conversations = new Set<string>();
    let events = 0;
    let after = 0;
    walk: for (;;) {
      const page = s.historyPage(after, HISTORY_PAGE);
      if (page.length === 0) break;
      for (const row of page) {
        after = row.ord;
        if (runs.length >= options.limit) break walk;
        if (count <= options.keepRuns && row.created_at >= options.admittedBefore) break walk;
        const prunable =
          row.live === 0 &&
          row.delivery !== 'pending' &&
          (row.conversation === null || !protect.has(row.conversation));
        if (!prunable) continue;
        events += s.deleteRun(row.ord, row.id);
        runs.push({ id: row.id, transcriptPruned: row.pruned_at !== null });
        if (row.conversation !== null) conversations.add(row.conversation);
        count--;
      }
    }
    // In the memory store's order: conversations in the order their runs were deleted.
    const conversationIds = [...conversations].filter((id) => s.deleteReleasedConversation(id));
    return { runs, events, conversationIds };
  }

  private restartSnapshot(): RestartState {
    const s = this.statements;
    const queued = s.queued().map((row) => JSON.parse(row.record) as Run);
    const executing = s.executing().map(toRunRecord);
    const waves = new Map<string, RestoredWave>();
    for (const member of s.openWaveMembers()) {
      let wave = waves.get(member.batch_id);
      if (!wave) {
        wave = { batchId: member.batch_id, parent: member.parent, memberIds: [], remaining: 0 };
        waves.set(member.batch_id, wave);
      }
      wave.memberIds.push(member.id);
      wave.remaining += member.live;
    }
    const maxSeq = s.maxSeq();
    return {
      queued,
      executing,
      waves: [...waves.values()],
      nextSeq: maxSeq === null ? 0 : Math.max(0, maxSeq + 1),
      conversations: s.conversations().map(toConversation),
    };
  }

  /** Runs a built query through a cached statement. */
  private all(query: BuiltQuery): unknown[] {
    let statement = this.queries.get(query.sql);
    if (!statement) {
      statement = this.db.prepare(query.sql);
      this.queries.set(query.sql, statement);
    }
    // better-sqlite3 refuses a parameters object for a statement that has no parameters.
    return Object.keys(query.params).length > 0 ? statement.all(query.params) : statement.all();
  }
}

/** A new run as it will be inserted: its last state in the transaction, and whether it was launched in it. */
interface FoldedInsert {
  run: Run;
  spec: RunSpec;
  launched: boolean;
}

/**
 * Folds a transaction's state changes of the runs it admits into their inserts, so each new run is
 * written once. Inserting the last state equals inserting the first and applying the updates in order:
 * an update applies only while the run is live, so the last state is the last update up to and
 * including the first terminal one (none when the admitted state is terminal already); an end is
 * fenced by epoch, which a run inserted by this writer passes (it has none or the writer's); the run
 * takes the writer's epoch when any state it passed through was launched; the placement columns come
 * from the state inserted, as the refiling after an update would set them. Returns undefined, leaving
 * the transaction to the plain path, when an id is admitted twice (the second insert must fail).
 */
function foldIntoInserts(
  newRuns: NonNullable<StoreTx['newRuns']>,
  updates: Run[],
): { inserts: FoldedInsert[]; rest: Run[] } | undefined {
  const inserts: FoldedInsert[] = [];
  const byId = new Map<RunId, FoldedInsert>();
  for (const { run, spec } of newRuns) {
    if (byId.has(run.id)) return undefined;
    const insert = { run, spec, launched: isLaunched(run) };
    inserts.push(insert);
    byId.set(run.id, insert);
  }
  const rest: Run[] = [];
  for (const run of updates) {
    const insert = byId.get(run.id);
    if (insert === undefined) rest.push(run);
    else if (!isTerminal(insert.run.status)) {
      insert.run = run;
      if (isLaunched(run)) insert.launched = true;
    }
  }
  return { inserts, rest };
}

/** Runs an INSERT, turning a UNIQUE violation into the store's "already exists" error. */
function insertUnique(what: string, insert: () => void): void {
  try {
    insert();
  } catch (error) {
    if (error instanceof Database.SqliteError && error.code === 'SQLITE_CONSTRAINT_UNIQUE') {
      // Internal: ids are generated unique; a duplicate is a bug, and the transaction it breaks rolls back.
      throw new Error(`${what} already exists`);
    }
    throw error;
  }
}

/** SQLite's answers for a file that is not a database it can use (a busy lock is not one of them). */
const BROKEN_FILE_CODES = new Set(['SQLITE_NOTADB', 'SQLITE_CORRUPT', 'SQLITE_CANTOPEN']);

/** A store that cannot be opened, named with what to do: move it aside and Crew starts with an empty one. */
function unusable(path: string, error: unknown): Error {
  const code = (error as { code?: unknown }).code;
  if (isCrewFault(error) || !(typeof code === 'string' && BROKEN_FILE_CODES.has(code))) return error as Error;
  const message = error instanceof Error ? error.message : String(error);
  return new CrewFault(
    'store_unusable',
    `the run store ${path} cannot be used (${message}); move it aside (mv ${path} ${path}.broken, with its -wal and -shm) and start again: Crew starts with an empty store`,
    { path },
  );
}
