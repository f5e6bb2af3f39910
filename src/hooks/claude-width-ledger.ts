import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';

/**
 * The width ledger: one row per Claude Code sub-agent in flight, in `$CREW_HOME/crew.db`. Each hook
 * process opens it, makes one atomic change (`BEGIN IMMEDIATE`, so concurrent hook processes for the
 * calls of one message queue up instead of all reading the same count) and exits.
 *
 * Invariants: a row exists only while its sub-agent is believed to run; releasing is deleting, so a
 * second release is a no-op; a reservation is refused when the count in scope has reached the cap,
 * so the count never exceeds the cap through this ledger (lowering the cap can leave it above).
 *
 * It leaves out how events map onto these operations (see `claude-hook-handle.ts`) and config.
 * Tables are prefixed `claude_`: Crew's run store lives in the same file.
 */

/** How long to wait for another hook process's transaction before giving up. @default 5000 */
export const LEDGER_BUSY_TIMEOUT_MS = 5000;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS claude_width_ledger (
  tool_use_id     TEXT PRIMARY KEY,
  session_id      TEXT NOT NULL,
  caller_agent_id TEXT,
  agent_id        TEXT,
  is_background   INTEGER NOT NULL DEFAULT 0,
  subagent_type   TEXT,
  description     TEXT,
  reserved_at_ms  INTEGER NOT NULL,
  mapped_at_ms    INTEGER,
  expires_at_ms   INTEGER NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS claude_width_ledger_by_session ON claude_width_ledger (session_id);
CREATE INDEX IF NOT EXISTS claude_width_ledger_by_agent ON claude_width_ledger (agent_id);
CREATE INDEX IF NOT EXISTS claude_width_ledger_by_expiry ON claude_width_ledger (expires_at_ms);
CREATE TABLE IF NOT EXISTS claude_config_cache (
  raw      TEXT PRIMARY KEY,
  resolved TEXT NOT NULL
) STRICT;
`;

/** `session`: the cap counts one Claude Code session's sub-agents; `host`: every session's. */
export type WidthScope = 'session' | 'host';

export interface WidthLimits {
  maxInFlight: number;
  scope: WidthScope;
  /** A reservation not released within this is dropped (an agent killed without any event). */
  ttlMs: number;
}

export interface Reservation {
  toolUseId: string;
  sessionId: string;
  callerAgentId?: string;
  subagentType?: string;
  description?: string;
}

export type ReserveResult =
  | { admitted: true; inFlight: number; isDuplicate: boolean }
  | { admitted: false; inFlight: number; limit: number; scope: WidthScope };

/** One sub-agent in flight, as listed by `crew list --claude`. */
export interface LedgerEntry {
  toolUseId: string;
  sessionId: string;
  callerAgentId: string | null;
  agentId: string | null;
  isBackground: boolean;
  subagentType: string | null;
  description: string | null;
  reservedAtMs: number;
  expiresAtMs: number;
}

interface LedgerRow {
  tool_use_id: string;
  session_id: string;
  caller_agent_id: string | null;
  agent_id: string | null;
  is_background: number;
  subagent_type: string | null;
  description: string | null;
  reserved_at_ms: number;
  expires_at_ms: number;
}

function toEntry(row: LedgerRow): LedgerEntry {
  return {
    toolUseId: row.tool_use_id,
    sessionId: row.session_id,
    callerAgentId: row.caller_agent_id,
    agentId: row.agent_id,
    isBackground: row.is_background === 1,
    subagentType: row.subagent_type,
    description: row.description,
    reservedAtMs: row.reserved_at_ms,
    expiresAtMs: row.expires_at_ms,
  };
}

/**
 * `PRAGMA journal_mode = WAL`, retried for up to `timeoutMs`. While another process holds a write lock
 * on a file still in rollback mode (several hook processes opening a fresh crew.db at once), SQLite
 * answers the switch with SQLITE_BUSY at once instead of waiting through the busy timeout.
 */
function enableWal(db: Database.Database, timeoutMs: number): void {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'SQLITE_BUSY' || Date.now() >= deadline) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10); // a synchronous 10 ms pause
    }
  }
}

export class ClaudeWidthLedger {
  private constructor(private readonly db: Database.Database) {}

  /** Opens (creating if needed) the ledger for writing: WAL, busy timeout, tables ensured. */
  static open(dbPath: string): ClaudeWidthLedger {
    mkdirSync(dirname(dbPath), { recursive: true, mode: 0o700 });
    // crew.db holds task text once the daemon shares it: created 0600 (its -wal and -shm follow).
    try {
      closeSync(openSync(dbPath, 'a', 0o600));
    } catch {
      // SQLite's own open says what is wrong
    }
    const db = new Database(dbPath, { timeout: LEDGER_BUSY_TIMEOUT_MS });
    try {
      enableWal(db, LEDGER_BUSY_TIMEOUT_MS);
      // WAL with NORMAL survives a process crash; a power cut can lose the last reservations,
      // which the TTL then covers. The hook's start-to-answer time matters more.
      db.pragma('synchronous = NORMAL');
      // Checked by a plain read first: most opens find the tables and need no write lock for them.
      const tables = db
        .prepare(
          `SELECT COUNT(*) AS n FROM sqlite_master
           WHERE type = 'table' AND name IN ('claude_width_ledger', 'claude_config_cache')`,
        )
        .get() as { n: number };
      if (tables.n < 2) db.transaction(() => db.exec(SCHEMA)).immediate();
    } catch (error) {
      db.close();
      throw error;
    }
    return new ClaudeWidthLedger(db);
  }

  /**
   * Opens an existing ledger read-only (for listing); `undefined` when there is no database or no
   * ledger table yet, so listing never creates files.
   */
  static openForReading(dbPath: string): ClaudeWidthLedger | undefined {
    let db: Database.Database;
    try {
      db = new Database(dbPath, { readonly: true, fileMustExist: true, timeout: LEDGER_BUSY_TIMEOUT_MS });
    } catch {
      return undefined;
    }
    const table = db
      .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'claude_width_ledger'")
      .get();
    if (table === undefined) {
      db.close();
      return undefined;
    }
    return new ClaudeWidthLedger(db);
  }

  close(): void {
    this.db.close();
  }

  /**
   * Takes one place for `req.toolUseId` if fewer than `limits.maxInFlight` are in flight in scope.
   * A tool_use_id already reserved is admitted again without a second place (a hook installed in two
   * settings files fires twice for one call).
   */
  reserve(req: Reservation, limits: WidthLimits, nowMs: number): ReserveResult {
    return this.db
      .transaction((): ReserveResult => {
        this.expireInTx(nowMs);
        const inFlight = this.countInScope(req.sessionId, limits.scope);
        const existing = this.db
          .prepare('SELECT 1 FROM claude_width_ledger WHERE tool_use_id = ?')
          .get(req.toolUseId);
        if (existing !== undefined) return { admitted: true, inFlight, isDuplicate: true };
        if (inFlight >= limits.maxInFlight) {
          return { admitted: false, inFlight, limit: limits.maxInFlight, scope: limits.scope };
        }
        this.db
          .prepare(
            `INSERT INTO claude_width_ledger
               (tool_use_id, session_id, caller_agent_id, subagent_type, description, reserved_at_ms, expires_at_ms)
             VALUES (?, ?, ?, ?, ?, ?, ?)`,
          )
          .run(
            req.toolUseId,
            req.sessionId,
            req.callerAgentId ?? null,
            req.subagentType ?? null,
            req.description ?? null,
            nowMs,
            nowMs + limits.ttlMs,
          );
        return { admitted: true, inFlight: inFlight + 1, isDuplicate: false };
      })
      .immediate();
  }

  /** Releases the reservation of one `Agent` call (foreground return, failure). Returns rows released. */
  releaseToolUse(toolUseId: string, nowMs: number): number {
    return this.write(nowMs, () =>
      this.changes('DELETE FROM claude_width_ledger WHERE tool_use_id = ?', toolUseId),
    );
  }

  /**
   * Records that the call `toolUseId` launched background sub-agent `agentId`, so its `SubagentStop`
   * can release it. A launch with no reservation (its PreToolUse failed open) is adopted: it runs,
   * so it counts.
   */
  markBackground(
    reservation: Reservation & { agentId: string },
    limits: Pick<WidthLimits, 'ttlMs'>,
    nowMs: number,
  ): void {
    this.write(nowMs, () => {
      const updated = this.changes(
        `UPDATE claude_width_ledger SET agent_id = ?, is_background = 1, mapped_at_ms = ?
         WHERE tool_use_id = ?`,
        reservation.agentId,
        nowMs,
        reservation.toolUseId,
      );
      if (updated > 0) return;
      this.db
        .prepare(
          `INSERT INTO claude_width_ledger
             (tool_use_id, session_id, agent_id, is_background, reserved_at_ms, mapped_at_ms, expires_at_ms)
           VALUES (?, ?, ?, 1, ?, ?, ?)`,
        )
        .run(
          reservation.toolUseId,
          reservation.sessionId,
          reservation.agentId,
          nowMs,
          nowMs,
          nowMs + limits.ttlMs,
        );
    });
  }

  /**
   * Sub-agent `agentId` stopped: releases it (when it was a mapped background launch) and the
   * unmapped calls it made itself, which cannot outlive it.
   */
  releaseAgent(sessionId: string, agentId: string, nowMs: number): number {
    return this.write(nowMs, () =>
      this.changes(
        `DELETE FROM claude_width_ledger
         WHERE (session_id = ? AND agent_id = ?)
            OR (session_id = ? AND caller_agent_id = ? AND agent_id IS NULL)`,
        sessionId,
        agentId,
        sessionId,
        agentId,
      ),
    );
  }

  /**
   * The main thread of `sessionId` ended its turn: every call it made in the foreground has
   * returned, so its unmapped reservations are stale (a call denied by a later permission check,
   * or interrupted, never gets a PostToolUse).
   */
  releaseMainThreadForeground(sessionId: string, nowMs: number): number {
    return this.write(nowMs, () =>
      this.changes(
        `DELETE FROM claude_width_ledger
         WHERE session_id = ? AND caller_agent_id IS NULL AND agent_id IS NULL`,
        sessionId,
      ),
    );
  }

  /**
   * Releases the background sub-agents of `sessionId` that Claude Code no longer lists as running
   * (killed agents get no SubagentStop). Entries mapped within `graceMs` are kept: the list may
   * have been taken before their launch was recorded.
   */
  reconcile(sessionId: string, runningIds: ReadonlySet<string>, nowMs: number, graceMs: number): number {
    return this.write(nowMs, () => {
      const mapped = this.db
        .prepare(
          `SELECT tool_use_id, agent_id FROM claude_width_ledger
           WHERE session_id = ? AND agent_id IS NOT NULL AND mapped_at_ms <= ?`,
        )
        .all(sessionId, nowMs - graceMs) as Array<{ tool_use_id: string; agent_id: string }>;
      let released = 0;
      for (const row of mapped) {
        if (runningIds.has(row.agent_id)) continue;
        released += this.changes('DELETE FROM claude_width_ledger WHERE tool_use_id = ?', row.tool_use_id);
      }
      return released;
    });
  }

  /** Drops reservations whose TTL has passed. Every write does this first; exposed for tests. */
  expire(nowMs: number): number {
    return this.db.transaction(() => this.expireInTx(nowMs)).immediate();
  }

  /** Every reservation not yet expired at `nowMs`, by session then age. Reads only. */
  list(nowMs: number): LedgerEntry[] {
    const rows = this.db
      .prepare(
        `SELECT * FROM claude_width_ledger WHERE expires_at_ms > ?
         ORDER BY session_id, reserved_at_ms, tool_use_id`,
      )
      .all(nowMs) as LedgerRow[];
    return rows.map(toEntry);
  }

  /** The resolved config stored for this exact raw text of the hook's keys, if any. */
  cachedConfig(raw: string): string | undefined {
    const row = this.db.prepare('SELECT resolved FROM claude_config_cache WHERE raw = ?').get(raw) as
      | { resolved: string }
      | undefined;
    return row?.resolved;
  }

  /** Keeps one cached resolution: the raw text changes only when someone edits config.json. */
  storeConfig(raw: string, resolved: string): void {
    this.db
      .transaction(() => {
        this.db.prepare('DELETE FROM claude_config_cache').run();
        this.db.prepare('INSERT INTO claude_config_cache (raw, resolved) VALUES (?, ?)').run(raw, resolved);
      })
      .immediate();
  }

  /** One `BEGIN IMMEDIATE` transaction that first drops expired reservations, then runs `fn`. */
  private write<T>(nowMs: number, fn: () => T): T {
    return this.db
      .transaction(() => {
        this.expireInTx(nowMs);
        return fn();
      })
      .immediate();
  }

  private expireInTx(nowMs: number): number {
    return this.changes('DELETE FROM claude_width_ledger WHERE expires_at_ms <= ?', nowMs);
  }

  private countInScope(sessionId: string, scope: WidthScope): number {
    const row =
      scope === 'host'
        ? this.db.prepare('SELECT COUNT(*) AS n FROM claude_width_ledger').get()
        : this.db
            .prepare('SELECT COUNT(*) AS n FROM claude_width_ledger WHERE session_id = ?')
            .get(sessionId);
    return (row as { n: number }).n;
  }

  private changes(sql: string, ...params: Array<string | number>): number {
    return this.db.prepare(sql).run(...params).changes;
  }
}
