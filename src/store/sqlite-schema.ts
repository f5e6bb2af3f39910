import type Database from 'better-sqlite3';
import { CrewFault } from '../core/errors.js';

/**
 * The run store's tables in `crew.db` and the steps that create or upgrade them. `PRAGMA user_version`
 * is the run store's schema version: migration `i` takes the file from version `i` to `i + 1`, inside
 * the same `BEGIN IMMEDIATE` transaction that reads the version, so two processes opening one new file
 * cannot both create it. The Claude hook's width ledger shares the file; its tables are prefixed
 * `claude_`, it creates them itself and never reads or writes `user_version`, so neither touches the
 * other's tables.
 */

/**
 * Every table keeps `ord INTEGER PRIMARY KEY` (the rowid): the order rows were first written. "Newest
 * first" and "creation order" are that order, which is what the memory store's insertion order is.
 * Times and measurements are REAL because JS numbers need not be integers.
 */
const V1 = `
CREATE TABLE runs (
  ord          INTEGER PRIMARY KEY,
  id           TEXT NOT NULL UNIQUE,
  parent       TEXT NOT NULL,
  status       TEXT NOT NULL,
  live         INTEGER NOT NULL,
  batch_id     TEXT,
  seq          INTEGER NOT NULL,
  created_at   REAL NOT NULL,
  epoch        INTEGER,
  delivery     TEXT NOT NULL,
  delivered_at REAL,
  pid          INTEGER,
  start_time   REAL,
  result_path  TEXT,
  result_chars INTEGER,
  peak_mem_gb  REAL,
  pruned_at    REAL,
  record       TEXT NOT NULL
) STRICT;
-- seq rides along so max(seq) for restart reads this index, not the table: a separate seq index would
-- cost every admission one more page write.
CREATE INDEX runs_by_parent ON runs (parent, ord, seq);
-- Live runs are few (bounded by the cap and the queue bounds); queries for them read only this. It is
-- keyed on the live flag, not on status: a flag assigned only when a run ends leaves the index alone
-- through queued -> starting -> running, where SQLite would rewrite the entry on every status write.
CREATE INDEX runs_live ON runs (ord) WHERE live = 1;
CREATE INDEX runs_by_batch ON runs (batch_id, ord) WHERE batch_id IS NOT NULL;

-- Apart from runs: a task can be 100k characters, and every state change rewrites the whole runs row.
-- Since version 7 only long specs are kept here (a short one rides in runs.spec).
CREATE TABLE specs (
  ord  INTEGER PRIMARY KEY REFERENCES runs (ord),
  spec TEXT NOT NULL
) STRICT;

CREATE TABLE outbox (
  ord        INTEGER PRIMARY KEY,
  id         TEXT NOT NULL UNIQUE,
  parent     TEXT NOT NULL,
  kind       TEXT NOT NULL,
  run_ids    TEXT NOT NULL,
  batch_id   TEXT,
  created_at REAL NOT NULL,
  state      TEXT NOT NULL,
  attempts   INTEGER NOT NULL,
  settled_at REAL
) STRICT;
-- Pending events are few (each is settled within the delivery timeout); settled ones are history.
CREATE INDEX outbox_pending ON outbox (parent, ord) WHERE state = 'pending';

CREATE TABLE conversations (
  ord    INTEGER PRIMARY KEY,
  id     TEXT NOT NULL UNIQUE,
  record TEXT NOT NULL
) STRICT;

CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
`;

/**
 * Version 2, for a daemon that runs for months: the idempotency key and the acknowledgement get columns
 * (a command id is looked up in the store once the scheduler forgot it), the reaper's seed and history
 * pruning read partial indexes, an event is found by its first run (pruned with it), and only live
 * conversations are read at start.
 */
const V2 = `
ALTER TABLE runs ADD COLUMN command_id TEXT;
ALTER TABLE runs ADD COLUMN acked_at REAL;
UPDATE runs SET command_id = json_extract(record, '$.commandId');
CREATE INDEX runs_by_command ON runs (command_id) WHERE command_id IS NOT NULL;
CREATE INDEX runs_unpruned ON runs (ord) WHERE pruned_at IS NULL AND live = 0 AND delivery <> 'pending';

ALTER TABLE outbox ADD COLUMN first_run TEXT;
ALTER TABLE outbox ADD COLUMN acked_at REAL;
UPDATE outbox SET first_run = json_extract(run_ids, '$[0]');
CREATE INDEX outbox_by_first_run ON outbox (first_run);

ALTER TABLE conversations ADD COLUMN live INTEGER NOT NULL DEFAULT 1;
UPDATE conversations SET live = (json_extract(record, '$.state') <> 'released');
CREATE INDEX conversations_live ON conversations (ord) WHERE live = 1;
`;

/** Version 3: hosted chats survive a restart (issue 12 §4); one row per open chat, the record as JSON. */
const V3 = `
CREATE TABLE chats (
  ord    INTEGER PRIMARY KEY,
  id     TEXT NOT NULL UNIQUE,
  record TEXT NOT NULL
) STRICT;
`;

/**
 * Version 4: what a real agent reports about a run: the typed cause of a failure (`error_kind`) and the
 * last `usage_update` (tokens in use, context size, cost).
 */
const V4 = `
ALTER TABLE runs ADD COLUMN error_kind TEXT;
ALTER TABLE runs ADD COLUMN usage_tokens INTEGER;
ALTER TABLE runs ADD COLUMN usage_context INTEGER;
ALTER TABLE runs ADD COLUMN usage_cost_usd REAL;
`;

/** Version 5: what the provider gateway counted for a run's model calls (issue 17). */
const V5 = `
ALTER TABLE runs ADD COLUMN usage_input_tokens INTEGER;
ALTER TABLE runs ADD COLUMN usage_output_tokens INTEGER;
ALTER TABLE runs ADD COLUMN usage_requests INTEGER;
ALTER TABLE runs ADD COLUMN usage_rate_limited INTEGER;
`;

/** Version 6: cluster mode (issue 18): the gateway that executes a run, where its transcript lives. */
const V6 = `
ALTER TABLE runs ADD COLUMN host TEXT;
`;

/**
 * Version 7 (issue 12 §3): a short spec rides in its runs row, so admitting a run writes one B-tree fewer
 * (see `INLINE_SPEC_CHARS` in `sqlite-statements.ts`); a long one stays in `specs`, where the run's state
 * changes do not rewrite it. Specs written before stay where they are: a run's spec is `runs.spec`, else
 * its `specs` row.
 */
const V7 = `
ALTER TABLE runs ADD COLUMN spec TEXT;
`;

/** Version 8 (issue 28): bytes of a run's output lost to failed transcript writes (`transcript_gap`). */
const V8 = `
ALTER TABLE runs ADD COLUMN transcript_gap INTEGER;
`;

/** Version 9 (issue 31): a run's isolated workspace (branch, base, head, changes, conflicts) as JSON. */
const V9 = `
ALTER TABLE runs ADD COLUMN workspace TEXT;
`;

const MIGRATIONS: readonly string[] = [V1, V2, V3, V4, V5, V6, V7, V8, V9];

/** The schema version this code writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Brings the file's schema up to {@link SCHEMA_VERSION} (`target` only for tests that need a file as an
 * older Crew left it). Throws, leaving the file untouched, when the file was written by a newer Crew (a
 * version this code does not know).
 */
export function migrate(db: Database.Database, target = SCHEMA_VERSION): void {
  db.transaction(() => {
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > SCHEMA_VERSION) {
      throw new CrewFault(
        'store_unusable',
        `crew.db has schema version ${version}, newer than this Crew knows (${SCHEMA_VERSION}): it was written by a newer Crew; run that version, or move crew.db aside to start fresh`,
      );
    }
    for (let v = version; v < target; v++) db.exec(MIGRATIONS[v] as string);
    if (version < target) db.pragma(`user_version = ${target}`);
  }).immediate();
}
