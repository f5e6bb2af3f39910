import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { Reaper } from '../../src/gateway/reaper.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import type { Store } from '../../src/store/store.js';
import { MemoryTranscripts } from '../../src/transcripts/memory-transcripts.js';
import { ended, event, spec } from '../store/store-fixtures.js';

const HOUR = 3_600_000;
const OLD = 3_000;
const YOUNG = 50;

/** A store holding `OLD` runs settled two hours ago and `YOUNG` settled ten minutes ago, none pruned. */
function inheritedHistory(now: number): MemoryStore {
  const store = new MemoryStore();
  const epoch = store.nextEpoch();
  const write = (prefix: string, count: number, settledAt: number) => {
    const ids = Array.from({ length: count }, (_, i) => `${prefix}${i}`);
    store.apply({
      epoch,
      newRuns: ids.map((id) => ({
        run: ended(id, 'completed', { createdAt: now - 3 * HOUR }),
        spec: spec(),
      })),
      outbox: ids.map((id) => event(`e-${id}`, [id])),
      settle: ids.map((id) => ({ eventId: `e-${id}`, state: 'delivered' as const, at: settledAt })),
    });
  };
  write('old', OLD, now - 2 * HOUR);
  write('young', YOUNG, now - 10 * 60_000);
  return store;
}

describe('the reaper on an inherited history (issue 32 §4)', () => {
  it('reads nothing at start, then works the backlog off a bounded page at a time, keeping only what is not due', async () => {
    const clock = new FakeClock();
    const store = inheritedHistory(clock.now());
    const rowsRead: number[] = [];
    const counting = {
      unprunedSettled: (after: number, limit: number) => {
        const page = store.unprunedSettled(after, limit);
        rowsRead.push(page.runs.length);
        return page;
      },
      apply: (tx: Parameters<Store['apply']>[0]) => store.apply(tx),
      pruneHistory: (options: Parameters<Store['pruneHistory']>[0]) => store.pruneHistory(options),
    } as unknown as Store;
    const transcripts = new MemoryTranscripts();
    const reaper = new Reaper({
      clock,
      store: counting,
      transcripts,
      epoch: 1,
      resultTtlMs: HOUR,
      keepTtlMs: 24 * HOUR,
      maxKept: 10,
      idleConversations: () => [],
      release: () => {},
      isKept: () => false,
      liveConversations: () => [],
      retentionMs: 30 * 24 * HOUR,
      historyMax: 1_000_000,
      // Passes are driven by hand below (`sweep()` awaits its pruning; a timer's pass would not be awaited).
      intervalMs: 1_000 * HOUR,
      backlogPerPass: 1_000,
    });
    const unpruned = () => store.unprunedSettled(0, 1_000_000).runs.map((r) => r.id);
    const read = () => rowsRead.reduce((a, b) => a + b, 0);
    try {
      reaper.start();
      // A restart pays nothing for the history it inherits.
      expect(read()).toBe(0);

      await clock.advance(60_000);
      await reaper.sweep();
      expect(read()).toBe(1_000);
      expect(unpruned()).toHaveLength(OLD + YOUNG - 1_000);

      for (let pass = 0; pass < 3; pass++) {
        await clock.advance(60_000);
        await reaper.sweep();
      }
      // Read through: every old run pruned; the young ones wait for their TTL, read once, not again.
      expect(read()).toBe(OLD + YOUNG);
      expect(unpruned()).toEqual(Array.from({ length: YOUNG }, (_, i) => `young${i}`));

      await clock.advance(HOUR);
      await reaper.sweep();
      expect(unpruned()).toEqual([]);
      expect(read()).toBe(OLD + YOUNG);
    } finally {
      reaper.close();
      await transcripts.close();
    }
  });
});
