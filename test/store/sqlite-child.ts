import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { ended, event, queued, running, spec } from './store-fixtures.js';

/**
 * A second process on the same `crew.db`, for the SQLite store's concurrency tests.
 *
 *   hold <db> <ms>           takes the write lock (BEGIN IMMEDIATE), prints `locked`, holds it <ms>, commits
 *   write <db> <prefix> <n>  opens SqliteStore, takes an epoch and prints `ready`; when its stdin closes
 *                            (the start signal) runs <n> runs (admit, start, end + event, deliver: four
 *                            transactions each), then prints `{"epoch": <its epoch>}`
 */

const [mode, dbPath, ...rest] = process.argv.slice(2);
if (dbPath === undefined) throw new Error('Expected `hold <db> <ms>` or `write <db> <prefix> <n>`');

if (mode === 'hold') {
  const db = new Database(dbPath);
  db.exec('BEGIN IMMEDIATE');
  process.stdout.write('locked\n');
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(rest[0]));
  db.exec('COMMIT');
  db.close();
} else if (mode === 'write') {
  const prefix = rest[0] ?? 'x';
  const count = Number(rest[1]);
  const store = new SqliteStore(dbPath);
  try {
    const epoch = store.nextEpoch();
    process.stdout.write('ready\n');
    readFileSync(0); // blocks until the parent closes stdin, so every writer starts at once
    for (let i = 0; i < count; i++) {
      const id = `${prefix}-${i}`;
      const fields = { parent: `mcp:${prefix}`, seq: i };
      store.apply({ epoch, newRuns: [{ run: queued(id, fields), spec: spec() }] });
      store.apply({ epoch, runs: [running(id, fields)] });
      store.apply({ epoch, runs: [ended(id, 'completed', fields)], outbox: [event(`e-${id}`, [id])] });
      store.apply({ epoch, settle: [{ eventId: `e-${id}`, state: 'delivered', at: i }] });
    }
    process.stdout.write(`${JSON.stringify({ epoch })}\n`);
  } finally {
    store.close();
  }
} else {
  throw new Error(`Expected mode hold or write, got ${mode}`);
}
