import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Run } from '../../src/core/types.js';
import { outboxQuery, RESTART_SQL, runsQuery } from '../../src/store/sqlite-queries.js';
import { migrate, SCHEMA_VERSION } from '../../src/store/sqlite-schema.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import type { OutboxQuery, RunQuery } from '../../src/store/store.js';
import { bundledCommand } from '../helpers/test-bundle.js';
import { storeConformance } from './store-conformance.js';
import { admit, ended, ids, queued, running, spec } from './store-fixtures.js';

function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'crew-store-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

storeConformance('SqliteStore', () => {
  const { dir, cleanup } = tempDir();
  const path = join(dir, 'crew.db');
  let store = new SqliteStore(path);
  return {
    store,
    reopen: () => {
      store.close();
      store = new SqliteStore(path);
      return store;
    },
    cleanup: () => {
      store.close();
      cleanup();
    },
  };
});

/** A child process running `sqlite-child.ts` (from the test bundle), with its stdout lines. */
function child(...args: string[]): {
  process: ChildProcess;
  line: () => Promise<string>;
  exit: Promise<number>;
} {
  const [node, ...argv] = bundledCommand('test-fixtures/sqlite-child', ...args) as [string, ...string[]];
  const proc = spawn(node, argv, {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let buffered = '';
  const waiters: ((line: string) => void)[] = [];
  const lines: string[] = [];
  proc.stdout?.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    for (let i = buffered.indexOf('\n'); i >= 0; i = buffered.indexOf('\n')) {
      const line = buffered.slice(0, i);
      buffered = buffered.slice(i + 1);
      const waiter = waiters.shift();
      if (waiter) waiter(line);
      else lines.push(line);
    }
  });
  const exit = new Promise<number>((resolve) => proc.on('exit', (code) => resolve(code ?? -1)));
  const line = () =>
    new Promise<string>((resolve) => {
      const next = lines.shift();
      if (next !== undefined) resolve(next);
      else waiters.push(resolve);
    });
  return { process: proc, line, exit };
}

describe('SqliteStore on disk', () => {
  let dir: string;
  let path: string;
  let cleanupDir: () => void;
  const opened: (SqliteStore | Database.Database)[] = [];

  function open(options?: ConstructorParameters<typeof SqliteStore>[1]): SqliteStore {
    const store = new SqliteStore(path, options);
    opened.push(store);
    return store;
  }
  function raw(readonly = false): Database.Database {
    mkdirSync(dirname(path), { recursive: true });
    const db = new Database(path, { readonly });
    opened.push(db);
    return db;
  }

  beforeEach(() => {
    ({ dir, cleanup: cleanupDir } = tempDir());
    path = join(dir, 'home', 'crew.db');
  });
  afterEach(() => {
    for (const handle of opened.splice(0)) handle.close();
    cleanupDir();
  });

  it('creates its directory and a WAL database at the current schema version', () => {
    open();
    const db = raw(true);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .pluck()
      .all();
    expect(tables).toEqual(['chats', 'conversations', 'meta', 'outbox', 'runs', 'specs']);
  });

  it('refuses a file written by a newer schema and leaves it as it was', () => {
    const db = raw();
    db.pragma('user_version = 99');
    expect(() => open()).toThrow(
      new RegExp(`schema version 99, newer than this Crew knows \\(${SCHEMA_VERSION}\\)`),
    );
    expect(db.pragma('user_version', { simple: true })).toBe(99);
    expect(db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'runs'").pluck().get()).toBe(0);
  });

  it('keeps a short spec in the runs row and a long one apart, and reads a version 6 file whose specs are all apart', () => {
    // A version 6 file with one run, its spec in the specs table (as every spec was then).
    const v6 = raw();
    migrate(v6, 6);
    const oldSpec = spec('task of old');
    v6.prepare(
      `INSERT INTO runs (id, parent, status, live, seq, created_at, delivery, record)
       VALUES ('old', 'mcp:a', 'queued', 1, 0, 1000, 'pending', ?)`,
    ).run(JSON.stringify(queued('old')));
    v6.prepare("INSERT INTO specs (ord, spec) SELECT ord, ? FROM runs WHERE id = 'old'").run(
      JSON.stringify(oldSpec),
    );
    v6.close();

    const store = open();
    expect(store.run('old')?.spec).toEqual(oldSpec);
    const long = spec('x'.repeat(100_000));
    store.apply({
      epoch: 1,
      newRuns: [
        { run: queued('short', { seq: 1 }), spec: spec('a short task') },
        { run: queued('long', { seq: 2 }), spec: long },
      ],
    });
    const db = raw(true);
    const placed = db
      .prepare(
        'SELECT id, runs.spec IS NOT NULL AS inline, specs.ord IS NOT NULL AS apart FROM runs LEFT JOIN specs ON specs.ord = runs.ord ORDER BY runs.ord',
      )
      .all();
    expect(placed).toEqual([
      { id: 'old', inline: 0, apart: 1 },
      { id: 'short', inline: 1, apart: 0 },
      { id: 'long', inline: 0, apart: 1 },
    ]);
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect(store.run('short')?.spec).toEqual(spec('a short task'));
    expect(store.run('long')?.spec).toEqual(long);
    expect(store.runs({}).map((r) => r.spec.task.length)).toEqual([100_000, 12, 11]);
    expect(store.restartState().queued.map((r) => r.id)).toEqual(['old', 'short', 'long']);
  });

  it("shares the file with the Claude hook's claude_ tables without touching them", () => {
    const db = raw();
    db.exec(
      "CREATE TABLE claude_width_ledger (tool_use_id TEXT PRIMARY KEY); INSERT INTO claude_width_ledger VALUES ('t1')",
    );
    const store = open();
    admit(store, [queued('r1')]);
    store.close();
    const again = open();
    expect(ids(again.runs())).toEqual(['r1']);
    expect(db.prepare('SELECT tool_use_id FROM claude_width_ledger').pluck().all()).toEqual(['t1']);
  });

  it('waits for another process holding the write lock (busy timeout), or fails cleanly when it is too short', async () => {
    const patient = open();
    const impatient = open({ busyTimeoutMs: 50 });
    admit(patient, [queued('r0')]);
    const holder = child('hold', path, '1500');
    holder.process.stdin?.end();
    expect(await holder.line()).toBe('locked');

    expect(() => admit(impatient, [queued('r1', { seq: 1 })])).toThrow(/locked|busy/i);
    // WAL: readers are not blocked by the writer.
    expect(ids(patient.runs())).toEqual(['r0']);

    const started = performance.now();
    admit(patient, [queued('r2', { seq: 2 })]);
    const waitedMs = performance.now() - started;
    expect(waitedMs).toBeGreaterThan(300);
    expect(await holder.exit).toBe(0);
    expect(ids(impatient.runs())).toEqual(['r2', 'r0']);
  });

  it('stays consistent with several processes writing at once', async () => {
    const PER_WRITER = 400;
    const store = open();
    const writers = ['p1', 'p2', 'p3'].map((prefix) => child('write', path, prefix, String(PER_WRITER)));
    for (const writer of writers) expect(await writer.line()).toBe('ready');
    for (const writer of writers) writer.process.stdin?.end(); // start together
    const epoch = store.nextEpoch();
    for (let i = 0; i < PER_WRITER; i++) {
      const id = `main-${i}`;
      const fields = { parent: 'mcp:main', seq: i };
      store.apply({ epoch, newRuns: [{ run: queued(id, fields), spec: spec() }] });
      store.apply({ epoch, runs: [running(id, fields)] });
      store.apply({
        epoch,
        runs: [ended(id, 'completed', fields)],
        outbox: [
          {
            id: `e-${id}`,
            parent: 'mcp:main',
            kind: 'completion',
            runIds: [id],
            createdAt: i,
            state: 'pending',
            attempts: 0,
          },
        ],
      });
      store.apply({ epoch, settle: [{ eventId: `e-${id}`, state: 'delivered', at: i }] });
      if (i % 25 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    const epochs = [epoch];
    for (const writer of writers) {
      epochs.push((JSON.parse(await writer.line()) as { epoch: number }).epoch);
      expect(await writer.exit).toBe(0);
    }
    expect(new Set(epochs).size).toBe(4);
    const all = store.runs();
    expect(all).toHaveLength(4 * PER_WRITER);
    // The writers really did overlap: in the order runs were recorded, the writer changes many times.
    const writerOf = all.map((r) => r.run.parent);
    const switches = writerOf.filter((parent, i) => i > 0 && parent !== writerOf[i - 1]).length;
    // The writers really overlapped (how often the OS switched between them varies with load).
    expect(switches).toBeGreaterThan(3);
    for (const parent of ['mcp:main', 'mcp:p1', 'mcp:p2', 'mcp:p3']) {
      const records = store.runs({ parents: [parent] });
      expect(records).toHaveLength(PER_WRITER);
      expect(records.every((r) => r.run.status === 'completed' && r.delivery === 'delivered')).toBe(true);
    }
    expect(store.outbox({ state: 'delivered' })).toHaveLength(4 * PER_WRITER);
    expect(store.runs({ live: true })).toEqual([]);
    expect(raw(true).pragma('integrity_check', { simple: true })).toBe('ok');
  }, 120_000);

  it('answers queries over 100,000 runs correctly', () => {
    const store = open();
    const total = 100_000;
    for (let batch = 0; batch < total / 10_000; batch++) {
      const newRuns = [];
      for (let i = batch * 10_000; i < (batch + 1) * 10_000; i++) {
        const fields = {
          parent: `mcp:p${i % 4}`,
          seq: i,
          ...(i % 10 === 0 ? { batchId: `b${Math.floor(i / 100)}` } : {}),
        };
        const run: Run = i % 1000 === 7 ? queued(`r${i}`, fields) : ended(`r${i}`, 'completed', fields);
        newRuns.push({ run, spec: spec() });
      }
      store.apply({ epoch: 1, newRuns });
    }
    expect(ids(store.runs({ limit: 3 }))).toEqual(['r99999', 'r99998', 'r99997']);
    expect(ids(store.runs({ parents: ['mcp:p1'], limit: 2 }))).toEqual(['r99997', 'r99993']);
    expect(ids(store.runs({ parents: ['mcp:p1', 'mcp:p2'], limit: 3 }))).toEqual([
      'r99998',
      'r99997',
      'r99994',
    ]);
    expect(ids(store.runs({ live: true, parents: ['mcp:p3'], limit: 2 }))).toEqual(['r99007', 'r98007']);
    expect(store.runs({ live: true })).toHaveLength(100);
    expect(ids(store.runs({ ids: ['r5', 'r50000', 'r7'] }))).toEqual(['r50000', 'r7', 'r5']);
    const state = store.restartState();
    expect(state.queued).toHaveLength(100);
    expect(state.queued[0]?.id).toBe('r7');
    expect(state.nextSeq).toBe(total);
    expect(state.waves).toEqual([]); // every wave member has ended
  }, 60_000);

  it('reads through the indexes, not by scanning every run', () => {
    open().close();
    const db = raw(true);
    const planOf = (built: { sql: string; params: Record<string, string | number> }) =>
      db
        .prepare(`EXPLAIN QUERY PLAN ${built.sql}`)
        .all(...(Object.keys(built.params).length > 0 ? [built.params] : []))
        .map((row) => (row as { detail: string }).detail)
        .join(' | ');
    const runPlan = (query: RunQuery) => planOf(runsQuery(query));
    const outboxPlan = (query: OutboxQuery) => planOf(outboxQuery(query));
    expect(runPlan({ parents: ['mcp:a'], limit: 50 })).toMatch(/COVERING INDEX runs_by_parent/);
    expect(runPlan({ parents: ['mcp:a', 'mcp:b'], limit: 50 })).toMatch(/COVERING INDEX runs_by_parent/);
    expect(runPlan({ live: true })).toMatch(/INDEX runs_live\b/);
    expect(runPlan({ live: true, parents: ['mcp:a'] })).toMatch(/INDEX runs_live\b/);
    expect(runPlan({ ids: ['r1', 'r2'] })).toMatch(/INDEX sqlite_autoindex_runs_1 \(id=\?\)/);
    // Unfiltered, newest first: the rowid order itself, read backwards up to the limit, no sort.
    expect(runPlan({ limit: 50 })).not.toMatch(/TEMP B-TREE/);
    expect(outboxPlan({ state: 'pending', parent: 'mcp:a' })).toMatch(/INDEX outbox_pending \(parent=\?\)/);
    expect(outboxPlan({ state: 'pending' })).toMatch(/INDEX outbox_pending\b/);
    // restartState reads follow the live runs, whatever the history holds.
    const restartPlan = (sql: string) => planOf({ sql, params: {} });
    expect(restartPlan(RESTART_SQL.queued)).toMatch(/^SCAN runs USING INDEX runs_live\b/);
    expect(restartPlan(RESTART_SQL.executing)).toMatch(/SCAN runs USING INDEX runs_live\b/);
    expect(restartPlan(RESTART_SQL.openWaveMembers)).toMatch(
      /INDEX runs_by_batch .*SCAN runs USING INDEX runs_live\b/,
    );
    // The live index and one row by its key (the newest): no read of history.
    expect(restartPlan(RESTART_SQL.maxSeq)).toMatch(
      /SCAN runs USING INDEX runs_live\b.*SEARCH runs USING INTEGER PRIMARY KEY/,
    );
    for (const sql of Object.values(RESTART_SQL)) {
      if (sql !== RESTART_SQL.conversations) expect(restartPlan(sql)).not.toMatch(/SCAN runs(?! USING)/);
    }
  });
});
