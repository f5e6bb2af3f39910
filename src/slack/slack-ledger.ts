import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { makePrivateDbFile } from '../store/private-db-file.js';

/** One posted result: where its first message is, whose it is, and whether it was re-announced. */
export interface PostedResult {
  eventId: string;
  user: string;
  channel: string;
  /** The first message (header, first chunk, Ack button). */
  firstTs: string;
  runId: string;
  postedAt: number;
  reannouncedAt?: number;
}

/** One part of a result: an intent is recorded before its post, the `ts` once Slack answered. */
export interface PostedPart {
  part: number;
  channel: string;
  ts?: string;
  intentAt: number;
}

/**
 * What Crew has posted to Slack, by outbox event id, in `$CREW_HOME/slack.db` (SQLite, WAL): the
 * Slack sink's memory across restarts, so a redelivered event is never posted twice. Each part is
 * recorded as an intent before `chat.postMessage` and with its `ts` after; an intent without a `ts` (a
 * crash in between) is looked up in the channel's history before posting again. Bounded: beyond
 * `maxResults` results, the oldest go with their parts.
 */
export class SlackLedger {
  private readonly db: Database.Database;
  private readonly maxResults: number;
  private readonly statements;

  constructor(path: string, options: { maxResults?: number } = {}) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    // What Crew posted to Slack (channels, users, run ids): private like crew.db.
    makePrivateDbFile(path);
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('busy_timeout = 5000');
    this.maxResults = options.maxResults ?? 10_000;
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS slack_parts (
        event_id TEXT NOT NULL, part INTEGER NOT NULL, channel TEXT NOT NULL, ts TEXT, intent_at INTEGER NOT NULL,
        PRIMARY KEY (event_id, part));
      CREATE TABLE IF NOT EXISTS slack_results (
        seq INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT NOT NULL UNIQUE, user TEXT NOT NULL,
        channel TEXT NOT NULL, first_ts TEXT NOT NULL, run_id TEXT NOT NULL, posted_at INTEGER NOT NULL,
        reannounced_at INTEGER);
      CREATE INDEX IF NOT EXISTS slack_results_due ON slack_results (reannounced_at, posted_at);
    `);
    this.statements = {
      parts: this.db.prepare(
        'SELECT part, channel, ts, intent_at FROM slack_parts WHERE event_id = ? ORDER BY part',
      ),
      intent: this.db.prepare(
        'INSERT INTO slack_parts (event_id, part, channel, ts, intent_at) VALUES (?, ?, ?, NULL, ?) ON CONFLICT DO UPDATE SET channel = excluded.channel, intent_at = excluded.intent_at WHERE ts IS NULL',
      ),
      posted: this.db.prepare('UPDATE slack_parts SET ts = ? WHERE event_id = ? AND part = ?'),
      result: this.db.prepare('SELECT * FROM slack_results WHERE event_id = ?'),
      addResult: this.db.prepare(
        'INSERT OR IGNORE INTO slack_results (event_id, user, channel, first_ts, run_id, posted_at) VALUES (?, ?, ?, ?, ?, ?)',
      ),
      reannounced: this.db.prepare('UPDATE slack_results SET reannounced_at = ? WHERE event_id = ?'),
      due: this.db.prepare(
        'SELECT * FROM slack_results WHERE reannounced_at IS NULL ORDER BY posted_at LIMIT ?',
      ),
      count: this.db.prepare('SELECT COUNT(*) AS n FROM slack_results'),
      oldest: this.db.prepare('SELECT event_id FROM slack_results ORDER BY seq LIMIT ?'),
      dropResult: this.db.prepare('DELETE FROM slack_results WHERE event_id = ?'),
      dropParts: this.db.prepare('DELETE FROM slack_parts WHERE event_id = ?'),
    };
  }

  parts(eventId: string): PostedPart[] {
    return (
      this.statements.parts.all(eventId) as {
        part: number;
        channel: string;
        ts: string | null;
        intent_at: number;
      }[]
    ).map((r) => ({
      part: r.part,
      channel: r.channel,
      intentAt: r.intent_at,
      ...(r.ts !== null ? { ts: r.ts } : {}),
    }));
  }

  recordIntent(eventId: string, part: number, channel: string, at: number): void {
    this.statements.intent.run(eventId, part, channel, at);
  }

  recordPart(eventId: string, part: number, ts: string): void {
    this.statements.posted.run(ts, eventId, part);
  }

  result(eventId: string): PostedResult | undefined {
    const row = this.statements.result.get(eventId) as ResultRow | undefined;
    return row ? toResult(row) : undefined;
  }

  /** Every part is posted: the result is complete (and due for a re-announcement). Prunes the oldest. */
  recordResult(result: Omit<PostedResult, 'reannouncedAt'>): void {
    this.db.transaction(() => {
      this.statements.addResult.run(
        result.eventId,
        result.user,
        result.channel,
        result.firstTs,
        result.runId,
        result.postedAt,
      );
      const { n } = this.statements.count.get() as { n: number };
      if (n > this.maxResults) {
        for (const { event_id } of this.statements.oldest.all(n - this.maxResults) as {
          event_id: string;
        }[]) {
          this.statements.dropResult.run(event_id);
          this.statements.dropParts.run(event_id);
        }
      }
    })();
  }

  recordReannounced(eventId: string, at: number): void {
    this.statements.reannounced.run(at, eventId);
  }

  /** Results not yet re-announced, oldest first. */
  notReannounced(limit = 10_000): PostedResult[] {
    return (this.statements.due.all(limit) as ResultRow[]).map(toResult);
  }

  size(): number {
    return (this.statements.count.get() as { n: number }).n;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

interface ResultRow {
  event_id: string;
  user: string;
  channel: string;
  first_ts: string;
  run_id: string;
  posted_at: number;
  reannounced_at: number | null;
}

function toResult(row: ResultRow): PostedResult {
  return {
    eventId: row.event_id,
    user: row.user,
    channel: row.channel,
    firstTs: row.first_ts,
    runId: row.run_id,
    postedAt: row.posted_at,
    ...(row.reannounced_at !== null ? { reannouncedAt: row.reannounced_at } : {}),
  };
}
