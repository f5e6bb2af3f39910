import { describe, expect, it } from 'vitest';
import type { ChatEvent, NumberedChatEvent } from '../../src/chat/chat-event.js';
import { ChatLog } from '../../src/chat/chat-log.js';
import { ChatPrinter } from '../../src/chat/chat-printer.js';
import { type HeldEvent, HeldEvents } from '../../src/chat/held-events.js';
import { injectionTimeoutMs } from '../../src/chat/injection-timeout.js';
import { readSse } from '../../src/chat/sse-reader.js';
import { TurnQueue } from '../../src/chat/turn-queue.js';
import { FakeClock } from '../../src/clock/fake-clock.js';

type P = { at: number; text: string };
type I = { at: number; id: string };

describe('TurnQueue: which turn a chat runs next', () => {
  it('serves people and injections in arrival order', () => {
    const q = new TurnQueue<P, I>();
    q.addPerson({ at: 10, text: 'first' });
    q.addInjection({ at: 20, id: 'e1' });
    q.addPerson({ at: 30, text: 'second' });
    expect(q.next(100, 50)).toEqual({ kind: 'person', item: { at: 10, text: 'first' } });
    expect(q.next(100, 50)).toEqual({ kind: 'injection', items: [{ at: 20, id: 'e1' }] });
    expect(q.next(100, 50)).toEqual({ kind: 'person', item: { at: 30, text: 'second' } });
    expect(q.next(100, 50)).toEqual({ kind: 'none' });
  });

  it('puts every waiting injection into one turn, including ones that came after a waiting person', () => {
    const q = new TurnQueue<P, I>();
    q.addInjection({ at: 1, id: 'e1' });
    q.addPerson({ at: 2, text: 'hi' });
    q.addInjection({ at: 3, id: 'e2' });
    expect(q.next(1000, 50)).toEqual({
      kind: 'injection',
      items: [
        { at: 1, id: 'e1' },
        { at: 3, id: 'e2' },
      ],
    });
    expect(q.next(1000, 50)).toMatchObject({ kind: 'person' });
  });

  it('holds a fresh injection for the coalescing window so completions ready together share a turn', () => {
    const q = new TurnQueue<P, I>();
    q.addInjection({ at: 100, id: 'e1' });
    expect(q.next(120, 50)).toEqual({ kind: 'wait', delayMs: 30 });
    q.addInjection({ at: 130, id: 'e2' });
    expect(q.next(150, 50)).toEqual({
      kind: 'injection',
      items: [
        { at: 100, id: 'e1' },
        { at: 130, id: 'e2' },
      ],
    });
  });

  it('adds an id once, withdraws on request, and drains', () => {
    const q = new TurnQueue<P, I>();
    expect(q.addInjection({ at: 1, id: 'e1' })).toBe(true);
    expect(q.addInjection({ at: 2, id: 'e1' })).toBe(false);
    expect(q.waitingInjections).toBe(1);
    expect(q.removeInjection('e1')).toBe(true);
    expect(q.removeInjection('e1')).toBe(false);
    q.addPerson({ at: 3, text: 'x' });
    q.addInjection({ at: 4, id: 'e2' });
    expect(q.drain()).toEqual({ people: [{ at: 3, text: 'x' }], injections: [{ at: 4, id: 'e2' }] });
    expect(q.next(100, 0)).toEqual({ kind: 'none' });
  });
});

describe('HeldEvents: the chat side of delivery', () => {
  const event = (id: string) => ({
    id,
    parent: 'chat:c',
    kind: 'completion' as const,
    run_ids: ['r'],
    text: id,
  });
  const settled = (p: Promise<void>) => {
    const state = { value: 'pending' as string };
    p.then(
      () => {
        state.value = 'resolved';
      },
      (e: Error) => {
        state.value = `rejected: ${e.message}`;
      },
    );
    return state;
  };

  it('withdraws an event whose every attempt timed out while it was only held', async () => {
    const clock = new FakeClock();
    const withdrawn: HeldEvent[] = [];
    const held = new HeldEvents(clock, 1000, (h) => withdrawn.push(h));
    const first = held.attempt(event('e1'));
    expect(first.added?.id).toBe('e1');
    await clock.advance(500);
    const second = held.attempt(event('e1'));
    expect(second.added).toBeUndefined();
    const a = settled(first.done);
    const b = settled(second.done);
    await clock.advance(500);
    expect(a.value).toBe('rejected: event e1 was not injected within 1000 ms');
    expect(withdrawn).toEqual([]); // the second attempt still waits
    await clock.advance(500);
    expect(b.value).toMatch(/^rejected/);
    expect(withdrawn.map((h) => h.id)).toEqual(['e1']);
    expect(held.size).toBe(0);
    expect(held.takeForSending([first.added!])).toEqual([]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('resolves every attempt once injected, remembers the id, and keeps a sending event past the bound', async () => {
    const clock = new FakeClock();
    const withdrawn: HeldEvent[] = [];
    const held = new HeldEvents(clock, 1000, (h) => withdrawn.push(h));
    const { done, added } = held.attempt(event('e1'));
    const state = settled(done);
    expect(held.takeForSending([added!]).map((h) => h.state)).toEqual(['sending']);
    await clock.advance(1000);
    expect(state.value).toMatch(/^rejected/); // this attempt's bound ran out...
    expect(withdrawn).toEqual([]); // ...but the event is already on its way
    const retry = settled(held.attempt(event('e1')).done);
    held.settle(added!);
    await clock.advance(0);
    expect(retry.value).toBe('resolved');
    const again = held.attempt(event('e1'));
    expect(again.added).toBeUndefined();
    await expect(again.done).resolves.toBeUndefined();
    expect(clock.pendingTimers()).toBe(0);
  });

  it('rejects every waiting attempt when the injection fails or the chat closes', async () => {
    const clock = new FakeClock();
    const held = new HeldEvents(clock, 1000, () => {});
    const one = held.attempt(event('e1'));
    const two = settled(held.attempt(event('e2')).done);
    const first = settled(one.done);
    held.settle(one.added!, new Error('the parent died'));
    held.settleAll(new Error('closed'));
    await clock.advance(0);
    expect([first.value, two.value]).toEqual(['rejected: the parent died', 'rejected: closed']);
    // A failed event is not remembered: the relay's retry is taken afresh.
    expect(held.attempt(event('e1')).added?.id).toBe('e1');
  });
});

describe('ChatLog', () => {
  it('numbers events, replays what it holds after a given number, and ends at closed', () => {
    const log = new ChatLog(() => 0, 3);
    for (let i = 1; i <= 4; i++) log.emit({ type: 'notice', text: `n${i}` });
    const seen: NumberedChatEvent[] = [];
    const unsubscribe = log.subscribe((e) => seen.push(e), 2);
    expect(seen.map((e) => e.seq)).toEqual([3, 4]);
    log.emit({ type: 'text', turn: 1, text: 'live' });
    expect(seen.at(-1)).toMatchObject({ seq: 5, type: 'text', at: new Date(0).toISOString() });
    unsubscribe();
    log.emit({ type: 'notice', text: 'unseen' });
    expect(seen).toHaveLength(3);
    const all: NumberedChatEvent[] = [];
    log.subscribe((e) => all.push(e));
    expect(all.map((e) => e.seq)).toEqual([4, 5, 6]); // the backlog holds 3
    log.emit({ type: 'closed', reason: 'done' });
    log.emit({ type: 'notice', text: 'after' });
    expect(all.at(-1)).toMatchObject({ type: 'closed' });
    expect(log.isEnded).toBe(true);
  });

  it('drops a listener that throws and goes on', () => {
    const log = new ChatLog(() => 0);
    let calls = 0;
    log.subscribe(() => {
      calls++;
      throw new Error('boom');
    });
    log.emit({ type: 'notice', text: 'a' });
    log.emit({ type: 'notice', text: 'b' });
    expect(calls).toBe(1);
  });
});

describe('readSse', () => {
  it('reads blocks split anywhere, joins data lines, skips comments', async () => {
    const raw = ': hello\n\nevent: text\nid: 1\ndata: {"a":\ndata: 1}\n\r\nevent: closed\r\ndata: x\r\n\r\n';
    const bytes = new TextEncoder().encode(raw);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 7) controller.enqueue(bytes.slice(i, i + 7));
        controller.close();
      },
    });
    const messages = [];
    for await (const message of readSse(body)) messages.push(message);
    expect(messages).toEqual([
      { event: 'text', id: '1', data: '{"a":\n1}' },
      { event: 'closed', data: 'x' },
    ]);
  });
});

describe('ChatPrinter', () => {
  it('prints text line by line, event headers, notices and failures', () => {
    const out: string[] = [];
    const err: string[] = [];
    const printer = new ChatPrinter(
      (l) => out.push(l),
      (l) => err.push(l),
    );
    const events: ChatEvent[] = [
      { type: 'message', turn: 1, text: 'hi' },
      { type: 'text', turn: 1, text: 'hel' },
      { type: 'text', turn: 1, text: 'lo\nwor' },
      { type: 'turn_ended', turn: 1, stop_reason: 'end_turn' },
      {
        type: 'injected',
        turn: 2,
        events: [
          {
            id: 'e1',
            kind: 'completion',
            run_ids: ['r1'],
            text: '[Subagent completion event] id=r1 agent=sim status=completed duration=0.1s\nthe preview',
          },
          {
            id: 'e2',
            kind: 'digest',
            run_ids: ['r2', 'r3'],
            text: '[Subagent completion digest] batch=w1 members=2\n[Subagent completion event] id=r2 agent=sim status=failed duration=1s\nx',
          },
        ],
      },
      { type: 'turn_ended', turn: 2, error: 'the parent died' },
      { type: 'notice', text: 'restarted' },
      { type: 'turn_ended', turn: 3, stop_reason: 'cancelled' },
      { type: 'closed', reason: 'bye' },
    ];
    for (const event of events) printer.print(event);
    expect(out).toEqual([
      'hello',
      'wor',
      '« [Subagent completion event] id=r1 agent=sim status=completed duration=0.1s',
      '« [Subagent completion digest] batch=w1 members=2',
      '« [Subagent completion event] id=r2 agent=sim status=failed duration=1s',
      '[crew] restarted',
      '[turn ended: cancelled]',
      '[crew] chat closed (bye)',
    ]);
    expect(err).toEqual(['crew: the turn failed: the parent died']);
  });
});

describe('injectionTimeoutMs', () => {
  it('is CREW_INJECTION_TIMEOUT (default 900 s), clamped to the delivery timeout', () => {
    expect(injectionTimeoutMs({}, 1200)).toBe(900_000);
    expect(injectionTimeoutMs({ CREW_INJECTION_TIMEOUT: '30' }, 1200)).toBe(30_000);
    expect(injectionTimeoutMs({ CREW_INJECTION_TIMEOUT: '30' }, 1)).toBe(1000);
    expect(injectionTimeoutMs({ CREW_INJECTION_TIMEOUT: 'soon' }, 1200)).toBe(900_000);
  });
});
