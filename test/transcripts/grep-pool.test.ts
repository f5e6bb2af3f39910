import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isCrewError } from '../../src/core/errors.js';
import { findGrepWorkerFile, GrepPool } from '../../src/transcripts/grep-pool.js';

/** The pool's threads run the bundled worker (built by the test run's global setup). */
const workerFile = findGrepWorkerFile();

describe('GrepPool (worker threads from the test bundle)', () => {
  const dirs: string[] = [];
  const pools: GrepPool[] = [];
  afterEach(async () => {
    for (const pool of pools.splice(0)) await pool.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  function transcript(text: string): string {
    const dir = mkdtempSync(join(tmpdir(), 'crew-grep-pool-'));
    dirs.push(dir);
    const path = join(dir, 'result.txt');
    writeFileSync(path, text);
    return path;
  }

  function pool(options: { size?: number; maxQueued?: number; maxQueuedPerClient?: number } = {}): GrepPool {
    expect(workerFile, 'the test bundle holds transcripts/grep-worker.js').toBeDefined();
    const created = new GrepPool({ workerFile: workerFile!, ...options });
    pools.push(created);
    return created;
  }

  it('pages a transcript with grep on a thread', async () => {
    const path = transcript('alpha\nbeta\ngamma\nalphabet\n');
    const page = await pool().run(path, { grep: '^alpha', maxChars: 1000 }, 1000);
    expect(page.text).toBe('[lines 1-4 of 4]\n1: alpha\n4: alphabet');
  });

  it('refuses a bad pattern with the typed refusal, across the thread', async () => {
    const path = transcript('x\n');
    const error = await pool()
      .run(path, { grep: '(a)\\1', maxChars: 1000 }, 1000)
      .catch((e: unknown) => e);
    expect(isCrewError(error) && error.refusal).toMatchObject({ code: 'invalid_argument', path: 'grep' });
  });

  it('never starts more threads than its size, and queues the rest', async () => {
    const path = transcript('a\n'.repeat(1000));
    const small = pool({ size: 2 });
    const pages = await Promise.all(
      Array.from({ length: 6 }, () => small.run(path, { grep: 'a', limit: 1, maxChars: 100 }, 1000)),
    );
    expect(pages.every((p) => p.text.startsWith('[lines 1-1 of 1000'))).toBe(true);
    expect(small.threads).toBe(2);
  });

  it('refuses queue_full past its queue bound', async () => {
    const path = transcript('ab\n'.repeat(10));
    const tiny = pool({ size: 1, maxQueued: 1 });
    const runs = [0, 1, 2].map(() =>
      tiny.run(path, { grep: 'a', maxChars: 100 }, 1000).catch((e: unknown) => e),
    );
    const results = await Promise.all(runs);
    const refused = results.filter((r) => isCrewError(r) && r.code === 'queue_full');
    expect(refused).toHaveLength(1);
  });

  it("takes turns between clients: one client's 50 queued greps delay another's one by one slot at most", async () => {
    const path = transcript('ab\n'.repeat(2000));
    const single = pool({ size: 1, maxQueued: 64, maxQueuedPerClient: 64 });
    const finished: string[] = [];
    const grep = (client: string, name: string) =>
      single.run(path, { grep: 'a', limit: 5, maxChars: 200, client }, 5000).then(() => {
        finished.push(name);
      });
    const busy = Array.from({ length: 50 }, (_, i) => grep('mcp:busy', `busy${i}`));
    const lone = grep('mcp:lone', 'lone');
    await Promise.all([...busy, lone]);
    // busy0 took the one thread at once; the lone grep is next, not 51st.
    expect(finished.indexOf('lone')).toBe(1);
    expect(finished.filter((n) => n !== 'lone')).toEqual(Array.from({ length: 50 }, (_, i) => `busy${i}`));
  });

  it('refuses a client past its own queue bound with client_queue_full, and still serves others', async () => {
    const path = transcript('ab\n'.repeat(10));
    const bounded = pool({ size: 1, maxQueued: 64, maxQueuedPerClient: 2 });
    const run = (client: string) =>
      bounded.run(path, { grep: 'a', maxChars: 100, client }, 1000).catch((e: unknown) => e);
    // The first starts on the thread; two more wait; the fourth is one too many for this client.
    const mine = [run('mcp:a'), run('mcp:a'), run('mcp:a'), run('mcp:a')];
    const theirs = run('mcp:b');
    const results = await Promise.all([...mine, theirs]);
    const refused = results.filter((r) => isCrewError(r));
    expect(refused).toHaveLength(1);
    const refusal = isCrewError(refused[0]) ? refused[0].refusal : undefined;
    expect(refusal).toMatchObject({ code: 'queue_full', limit: 2, current: 2 });
    expect(refusal?.message).toContain('you already have 2 greps waiting');
    expect(isCrewError(results[4])).toBe(false);
  });

  it('ends every thread on close and refuses later calls', async () => {
    const path = transcript('a\n');
    const closing = pool();
    await closing.run(path, { grep: 'a', maxChars: 100 }, 1000);
    expect(closing.threads).toBe(1);
    await closing.close();
    expect(closing.threads).toBe(0);
    const error = await closing.run(path, { grep: 'a', maxChars: 100 }, 1000).catch((e: unknown) => e);
    expect(isCrewError(error) && error.code).toBe('not_running');
  });
});
