import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { errorCodeOf } from '../../src/core/errors.js';
import { ensureDaemon } from '../../src/mcp/daemon-start.js';

/** A loopback port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('the bridge cannot reach a daemon: a daemon_unreachable fault with the cause and what to do', () => {
  it('a CREW_HOME that cannot be made (a file is in the way) is said at once, naming it and the flag to use', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crew-daemon-start-'));
    dirs.push(dir);
    const file = join(dir, 'not-a-dir');
    writeFileSync(file, 'x');
    const crewHome = join(file, 'home');
    let error: unknown;
    try {
      await ensureDaemon({
        crewHome,
        env: {},
        url: `http://127.0.0.1:${await closedPort()}`,
        signal: new AbortController().signal,
        log: () => undefined,
      });
    } catch (caught) {
      error = caught;
    }
    expect(errorCodeOf(error)).toBe('daemon_unreachable');
    expect((error as Error).message).toContain(crewHome);
    expect((error as Error).message).toMatch(/--home DIR or CREW_HOME/);
  });
});
