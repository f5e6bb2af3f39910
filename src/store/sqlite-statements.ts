import type Database from 'better-sqlite3';
import { isTerminal, type Run, type RunId } from '../core/types.js';
import { OUTBOX_SELECT, RESTART_SQL, RUN_SELECT } from './sqlite-queries.js';
import { isLaunched, type OutboxRow, type RunRow, type WaveMemberRow } from './sqlite-rows.js';
import type { OutboxEvent, RunInfoUpdate } from './store.js';

/**
 * The SQLite store's fixed statements, prepared once per connection, each behind a function that
 * binds its parameters by position (binding by name costs more than the statement itself here). Each
 * UPDATE carries its guard in its WHERE clause, so the rules of `apply` (ended exactly once, fencing,
 * settled once) hold statement by statement, and later writes in one transaction see earlier ones, as
 * in the memory store. `runs.live` is 1 exactly while the run's status is live: set at insert, cleared
 * only by the end of a run.
 */

/** The indexed columns a run's record also holds. */
interface Placement {
  parent: string;
  batch_id: string | null;
  seq: number;
}

/**
 * A run's new state, applied only while the run is live (ended exactly once); an end is also fenced:
 * it applies only when the run has no owner epoch yet or the writer's is it. A state recorded launched
 * gives the run the writer's epoch unless it has one. Only columns no index covers are assigned (SQLite
 * rewrites an index entry for every indexed column a statement assigns, even to the same value), and
 * the run's placement comes back so a changed parent, batch or seq can be refiled.
 * Parameters: status, created_at, record, launched (0/1), tx epoch, id, and for an end the tx epoch again.
 */
function updateRunSql(ends: boolean): string {
  return `UPDATE runs SET status = ?, created_at = ?, record = ?,${ends ? ' live = 0,' : ''}
       epoch = CASE WHEN epoch IS NULL AND ? = 1 THEN ? ELSE epoch END
     WHERE id = ? AND live = 1${ends ? ' AND (epoch IS NULL OR epoch = ?)' : ''}
     RETURNING parent, batch_id, seq`;
}

export interface Statements {
  /** Inserts a new run and its spec; throws SQLite's UNIQUE error when the id exists. */
  insertRun(run: Run, spec: string, epoch: number): void;
  claim(id: RunId, epoch: number): void;
  updateRun(run: Run, epoch: number): void;
  upsertConversation(id: string, record: string): void;
  /** Inserts an event; throws SQLite's UNIQUE error when the id exists. */
  insertEvent(event: OutboxEvent): void;
  attempt(eventId: string): void;
  /** Settles a pending event and sets its runs' delivery; an unknown or settled event is left alone. */
  settle(eventId: string, state: 'delivered' | 'undeliverable', at: number): void;
  runInfo(info: RunInfoUpdate): void;
  selectRun(id: RunId): RunRow | undefined;
  selectEvent(id: string): OutboxRow | undefined;
  queued(): { record: string }[];
  executing(): RunRow[];
  openWaveMembers(): WaveMemberRow[];
  maxSeq(): number | null;
  conversations(): string[];
  nextEpoch(): number;
}

export function prepareStatements(db: Database.Database): Statements {
  const insertRun = db.prepare(
    `INSERT INTO runs (id, parent, status, live, batch_id, seq, created_at, epoch, delivery, record)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?)`,
  );
  const insertSpec = db.prepare('INSERT INTO specs (ord, spec) VALUES (?, ?)');
  const claim = db.prepare('UPDATE runs SET epoch = ? WHERE id = ?');
  const updateLive = db.prepare<unknown[], Placement>(updateRunSql(false));
  const endRun = db.prepare<unknown[], Placement>(updateRunSql(true));
  const movePlacement = db.prepare('UPDATE runs SET parent = ?, batch_id = ?, seq = ? WHERE id = ?');
  const upsertConversation = db.prepare(
    'INSERT INTO conversations (id, record) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET record = excluded.record',
  );
  const insertEvent = db.prepare(
    `INSERT INTO outbox (id, parent, kind, run_ids, batch_id, created_at, state, attempts, settled_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const attempt = db.prepare('UPDATE outbox SET attempts = attempts + 1 WHERE id = ?');
  const settleEvent = db
    .prepare<unknown[], string>(
      "UPDATE outbox SET state = ?, settled_at = ? WHERE id = ? AND state = 'pending' RETURNING run_ids",
    )
    .pluck();
  const deliverRun = db.prepare('UPDATE runs SET delivery = ?, delivered_at = ? WHERE id = ?');
  const runInfo = db.prepare(
    `UPDATE runs SET pid = coalesce(?, pid), start_time = coalesce(?, start_time),
       result_path = coalesce(?, result_path), result_chars = coalesce(?, result_chars),
       peak_mem_gb = coalesce(?, peak_mem_gb), pruned_at = coalesce(?, pruned_at)
     WHERE id = ?`,
  );
  const selectRun = db.prepare<[string], RunRow>(`${RUN_SELECT} WHERE id = ?`);
  const selectEvent = db.prepare<[string], OutboxRow>(`${OUTBOX_SELECT} WHERE id = ?`);
  const queued = db.prepare<[], { record: string }>(RESTART_SQL.queued);
  const executing = db.prepare<[], RunRow>(RESTART_SQL.executing);
  const openWaveMembers = db.prepare<[], WaveMemberRow>(RESTART_SQL.openWaveMembers);
  const maxSeq = db.prepare<[], number | null>(RESTART_SQL.maxSeq).pluck();
  const conversations = db.prepare<[], string>(RESTART_SQL.conversations).pluck();
  const nextEpoch = db
    .prepare<[], number>(
      `INSERT INTO meta (key, value) VALUES ('epoch', 1)
       ON CONFLICT (key) DO UPDATE SET value = value + 1 RETURNING value`,
    )
    .pluck();

  return {
    insertRun(run, spec, epoch) {
      const { lastInsertRowid } = insertRun.run(
        run.id,
        run.parent,
        run.status,
        isTerminal(run.status) ? 0 : 1,
        run.batchId ?? null,
        run.seq,
        run.createdAt,
        isLaunched(run) ? epoch : null,
        JSON.stringify(run),
      );
      insertSpec.run(lastInsertRowid, spec);
    },
    claim(id, epoch) {
      claim.run(epoch, id);
    },
    updateRun(run, epoch) {
      const launched = isLaunched(run) ? 1 : 0;
      const record = JSON.stringify(run);
      const was = isTerminal(run.status)
        ? endRun.get(run.status, run.createdAt, record, launched, epoch, run.id, epoch)
        : updateLive.get(run.status, run.createdAt, record, launched, epoch, run.id);
      const batchId = run.batchId ?? null;
      if (was && (was.parent !== run.parent || was.batch_id !== batchId || was.seq !== run.seq)) {
        movePlacement.run(run.parent, batchId, run.seq, run.id);
      }
    },
    upsertConversation(id, record) {
      upsertConversation.run(id, record);
    },
    insertEvent(event) {
      insertEvent.run(
        event.id,
        event.parent,
        event.kind,
        JSON.stringify(event.runIds),
        event.batchId ?? null,
        event.createdAt,
        event.state,
        event.attempts,
        event.settledAt ?? null,
      );
    },
    attempt(eventId) {
      attempt.run(eventId);
    },
    settle(eventId, state, at) {
      const runIds = settleEvent.get(state, at, eventId);
      if (runIds === undefined) return;
      for (const id of JSON.parse(runIds) as RunId[]) deliverRun.run(state, at, id);
    },
    runInfo(info) {
      runInfo.run(
        info.pid ?? null,
        info.startTime ?? null,
        info.resultPath ?? null,
        info.resultChars ?? null,
        info.peakMemGb ?? null,
        info.prunedAt ?? null,
        info.id,
      );
    },
    selectRun: (id) => selectRun.get(id),
    selectEvent: (id) => selectEvent.get(id),
    queued: () => queued.all(),
    executing: () => executing.all(),
    openWaveMembers: () => openWaveMembers.all(),
    maxSeq: () => maxSeq.get() ?? null,
    conversations: () => conversations.all(),
    nextEpoch: () => nextEpoch.get() as number,
  };
}
