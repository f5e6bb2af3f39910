import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { FileTranscripts } from '../../src/transcripts/file-transcripts.js';
import { MemoryTranscripts } from '../../src/transcripts/memory-transcripts.js';
import { describeTranscriptStore } from './transcript-store-conformance.js';

/** The file store's writer flushes 250 ms after output arrives, on the injected clock. */
const FLUSH_AFTER_MS = 250;

describeTranscriptStore('FileTranscripts', async ({ maxBytes }) => {
  const home = mkdtempSync(join(tmpdir(), 'crew-transcripts-'));
  const clock = new FakeClock();
  const store = new FileTranscripts(home, { maxBytes, clock });
  return {
    store,
    settle: () => clock.advance(FLUSH_AFTER_MS),
    exists: (runId) => existsSync(dirname(store.pathOf(runId))),
    dispose: async () => {
      await store.close();
      rmSync(home, { recursive: true, force: true });
    },
  };
});

describeTranscriptStore('MemoryTranscripts', async ({ maxBytes }) => {
  const store = new MemoryTranscripts({ maxBytes });
  return {
    store,
    settle: async () => undefined,
    exists: (runId) => store.text(runId) !== undefined,
    dispose: async () => undefined,
  };
});

describe('FileTranscripts, a reopened run whose old transcript cannot be emptied', () => {
  it('still closes the run and says so once on stderr', async () => {
    const home = mkdtempSync(join(tmpdir(), 'crew-transcripts-'));
    const store = new FileTranscripts(home, { maxBytes: 1000, clock: new FakeClock() });
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const first = store.open('r1');
      first.write('first\n');
      await first.close();
      // The transcript's directory made a file: emptying it (creating the file afresh) now throws.
      const dir = dirname(store.pathOf('r1'));
      rmSync(dir, { recursive: true, force: true });
      writeFileSync(dir, 'not a directory');
      expect(await store.open('r1').close()).toEqual({ chars: 0, bytes: 0, cut: false, gapBytes: 0 });
      const lines = stderr.mock.calls.map(([line]) => String(line)).filter((line) => line.includes('r1'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('cannot empty the transcript of r1');
    } finally {
      stderr.mockRestore();
      await store.close();
      rmSync(home, { recursive: true, force: true });
    }
  });
});
