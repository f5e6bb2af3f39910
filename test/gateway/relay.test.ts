import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import type { Run } from '../../src/core/types.js';
import { type DeliveredEvent, Relay } from '../../src/gateway/relay.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import type { OutboxEvent, StoreTx } from '../../src/store/store.js';

const ended = (id: string): Run => ({
  id,
  status: 'completed',
  parent: 'mcp:p',
  agent: 'sim',
  depth: 1,
  rootId: id,
  keep: false,
  createdAt: 0,
  seq: 0,
  endedAt: 1,
});
const eventOf = (id: string, runId: string): OutboxEvent => ({
  id,
  parent: 'mcp:p',
  kind: 'completion',
  runIds: [runId],
  createdAt: 0,
  state: 'pending',
  attempts: 0,
});

/** A store that counts transactions, holding one pending event per id given. */
function storeWith(...ids: string[]) {
  const store = new MemoryStore();
  const epoch = store.nextEpoch();
  store.apply({
    epoch,
    newRuns: ids.map((id) => ({ run: ended(`r-${id}`), spec: { task: 't', agent: 'sim' } })),
    outbox: ids.map((id) => eventOf(id, `r-${id}`)),
  });
  const txs: StoreTx[] = [];
  const apply = store.apply.bind(store);
  store.apply = (tx) => {
    txs.push(tx);
    apply(tx);
  };
  return { store, epoch, txs };
}

function relayOn(
  s: ReturnType<typeof storeWith>,
  clock: FakeClock,
  render: () => Promise<string> = async () => 'text',
) {
  return new Relay({
    clock,
    store: s.store,
    epoch: s.epoch,
    render,
    deliveryTimeoutMs: 600_000,
    attemptTimeoutMs: 60_000,
    closeGraceMs: 2000,
  });
}

const flush = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

describe('the relay across close: nothing is delivered after close, and what was delivered is settled', () => {
  it('an event still rendering when close() fires is never handed to the sink and stays pending', async () => {
    const clock = new FakeClock();
    const s = storeWith('e1');
    let finishRender: (text: string) => void = () => undefined;
    const relay = relayOn(s, clock, () => new Promise((resolve) => (finishRender = resolve)));
    const handed: DeliveredEvent[] = [];
    relay.start();
    relay.attach('mcp:p', { deliver: async (e) => void handed.push(e) });
    await flush();
    const closing = relay.close();
    finishRender('late text');
    await closing;
    expect(handed).toEqual([]);
    expect(s.store.outboxEvent('e1')?.state).toBe('pending');
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a delivery in the sink that finishes within the close grace is settled delivered', async () => {
    const clock = new FakeClock();
    const s = storeWith('e1');
    const relay = relayOn(s, clock);
    let finish: () => void = () => undefined;
    relay.start();
    relay.attach('mcp:p', { deliver: () => new Promise<void>((resolve) => (finish = resolve)) });
    await flush();
    const closing = relay.close();
    await clock.advance(500);
    finish();
    await closing;
    expect(s.store.outboxEvent('e1')?.state).toBe('delivered');
  });

  it('a delivery still in the sink past the grace stays pending; the next start hands it over again', async () => {
    const clock = new FakeClock();
    const s = storeWith('e1');
    const first = relayOn(s, clock);
    first.start();
    first.attach('mcp:p', { deliver: () => new Promise<void>(() => undefined) });
    await flush();
    const closing = first.close();
    await clock.advance(2000);
    await closing;
    expect(s.store.outboxEvent('e1')?.state).toBe('pending');
    const second = relayOn(s, clock);
    const handed: string[] = [];
    second.start();
    second.attach('mcp:p', { deliver: async (e) => void handed.push(e.id) });
    await flush();
    expect(handed).toEqual(['e1']);
    expect(s.store.outboxEvent('e1')?.state).toBe('delivered');
    await second.close();
  });

  it('a delivered push costs one transaction (the settle); a failed one records its attempt', async () => {
    const clock = new FakeClock();
    const s = storeWith('ok', 'bad');
    const relay = relayOn(s, clock);
    relay.start();
    s.txs.length = 0;
    relay.attach('mcp:p', {
      deliver: async (e) => {
        if (e.id === 'bad') throw new Error('sink down');
      },
    });
    await flush();
    expect(s.txs.map((tx) => Object.keys(tx).filter((k) => k !== 'epoch'))).toEqual([
      ['settle'],
      ['attempts'],
    ]);
    expect(s.store.outboxEvent('bad')).toMatchObject({ state: 'pending', attempts: 1 });
    await relay.close();
  });

  it('events handed to a waiter while the store refuses the settle are never handed over again, and settle later', async () => {
    const clock = new FakeClock();
    const s = storeWith('e1');
    const relay = relayOn(s, clock);
    relay.start();
    const apply = s.store.apply.bind(s.store);
    let full = true;
    s.store.apply = (tx) => {
      if (full && tx.settle) throw new Error('database or disk is full');
      apply(tx);
    };
    const first = await relay.waitFor('mcp:p', 0);
    expect(first.map((e) => e.id)).toEqual(['e1']);
    expect(await relay.waitFor('mcp:p', 0)).toEqual([]);
    expect(s.store.outboxEvent('e1')?.state).toBe('pending');
    full = false;
    await clock.advance(1000);
    expect(s.store.outboxEvent('e1')?.state).toBe('delivered');
    await relay.close();
    expect(clock.pendingTimers()).toBe(0);
  });
});
