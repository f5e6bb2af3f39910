import { describe, expect, it } from 'vitest';
import { formatDigest } from '../../src/core/completion-text.js';
import { truncate } from '../../src/core/truncate.js';
import type { Run } from '../../src/core/types.js';
import { PREVIEW_CONCURRENCY, renderEvent } from '../../src/gateway/render-event.js';
import type { OutboxEvent, RunRecord } from '../../src/store/store.js';

const record = (i: number): RunRecord => ({
  run: {
    id: `r${i}`,
    status: 'completed',
    parent: 'mcp:p',
    agent: 'sim',
    depth: 1,
    rootId: `r${i}`,
    keep: false,
    createdAt: 0,
    seq: i,
    batchId: 'w1',
    startedAt: 1000,
    endedAt: 3000,
  } as Run,
  spec: { task: 't', agent: 'sim' },
  delivery: 'pending',
});

/** Transcripts whose previews are counted, with at most `inFlight` reads open at once recorded. */
function counting(textOf: (id: string) => string) {
  let reads = 0;
  let open = 0;
  let peak = 0;
  return {
    get reads() {
      return reads;
    },
    get peak() {
      return peak;
    },
    pathOf: (id: string) => `/t/${id}`,
    preview: async (id: string, options: { keep: 'head' | 'tail' | 'both'; keepChars: number }) => {
      reads++;
      open++;
      peak = Math.max(peak, open);
      await new Promise((r) => setImmediate(r));
      open--;
      return truncate(textOf(id), options);
    },
  };
}

const digestOf = (n: number): OutboxEvent => ({
  id: 'e1',
  parent: 'mcp:p',
  kind: 'digest',
  batchId: 'w1',
  runIds: Array.from({ length: n }, (_, i) => `r${i}`),
  createdAt: 0,
  state: 'pending',
  attempts: 0,
});

describe('rendering a digest reads only the previews that fit', () => {
  it('a 2,000-member wave reads a window of previews, not 2,000, and the text equals the eager digest', async () => {
    const options = { keep: 'head' as const, keepChars: 100 };
    const records = Array.from({ length: 2000 }, (_, i) => record(i));
    const t = counting((id) => `output of ${id} `.repeat(20));
    const text = await renderEvent(digestOf(2000), records, t, options);
    expect(t.reads).toBeLessThanOrEqual(2 * PREVIEW_CONCURRENCY);
    expect(t.peak).toBeLessThanOrEqual(PREVIEW_CONCURRENCY);
    // The same text as formatting with every output at hand.
    const eager = formatDigest(
      'w1',
      records.map((r) => ({
        id: r.run.id,
        agent: 'sim',
        status: 'completed',
        durationSecs: 2,
        resultPath: `/t/${r.run.id}`,
        output: `output of ${r.run.id} `.repeat(20),
      })),
      options,
    );
    expect(text).toBe(eager);
    expect(text).toMatch(/\[no preview for the last \d+ of 2000 members/);
  });

  it('with no bound (keepChars 0) every member is read, a window at a time', async () => {
    const records = Array.from({ length: 50 }, (_, i) => record(i));
    const t = counting((id) => `x${id}`);
    const text = await renderEvent(digestOf(50), records, t, { keep: 'head', keepChars: 0 });
    expect(t.reads).toBe(50);
    expect(t.peak).toBeLessThanOrEqual(PREVIEW_CONCURRENCY);
    expect(text).toContain('xr49');
  });

  it('a pruned member is not read', async () => {
    const records = [record(0), { ...record(1), prunedAt: 5 }];
    const t = counting(() => 'fine');
    const text = await renderEvent(digestOf(2), records, t, { keep: 'head', keepChars: 3000 });
    expect(t.reads).toBe(1);
    expect(text).toContain('(transcript pruned)');
  });
});
