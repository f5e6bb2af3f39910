import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { BoundedEventStore, STANDALONE_STREAM_ID } from '../../src/mcp/bounded-event-store.js';

const note = (n: number, text = ''): JSONRPCMessage => ({
  jsonrpc: '2.0',
  method: 'notifications/message',
  params: { level: 'info', data: { n, text } },
});

async function replay(store: BoundedEventStore, after: string) {
  const got: { id: string; n: number }[] = [];
  const stream = await store.replayEventsAfter(after, {
    send: async (id, message) => {
      got.push({ id, n: (message as unknown as { params: { data: { n: number } } }).params.data.n });
    },
  });
  return { stream, got };
}

describe('BoundedEventStore: a session’s SSE events for Last-Event-ID, bounded', () => {
  it('replays what came after an id on its own stream, in order, never a priming event', async () => {
    const store = new BoundedEventStore();
    const prime = store.prime(STANDALONE_STREAM_ID);
    const ids: string[] = [];
    for (let n = 0; n < 5; n++) ids.push(await store.storeEvent(STANDALONE_STREAM_ID, note(n)));
    await store.storeEvent('call-1', note(99));
    const fromPrime = await replay(store, prime);
    expect(fromPrime.stream).toBe(STANDALONE_STREAM_ID);
    expect(fromPrime.got.map((g) => g.n)).toEqual([0, 1, 2, 3, 4]);
    expect(fromPrime.got.map((g) => g.id)).toEqual(ids);
    expect((await replay(store, ids[2]!)).got.map((g) => g.n)).toEqual([3, 4]);
    const call = await replay(store, ids[4]!.replace(STANDALONE_STREAM_ID, 'call-1'));
    expect(call.stream).toBe('call-1');
    expect(call.got.map((g) => g.n)).toEqual([99]);
  });

  it('keeps at most its bound of events and bytes; a huge call answer never pushes out a notification', async () => {
    const store = new BoundedEventStore({
      streamBytes: 10_000,
      streamEvents: 8,
      callBytes: 5_000,
      callEventMaxBytes: 2_000,
    });
    const first = store.prime(STANDALONE_STREAM_ID);
    for (let n = 0; n < 20; n++) await store.storeEvent(STANDALONE_STREAM_ID, note(n));
    for (let n = 0; n < 50; n++)
      await store.storeEvent(`call-${n}`, note(100 + n, 'x'.repeat(n % 2 ? 100 : 50_000)));
    const { got } = await replay(store, first);
    expect(got.map((g) => g.n)).toEqual([12, 13, 14, 15, 16, 17, 18, 19]);
    expect(store.size().bytes).toBeLessThanOrEqual(15_000);
    expect(store.size().events).toBeLessThanOrEqual(8 + 32);
    expect(store.dropped).toBeGreaterThan(0);
  });

  it('refuses an id it did not issue', async () => {
    const store = new BoundedEventStore();
    await expect(replay(store, 'garbage')).rejects.toThrow(/not issued/);
    await expect(replay(store, '')).rejects.toThrow(/not issued/);
  });
});
