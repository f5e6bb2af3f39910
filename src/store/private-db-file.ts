import { chmodSync, closeSync, existsSync, openSync } from 'node:fs';

/**
 * A SQLite file that holds task texts or chat content (`crew.db`, `slack.db`) is created 0600 before
 * SQLite opens it, and SQLite gives its `-wal` and `-shm` the main file's mode. Files an older Crew made
 * 0644 are narrowed here too. A path that cannot be opened is left to SQLite's own open to report.
 */
export function makePrivateDbFile(path: string): void {
  if (path === ':memory:') return;
  try {
    closeSync(openSync(path, 'a', 0o600));
  } catch {
    return;
  }
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    if (existsSync(file)) chmodSync(file, 0o600);
  }
}
