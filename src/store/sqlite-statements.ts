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
  command_id: string | null;
}

/**
 * A run's new state, applied only while the run is live (ended exactly once); an end is also fenced:
 * it applies only when the run has no owner epoch yet or the writer's is it. A state recorded launched
 * gives the run the writer's epoch unless it has one. Only columns no index covers are assigned (SQLite
 * rewrites an index entry for every indexed column a statement assigns, even to the same value), and
 * the run's placement comes back so a changed parent, batch or seq can be refiled. With `info`, the
 * statement also applies the run's {@link RunInfoUpdate} (the same columns as `runInfo`), so a state
 * change and what the runner reported with it cost one statement, not two.
 * Parameters: status, created_at, record, launched (0/1), tx epoch, [the info columns,] id, and for an
 * end the tx epoch again.
 */
function updateRunSql(ends: boolean, info: boolean): string {
  return `UPDATE runs SET status = ?, created_at = ?, record = ?,${ends ? ' live = 0,' : ''}
       epoch = CASE WHEN epoch IS NULL AND ? = 1 THEN ? ELSE epoch END${info ? `, ${RUN_INFO_SET}` : ''}
     WHERE id = ? AND live = 1${ends ? ' AND (epoch IS NULL OR epoch = ?)' : ''}
     RETURNING parent, batch_id, seq, command_id`;
}

/** The columns a {@link RunInfoUpdate} sets, each only when given (parameters in this order). */
const RUN_INFO_SET = `pid = coalesce(?, pid), start_time = coalesce(?, start_time),
       result_path = coalesce(?, result_path), result_chars = coalesce(?, result_chars),
       peak_mem_gb = coalesce(?, peak_mem_gb), pruned_at = coalesce(?, pruned_at),
       error_kind = coalesce(?, error_kind), usage_tokens = coalesce(?, usage_tokens),
       usage_context = coalesce(?, usage_context), usage_cost_usd = coalesce(?, usage_cost_usd),
       usage_input_tokens = coalesce(?, usage_input_tokens),
       usage_output_tokens = coalesce(?, usage_output_tokens),
       usage_requests = coalesce(?, usage_requests), usage_rate_limited = coalesce(?, usage_rate_limited),
       host = coalesce(?, host), transcript_gap = coalesce(?, transcript_gap),
       workspace = coalesce(?, workspace)`;

/** A {@link RunInfoUpdate}'s values in {@link RUN_INFO_SET}'s order. */
function runInfoValues(info: RunInfoUpdate): unknown[] {
  return [
    info.pid ?? null,
    info.startTime ?? null,
    info.resultPath ?? null,
    info.resultChars ?? null,
    info.peakMemGb ?? null,
    info.prunedAt ?? null,
    info.errorKind ?? null,
    info.usageTokens ?? null,
    info.usageContextTokens ?? null,
    info.usageCostUsd ?? null,
    info.providerUsage?.inputTokens ?? null,
    info.providerUsage?.outputTokens ?? null,
    info.providerUsage?.requests ?? null,
    info.providerUsage?.rateLimited ?? null,
    info.host ?? null,
    info.transcriptGapBytes ?? null,
    info.workspace !== undefined ? JSON.stringify(info.workspace) : null,
  ];
}

export interface Statements {
  /**
   * Inserts a new run and its spec (in the row, or in `specs` when longer than {@link INLINE_SPEC_CHARS}),
   * owned by `epoch` (null: not launched yet); throws SQLite's UNIQUE error when the id exists.
   */
  insertRun(run: Run, spec: string, epoch: number | null): void;
  claim(id: RunId, epoch: number): void;
  /**
   * Applies a run's new state (see {@link updateRunSql}) and, when given, its info update with it;
   * whether it applied (a run that ended already is left alone, and so is its info).
   */
  updateRun(run: Run, epoch: number, info?: RunInfoUpdate): boolean;
  upsertConversation(id: string, record: string, live: boolean): void;
  selectConversation(id: string): string | undefined;
  /** Inserts an event; throws SQLite's UNIQUE error when the id exists. */
  insertEvent(event: OutboxEvent): void;
  attempt(eventId: string): void;
  /** Settles a pending event and sets its runs' delivery; an unknown or settled event is left alone. */
  settle(eventId: string, state: 'delivered' | 'undeliverable', at: number): void;
  /** Acknowledges an event once; its runs take the time. */
  ack(eventId: string, at: number): void;
  runInfo(info: RunInfoUpdate): void;
  selectRun(id: RunId): RunRow | undefined;
  selectEvent(id: string): OutboxRow | undefined;
  queued(): { record: string }[];
  executing(): RunRow[];
  openWaveMembers(): WaveMemberRow[];
  maxSeq(): number | null;
  conversations(): string[];
  /** Unpruned settled runs after row `afterOrd`, oldest first, at most `limit`. */
  unprunedSettled(afterOrd: number, limit: number): UnprunedRow[];
  /** Prunable candidates after row `afterOrd`, oldest first (see `pruneHistory`). */
  historyPage(afterOrd: number, page: number): HistoryRow[];
  runCount(): number;
  /** Deletes a run, its spec and the settled events that start with it; returns the events deleted. */
  deleteRun(ord: number, id: RunId): number;
  /** Deletes a conversation if it is released; whether it did. */
  deleteReleasedConversation(id: string): boolean;
  nextEpoch(): number;
}

export interface UnprunedRow {
  ord: number;
  id: string;
  delivered_at: number | null;
  kept: 0 | 1;
}

export interface HistoryRow {
  ord: number;
  id: string;
  live: 0 | 1;
  delivery: string;
  created_at: number;
  pruned_at: number | null;
  conversation: string | null;
}

/**
 * Specs up to this length (of their JSON) are kept in the runs row: one B-tree fewer per admission (a
 * page in the WAL), while the row each state change rewrites stays small; longer ones go to `specs`.
 */
export const INLINE_SPEC_CHARS = 1024;

export function prepareStatements(db: Database.Database): Statements {
  const insertRun = db.prepare(
    `INSERT INTO runs (id, parent, status, live, batch_id, seq, created_at, epoch, delivery, record, command_id, spec)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)`,
  );
  const insertSpec = db.prepare('INSERT INTO specs (ord, spec) VALUES (?, ?)');
  const claim = db.prepare('UPDATE runs SET epoch = ? WHERE id = ?');
  const updateLive = db.prepare<unknown[], Placement>(updateRunSql(false, false));
  const endRun = db.prepare<unknown[], Placement>(updateRunSql(true, false));
  const updateLiveInfo = db.prepare<unknown[], Placement>(updateRunSql(false, true));
  const endRunInfo = db.prepare<unknown[], Placement>(updateRunSql(true, true));
  const movePlacement = db.prepare(
    'UPDATE runs SET parent = ?, batch_id = ?, seq = ?, command_id = ? WHERE id = ?',
  );
  const upsertConversation = db.prepare(
    `INSERT INTO conversations (id, record, live) VALUES (?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET record = excluded.record, live = excluded.live`,
  );
  const selectConversation = db
    .prepare<[string], string>('SELECT record FROM conversations WHERE id = ?')
    .pluck();
  const insertEvent = db.prepare(
    `INSERT INTO outbox (id, parent, kind, run_ids, batch_id, created_at, state, attempts, settled_at, first_run, acked_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const attempt = db.prepare('UPDATE outbox SET attempts = attempts + 1 WHERE id = ?');
  const settleEvent = db
    .prepare<unknown[], string>(
      "UPDATE outbox SET state = ?, settled_at = ? WHERE id = ? AND state = 'pending' RETURNING run_ids",
    )
    .pluck();
  const deliverRun = db.prepare('UPDATE runs SET delivery = ?, delivered_at = ? WHERE id = ?');
  const ackEvent = db
    .prepare<unknown[], string>(
      'UPDATE outbox SET acked_at = ? WHERE id = ? AND acked_at IS NULL RETURNING run_ids',
    )
    .pluck();
  const ackRun = db.prepare('UPDATE runs SET acked_at = ? WHERE id = ? AND acked_at IS NULL');
  const unprunedSettled = db.prepare<[number, number], UnprunedRow>(
    `SELECT ord, id, delivered_at,
       (json_extract(record, '$.keep') = 1 OR json_extract(record, '$.conversationId') IS NOT NULL) AS kept
     FROM runs INDEXED BY runs_unpruned
     WHERE pruned_at IS NULL AND live = 0 AND delivery <> 'pending' AND ord > ? ORDER BY ord LIMIT ?`,
  );
  const historyPage = db.prepare<[number, number], HistoryRow>(
    `SELECT ord, id, live, delivery, created_at, pruned_at,
       coalesce(json_extract(record, '$.conversationId'),
                CASE WHEN json_extract(record, '$.keep') = 1 THEN id END) AS conversation
     FROM runs WHERE ord > ? ORDER BY ord LIMIT ?`,
  );
  const runCount = db.prepare<[], number>('SELECT count(*) FROM runs').pluck();
  const deleteSpec = db.prepare('DELETE FROM specs WHERE ord = ?');
  const deleteRunRow = db.prepare('DELETE FROM runs WHERE ord = ?');
  const deleteEvents = db.prepare("DELETE FROM outbox WHERE first_run = ? AND state <> 'pending'");
  const deleteReleased = db.prepare('DELETE FROM conversations WHERE id = ? AND live = 0');
  const runInfo = db.prepare(`UPDATE runs SET ${RUN_INFO_SET} WHERE id = ?`);
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
        epoch,
        JSON.stringify(run),
        run.commandId ?? null,
        spec.length <= INLINE_SPEC_CHARS ? spec : null,
      );
      if (spec.length > INLINE_SPEC_CHARS) insertSpec.run(lastInsertRowid, spec);
    },
    claim(id, epoch) {
      claim.run(epoch, id);
    },
    updateRun(run, epoch, info) {
      const launched = isLaunched(run) ? 1 : 0;
      const record = JSON.stringify(run);
      const ends = isTerminal(run.status);
      let was: Placement | undefined;
      if (info === undefined) {
        was = ends
          ? endRun.get(run.status, run.createdAt, record, launched, epoch, run.id, epoch)
          : updateLive.get(run.status, run.createdAt, record, launched, epoch, run.id);
      } else {
        const values = runInfoValues(info);
        was = ends
          ? endRunInfo.get(run.status, run.createdAt, record, launched, epoch, ...values, run.id, epoch)
          : updateLiveInfo.get(run.status, run.createdAt, record, launched, epoch, ...values, run.id);
      }
      const batchId = run.batchId ?? null;
      const commandId = run.commandId ?? null;
      if (
        was &&
        (was.parent !== run.parent ||
          was.batch_id !== batchId ||
          was.seq !== run.seq ||
          was.command_id !== commandId)
      ) {
        movePlacement.run(run.parent, batchId, run.seq, commandId, run.id);
      }
      return was !== undefined;
    },
    upsertConversation(id, record, live) {
      upsertConversation.run(id, record, live ? 1 : 0);
    },
    selectConversation: (id) => selectConversation.get(id),
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
        event.runIds[0] ?? null,
        event.ackedAt ?? null,
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
    ack(eventId, at) {
      const runIds = ackEvent.get(at, eventId);
      if (runIds === undefined) return;
      for (const id of JSON.parse(runIds) as RunId[]) ackRun.run(at, id);
    },
    runInfo(info) {
      runInfo.run(...runInfoValues(info), info.id);
    },
    selectRun: (id) => selectRun.get(id),
    selectEvent: (id) => selectEvent.get(id),
    queued: () => queued.all(),
    executing: () => executing.all(),
    openWaveMembers: () => openWaveMembers.all(),
    maxSeq: () => maxSeq.get() ?? null,
    conversations: () => conversations.all(),
    unprunedSettled: (afterOrd, limit) => unprunedSettled.all(afterOrd, limit),
    historyPage: (afterOrd, page) => historyPage.all(afterOrd, page),
    runCount: () => runCount.get() as number,
    deleteRun(ord, id) {
      deleteSpec.run(ord);
      deleteRunRow.run(ord);
      return deleteEvents.run(id).changes;
    },
    deleteReleasedConversation: (id) => deleteReleased.run(id).changes > 0,
    nextEpoch: () => nextEpoch.get() as number,
  };
}
