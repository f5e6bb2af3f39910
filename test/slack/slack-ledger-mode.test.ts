import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SlackLedger } from '../../src/slack/slack-ledger.js';

/** Issue 28, also: `slack.db` (who was sent what, where) is private like `crew.db`: 0600, WAL files too. */

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const modeOf = (path: string) => statSync(path).mode & 0o777;

describe('slack.db file mode', () => {
  it('is created 0600, and its -wal and -shm with it', () => {
    dir = mkdtempSync(join(tmpdir(), 'crew-slack-mode-'));
    const path = join(dir, 'slack.db');
    // Under the usual umask (022) SQLite would make it 0644.
    const ledger = new SlackLedger(path);
    expect(modeOf(path)).toBe(0o600);
    expect(modeOf(`${path}-wal`)).toBe(0o600);
    expect(modeOf(`${path}-shm`)).toBe(0o600);
    ledger.close();
  });

  it('an existing 0644 slack.db is narrowed to 0600 when opened', () => {
    dir = mkdtempSync(join(tmpdir(), 'crew-slack-mode-'));
    const path = join(dir, 'slack.db');
    writeFileSync(path, '', { mode: 0o644 });
    const ledger = new SlackLedger(path);
    expect(modeOf(path)).toBe(0o600);
    ledger.close();
  });
});
