import type { OutboxQuery, RunQuery } from './store.js';

/**
 * The SQL for `runs()` and `outbox()` queries. The text depends only on which filters are present (a
 * list of several ids is one JSON parameter read through `json_each`), so there are few distinct texts
 * and the store can cache one prepared statement per text. A single parent or id is compared with `=`
 * so SQLite walks `runs_by_parent` (or the id index) in order and stops at the limit. Queries for live
 * runs or pending events name their partial index (`INDEXED BY`): those sets stay small however long
 * the history grows, while the planner, knowing no sizes, might walk a parent's whole history instead.
 */

export interface BuiltQuery {
  sql: string;
  params: Record<string, string | number>;
}

/**
 * Selects a `RunRow` (see `sqlite-rows.ts`): a run with its spec, from its row or, for a long spec (or
 * one written before schema version 7), from `specs` (`coalesce` reads that only when the row has none).
 */
export const RUN_SELECT =
  'SELECT record, coalesce(runs.spec, (SELECT spec FROM specs WHERE specs.ord = runs.ord)) AS spec, delivery, epoch, pid, start_time, result_path, result_chars, peak_mem_gb, ' +
  'pruned_at, delivered_at, acked_at, error_kind, usage_tokens, usage_context, usage_cost_usd, ' +
  'usage_input_tokens, usage_output_tokens, usage_requests, usage_rate_limited, host, transcript_gap, workspace ' +
  'FROM runs';

export function runsQuery(query: RunQuery): BuiltQuery {
  const where: string[] = [];
  const params: Record<string, string | number> = {};
  if (query.parents !== undefined) {
    if (query.parents.length === 1) {
      where.push('parent = @parent');
      params.parent = query.parents[0] as string;
    } else {
      where.push('parent IN (SELECT value FROM json_each(@parents))');
      params.parents = JSON.stringify(query.parents);
    }
  }
  if (query.ids !== undefined) {
    if (query.ids.length === 1) {
      where.push('id = @id');
      params.id = query.ids[0] as string;
    } else {
      where.push('id IN (SELECT value FROM json_each(@ids))');
      params.ids = JSON.stringify(query.ids);
    }
  }
  if (query.batchId !== undefined) {
    where.push('batch_id = @batchId');
    params.batchId = query.batchId;
  }
  if (query.commandId !== undefined) {
    where.push('command_id = @commandId');
    params.commandId = query.commandId;
  }
  if (query.live !== undefined) where.push(query.live ? 'live = 1' : 'live = 0');
  if (query.before !== undefined) {
    // A rowid range from the cursor's row: a page of history costs the page, not what lies before it.
    where.push('ord < (SELECT ord FROM runs WHERE id = @before)');
    params.before = query.before;
  }
  // The filters pick row numbers from covering indexes first, so a sort across several parents sorts
  // integers, and only the rows returned are read whole.
  let ords = query.live === true ? 'SELECT ord FROM runs INDEXED BY runs_live' : 'SELECT ord FROM runs';
  if (where.length > 0) ords += ` WHERE ${where.join(' AND ')}`;
  ords += ' ORDER BY ord DESC';
  if (query.limit !== undefined) {
    ords += ' LIMIT @limit';
    params.limit = limitOf(query.limit);
  }
  return { sql: `${RUN_SELECT} WHERE runs.ord IN (${ords}) ORDER BY runs.ord DESC`, params };
}

/** Runs per status: one pass over the table (no index on status: every status write would rewrite it). */
export const STATUS_COUNTS_SQL = 'SELECT status, count(*) AS n FROM runs GROUP BY status';

/** Selects an `OutboxRow` (see `sqlite-rows.ts`). */
export const OUTBOX_SELECT =
  'SELECT id, parent, kind, run_ids, batch_id, created_at, state, attempts, settled_at, acked_at FROM outbox';

export function outboxQuery(query: OutboxQuery): BuiltQuery {
  const where: string[] = [];
  const params: Record<string, string | number> = {};
  if (query.state === 'pending') {
    where.push("state = 'pending'"); // as in the index's WHERE, so the planner can prove it applies
  } else if (query.state !== undefined) {
    where.push('state = @state');
    params.state = query.state;
  }
  if (query.parent !== undefined) {
    where.push('parent = @parent');
    params.parent = query.parent;
  }
  if (query.firstRun !== undefined) {
    where.push('first_run = @firstRun');
    params.firstRun = query.firstRun;
  }
  let sql = query.state === 'pending' ? `${OUTBOX_SELECT} INDEXED BY outbox_pending` : OUTBOX_SELECT;
  if (where.length > 0) sql += ` WHERE ${where.join(' AND ')}`;
  sql += ' ORDER BY ord';
  if (query.limit !== undefined) {
    sql += ' LIMIT @limit';
    params.limit = limitOf(query.limit);
  }
  return { sql, params };
}

/**
 * A limit counts records: 0 or less returns none (SQLite would read a negative LIMIT as "no limit"), and
 * a fraction rounds up, as the memory store stops once it holds at least `limit`.
 */
function limitOf(limit: number): number {
  return Math.max(0, Math.ceil(limit));
}

/** The reads of `restartState()`: each goes through the live index (or one row) and follows the live runs. */
export const RESTART_SQL = {
  queued:
    "SELECT record FROM runs INDEXED BY runs_live WHERE live = 1 AND status = 'queued' ORDER BY seq, ord",
  // Executing: live but no longer queued (holds a permit, or its ancestor's, and may have a process).
  executing: `${RUN_SELECT} WHERE runs.ord IN (SELECT ord FROM runs INDEXED BY runs_live WHERE live = 1 AND status <> 'queued') ORDER BY runs.ord`,
  // Every member of each wave that still has a live member, in the order they were recorded.
  openWaveMembers:
    'SELECT id, parent, batch_id, live FROM runs WHERE batch_id IN ' +
    '(SELECT batch_id FROM runs INDEXED BY runs_live WHERE live = 1) ORDER BY ord',
  // The live runs' seqs and the newest record's: new seqs must only follow the live ones (they order the
  // queue), and the newest record keeps them increasing. max(seq) over every run scanned all of history
  // (~100 ms of a restart at 100,000 runs).
  maxSeq:
    'SELECT max(seq) FROM (SELECT seq FROM runs INDEXED BY runs_live WHERE live = 1 ' +
    'UNION ALL SELECT seq FROM runs WHERE ord = (SELECT max(ord) FROM runs))',
  conversations: 'SELECT record FROM conversations INDEXED BY conversations_live WHERE live = 1 ORDER BY ord',
} as const;
