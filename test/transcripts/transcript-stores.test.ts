import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
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
