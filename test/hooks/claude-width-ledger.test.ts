import { statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ClaudeWidthLedger, type WidthLimits } from '../../src/hooks/claude-width-ledger.js';
import { type TempDir, tempDir } from './hook-harness.js';

const T0 = 1_700_000_000_000;
const SESSION_CAP: WidthLimits = { maxInFlight: 2, scope: 'session', ttlMs: 60_000 };

let home: TempDir;
let ledger: ClaudeWidthLedger;

beforeEach(() => {
  home = tempDir();
  ledger = ClaudeWidthLedger.open(join(home.dir, 'crew.db'));
});

afterEach(() => {
  ledger.close();
  home.cleanup();
});

function ids(): string[] {
  return ledger.list(T0).map((e) => e.toolUseId);
}

describe('ClaudeWidthLedger', () => {
  it('creates crew.db, its -wal and -shm 0600 (the file the run store shares)', () => {
    ledger.reserve({ toolUseId: 'fresh-0600', sessionId: 's' }, SESSION_CAP, T0);
    for (const file of ['crew.db', 'crew.db-wal', 'crew.db-shm']) {
      expect(statSync(join(home.dir, file)).mode & 0o777, file).toBe(0o600);
    }
  });

  it('creates its tables in WAL mode and leaves other tables alone', () => {
    const db = new Database(join(home.dir, 'crew.db'));
    try {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all();
      expect(tables).toEqual([{ name: 'claude_config_cache' }, { name: 'claude_width_ledger' }]);
    } finally {
      db.close();
    }
  });

  it('admits up to the cap and refuses the next with the count', () => {
    expect(ledger.reserve({ toolUseId: 't1', sessionId: 's' }, SESSION_CAP, T0)).toEqual({
      admitted: true,
      inFlight: 1,
      isDuplicate: false,
    });
    expect(ledger.reserve({ toolUseId: 't2', sessionId: 's' }, SESSION_CAP, T0).admitted).toBe(true);
    expect(ledger.reserve({ toolUseId: 't3', sessionId: 's' }, SESSION_CAP, T0)).toEqual({
      admitted: false,
      inFlight: 2,
      limit: 2,
      scope: 'session',
    });
    expect(ids()).toEqual(['t1', 't2']);
  });

  it('admits a tool_use_id it already holds without taking a second place', () => {
    ledger.reserve({ toolUseId: 't1', sessionId: 's' }, SESSION_CAP, T0);
    ledger.reserve({ toolUseId: 't2', sessionId: 's' }, SESSION_CAP, T0);
    expect(ledger.reserve({ toolUseId: 't1', sessionId: 's' }, SESSION_CAP, T0)).toEqual({
      admitted: true,
      inFlight: 2,
      isDuplicate: true,
    });
    expect(ids()).toEqual(['t1', 't2']);
  });

  it('session scope counts each session apart; host scope counts them together', () => {
    const host: WidthLimits = { ...SESSION_CAP, scope: 'host' };
    ledger.reserve({ toolUseId: 'a1', sessionId: 'A' }, SESSION_CAP, T0);
    ledger.reserve({ toolUseId: 'a2', sessionId: 'A' }, SESSION_CAP, T0);
    expect(ledger.reserve({ toolUseId: 'b1', sessionId: 'B' }, SESSION_CAP, T0).admitted).toBe(true);
    expect(ledger.reserve({ toolUseId: 'b2', sessionId: 'B' }, host, T0)).toMatchObject({
      admitted: false,
      inFlight: 3,
      scope: 'host',
    });
  });

  it('releases by tool_use_id once; a second release is a no-op', () => {
    ledger.reserve({ toolUseId: 't1', sessionId: 's' }, SESSION_CAP, T0);
    expect(ledger.releaseToolUse('t1', T0)).toBe(1);
    expect(ledger.releaseToolUse('t1', T0)).toBe(0);
    expect(ids()).toEqual([]);
  });

  it('maps a background launch to its agent and releases it by agent id', () => {
    ledger.reserve({ toolUseId: 't1', sessionId: 's' }, SESSION_CAP, T0);
    ledger.markBackground({ toolUseId: 't1', sessionId: 's', agentId: 'ag1' }, SESSION_CAP, T0);
    expect(ledger.list(T0)[0]).toMatchObject({ agentId: 'ag1', isBackground: true });
    expect(ledger.releaseToolUse('nope', T0)).toBe(0);
    expect(ledger.releaseAgent('s', 'ag1', T0)).toBe(1);
    expect(ids()).toEqual([]);
  });

  it('adopts a launch it never reserved, since it runs', () => {
    ledger.markBackground({ toolUseId: 'tx', sessionId: 's', agentId: 'agx' }, SESSION_CAP, T0);
    expect(ledger.list(T0)).toMatchObject([{ toolUseId: 'tx', agentId: 'agx', isBackground: true }]);
  });

  it("releases a stopped sub-agent's own unmapped calls, not other sessions' or mapped ones", () => {
    const wide = { ...SESSION_CAP, maxInFlight: 10 };
    ledger.reserve({ toolUseId: 'child', sessionId: 's', callerAgentId: 'ag1' }, wide, T0);
    ledger.reserve({ toolUseId: 'bgchild', sessionId: 's', callerAgentId: 'ag1' }, wide, T0);
    ledger.markBackground({ toolUseId: 'bgchild', sessionId: 's', agentId: 'ag2' }, wide, T0);
    ledger.reserve({ toolUseId: 'other', sessionId: 'z', callerAgentId: 'ag1' }, wide, T0);
    expect(ledger.releaseAgent('s', 'ag1', T0)).toBe(1);
    expect(ids()).toEqual(['bgchild', 'other']);
  });

  it("releases the main thread's unmapped calls at Stop and keeps background and sub-agent ones", () => {
    const wide = { ...SESSION_CAP, maxInFlight: 10 };
    ledger.reserve({ toolUseId: 'fg', sessionId: 's' }, wide, T0);
    ledger.reserve({ toolUseId: 'bg', sessionId: 's' }, wide, T0);
    ledger.markBackground({ toolUseId: 'bg', sessionId: 's', agentId: 'ag' }, wide, T0);
    ledger.reserve({ toolUseId: 'nested', sessionId: 's', callerAgentId: 'ag' }, wide, T0);
    expect(ledger.releaseMainThreadForeground('s', T0)).toBe(1);
    expect(ids()).toEqual(['bg', 'nested']);
  });

  it('reconciles: releases mapped agents not listed as running, outside the grace period', () => {
    const wide = { ...SESSION_CAP, maxInFlight: 10 };
    for (const [tool, agent] of [
      ['t1', 'alive'],
      ['t2', 'killed'],
    ] as const) {
      ledger.reserve({ toolUseId: tool, sessionId: 's' }, wide, T0);
      ledger.markBackground({ toolUseId: tool, sessionId: 's', agentId: agent }, wide, T0);
    }
    ledger.reserve({ toolUseId: 't3', sessionId: 's' }, wide, T0);
    ledger.markBackground({ toolUseId: 't3', sessionId: 's', agentId: 'just-launched' }, wide, T0 + 9_000);
    ledger.reserve({ toolUseId: 'z1', sessionId: 'other' }, wide, T0);
    ledger.markBackground({ toolUseId: 'z1', sessionId: 'other', agentId: 'elsewhere' }, wide, T0);

    expect(ledger.reconcile('s', new Set(['alive']), T0 + 10_000, 5_000)).toBe(1);
    expect(ledger.list(T0 + 10_000).map((e) => e.agentId)).toEqual(['elsewhere', 'alive', 'just-launched']);
  });

  it('expires reservations past their TTL, on any write and on expire()', () => {
    ledger.reserve({ toolUseId: 'old', sessionId: 's' }, SESSION_CAP, T0);
    ledger.reserve({ toolUseId: 'newer', sessionId: 's' }, SESSION_CAP, T0 + 30_000);
    expect(ledger.reserve({ toolUseId: 'third', sessionId: 's' }, SESSION_CAP, T0 + 59_999).admitted).toBe(
      false,
    );
    // At T0 + 60s the first reservation's TTL has run out, which frees its place.
    expect(ledger.reserve({ toolUseId: 'third', sessionId: 's' }, SESSION_CAP, T0 + 60_000).admitted).toBe(
      true,
    );
    expect(ledger.list(T0 + 60_000).map((e) => e.toolUseId)).toEqual(['newer', 'third']);
    expect(ledger.expire(T0 + 90_000)).toBe(1);
    expect(ledger.expire(T0 + 90_000)).toBe(0);
  });

  it('list() hides expired rows without deleting them', () => {
    ledger.reserve({ toolUseId: 't1', sessionId: 's' }, SESSION_CAP, T0);
    expect(ledger.list(T0 + 60_000)).toEqual([]);
    expect(ledger.list(T0)).toHaveLength(1);
  });

  it('keeps one cached config resolution', () => {
    ledger.storeConfig('a', '1');
    ledger.storeConfig('b', '2');
    expect(ledger.cachedConfig('a')).toBeUndefined();
    expect(ledger.cachedConfig('b')).toBe('2');
  });

  it('openForReading creates nothing when there is no database', () => {
    const other = tempDir();
    try {
      expect(ClaudeWidthLedger.openForReading(join(other.dir, 'crew.db'))).toBeUndefined();
      const withoutTable = join(other.dir, 'run-store-only.db');
      const runStore = new Database(withoutTable);
      runStore.exec('CREATE TABLE runs (id TEXT)');
      runStore.close();
      expect(ClaudeWidthLedger.openForReading(withoutTable)).toBeUndefined();
    } finally {
      other.cleanup();
    }
  });
});
