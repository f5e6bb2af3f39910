import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { NumberedChatEvent } from '../../src/chat/chat-event.js';
import { waitUntil } from '../helpers/sim.js';
import {
  assertTurnsNeverOverlap,
  spawnedIds,
  startTestDaemon,
  summaryOf,
  type TestDaemon,
} from './chat-harness.js';

type Injected = Extract<NumberedChatEvent, { type: 'injected' }>;
const isInjected = (e: NumberedChatEvent): e is Injected => e.type === 'injected';
const ended = (turn: number) => (e: NumberedChatEvent) => e.type === 'turn_ended' && e.turn === turn;

interface RunRow {
  id: string;
  status: string;
  delivery: string;
  ended_at?: string;
}

describe('a hosted chat: injection only while the parent is idle', () => {
  let d: TestDaemon | undefined;
  afterEach(async () => {
    await d?.stop();
    d = undefined;
  });

  it('injects completions that arrive during a person turn after it, both in one turn', async () => {
    d = await startTestDaemon();
    const chat = await d.chat();
    // The runs take long enough that the first turn (which only spawns them) is over before they end, even on
    // a loaded machine: under a load average of 27 a 200 ms run ended before the next turn began.
    await chat.say('#sim spawn="#sim sleep=1000ms one" spawn="#sim sleep=1000ms two" yield');
    // Queued behind the first turn: it runs while the two runs end.
    await chat.say('#sim sleep=3000ms');
    const longTurn = await chat.until(ended(2), 'the long person turn to end', 20_000);
    const injection = (await chat.until(isInjected, 'the injection')) as Injected;
    await chat.until(ended(injection.turn), 'the injection turn to end');
    const ids = spawnedIds(chat.textOf(1));
    expect(ids).toHaveLength(2);

    // Both ended while turn 2 ran...
    const runs = ((await d.api('GET', '/api/runs')).body.runs as RunRow[]).filter((r) => ids.includes(r.id));
    const turn2Start = Date.parse(chat.events.find((e) => e.type === 'message' && e.turn === 2)!.at);
    for (const run of runs) {
      expect(Date.parse(run.ended_at!)).toBeGreaterThan(turn2Start);
      expect(Date.parse(run.ended_at!)).toBeLessThan(Date.parse(longTurn.at));
    }
    // ...and were injected after it, together, in one turn.
    expect(injection.seq).toBeGreaterThan(longTurn.seq);
    expect(injection.turn).toBe(3);
    expect(injection.events.flatMap((e) => e.run_ids).sort()).toEqual([...ids].sort());
    expect(chat.events.filter(isInjected)).toHaveLength(1);
    expect(chat.textOf(2)).toBe('waiting for 2 completion events\n');
    expect(summaryOf(chat.textOf(3))).toEqual(new Map(ids.map((id) => [id, 'completed'])));
    assertTurnsNeverOverlap(chat.events);
  });

  it('makes a person message that arrives during an injection wait for it', async () => {
    d = await startTestDaemon();
    const chat = await d.chat();
    // The run echoes its task, so its completion event carries `#sim echo sleep=1s` and the injection
    // turn takes a second.
    await chat.say('#sim spawn="#sim echo sleep=1s" yield');
    const injection = (await chat.until(isInjected, 'the injection')) as Injected;
    const sent = await chat.say('hello');
    expect(sent.chat).toMatchObject({ state: 'busy', queued_messages: 1 });
    const injectionEnd = await chat.until(ended(injection.turn), 'the injection turn to end');
    const message = await chat.until((e) => e.type === 'message' && e.text === 'hello', 'the person turn');
    expect(message.seq).toBeGreaterThan(injectionEnd.seq);
    expect(chat.textOf(injection.turn)).toMatch(/^summary: \S+=completed$/m);
    await chat.until(ended(injection.turn + 1), 'the person turn to end');
    assertTurnsNeverOverlap(chat.events);
  });

  it('marks an event undeliverable when the parent stays busy past the delivery timeout', async () => {
    d = await startTestDaemon({ 'agent.subagent_delivery_timeout_secs': 1 });
    const chat = await d.chat();
    await chat.say('#sim spawn="#sim sleep=50ms late" yield');
    await chat.say('#sim sleep=4s');
    await chat.until(ended(2), 'the long person turn to end', 20_000);
    const [id] = spawnedIds(chat.textOf(1));
    const row = async () =>
      ((await d!.api('GET', '/api/runs')).body.runs as RunRow[]).find((r) => r.id === id) as RunRow;
    expect(await row()).toMatchObject({ status: 'completed', delivery: 'undeliverable' });
    // Logged in the SEL...
    const sel = readFileSync(join(d.home, 'security_events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { outcome: string; metadata: { parent?: string } });
    expect(sel.filter((e) => e.outcome === 'undeliverable')).toEqual([
      expect.objectContaining({ metadata: expect.objectContaining({ parent: `chat:${chat.view.id}` }) }),
    ]);
    // ...and never injected afterwards.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(chat.events.filter(isInjected)).toEqual([]);
    expect((await d.api('GET', `/api/chats/${chat.view.id}`)).body.chat).toMatchObject({
      state: 'idle',
      pending_events: 0,
    });
    // The chat goes on.
    await chat.say('still there?');
    await chat.until(ended(3), 'the next turn');
    await waitUntil(() => chat.textOf(3).length > 0, 5000, 'an answer');
  });

  it('deduplicates by event id: an event handed over again is acknowledged, never injected twice', async () => {
    d = await startTestDaemon();
    const chat = await d.chat();
    const host = d.daemon.chats.get(chat.view.id)!;
    const event = {
      id: 'e-twice',
      parent: host.key,
      kind: 'completion' as const,
      run_ids: ['r-twice'],
      text: '[Subagent completion event] id=r-twice agent=sim status=completed duration=0.1s\ndone',
    };
    await Promise.all([host.deliver(event), host.deliver(event)]);
    const injection = (await chat.until(isInjected, 'the injection')) as Injected;
    await chat.until(ended(injection.turn), 'the injection turn');
    await host.deliver(event);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(chat.events.filter(isInjected).map((e) => e.events.map((ev) => ev.id))).toEqual([['e-twice']]);
    expect(chat.textOf(injection.turn)).toBe('ack r-twice=completed\n');
  });

  it("withdraws an event whose attempt timed out; the relay's retry injects it once the parent is idle", async () => {
    const saved = process.env.CREW_INJECTION_TIMEOUT;
    process.env.CREW_INJECTION_TIMEOUT = '1';
    try {
      d = await startTestDaemon({ 'agent.subagent_delivery_timeout_secs': 30 });
    } finally {
      if (saved === undefined) delete process.env.CREW_INJECTION_TIMEOUT;
      else process.env.CREW_INJECTION_TIMEOUT = saved;
    }
    const chat = await d.chat();
    await chat.say('#sim spawn="#sim sleep=300ms" yield');
    // Busy past the 1 s attempt: the event is withdrawn at 1 s and comes back with the retry ~1 s later,
    // after this turn has ended; a held event would have been injected right at its end.
    await chat.say('#sim sleep=1500ms');
    const longTurn = await chat.until(ended(2), 'the long turn', 20_000);
    const injection = (await chat.until(isInjected, 'the retried injection', 20_000)) as Injected;
    expect(injection.seq).toBeGreaterThan(longTurn.seq);
    expect(Date.parse(injection.at) - Date.parse(longTurn.at)).toBeGreaterThan(250);
    await chat.until(ended(injection.turn), 'the injection turn');
    const [id] = spawnedIds(chat.textOf(1));
    expect(summaryOf(chat.textOf(injection.turn))).toEqual(new Map([[id, 'completed']]));
    const row = ((await d.api('GET', '/api/runs')).body.runs as RunRow[]).find((r) => r.id === id);
    expect(row?.delivery).toBe('delivered');
    expect(chat.events.filter(isInjected)).toHaveLength(1);
  });
});
