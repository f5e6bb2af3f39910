import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NumberedChatEvent } from '../../src/chat/chat-event.js';
import { isAlive, waitUntil } from '../helpers/sim.js';
import {
  assertTurnsNeverOverlap,
  spawnedIds,
  startTestDaemon,
  summaryOf,
  type TestDaemon,
} from './chat-harness.js';

type Injected = Extract<NumberedChatEvent, { type: 'injected' }>;
const isInjected = (e: NumberedChatEvent): e is Injected => e.type === 'injected';

describe('a hosted chat: the simulator as parent, spawning over real MCP and taking injected events', () => {
  let d: TestDaemon;
  beforeAll(async () => {
    d = await startTestDaemon();
  });
  afterAll(async () => {
    await d.stop();
  });

  it('fans out three runs; their completion events are injected and the final message names all three', async () => {
    const chat = await d.chat();
    expect(chat.view).toMatchObject({ state: 'idle', agent: 'sim', parent: `chat:${chat.view.id}` });
    const sent = await chat.say(
      '#sim spawn="#sim sleep=50ms a" spawn="#sim sleep=50ms b" spawn="#sim sleep=50ms c" yield',
    );
    expect(sent.ok).toBe(true);
    const text = await chat.untilText(/^summary: /m);
    const ids = spawnedIds(text);
    expect(ids).toHaveLength(3);
    const summary = summaryOf(text);
    expect([...summary.keys()].sort()).toEqual([...ids].sort());
    expect([...summary.values()]).toEqual(['completed', 'completed', 'completed']);

    // Every run's event was injected exactly once, each as (part of) its own prompt turn.
    const injected = chat.events.filter(isInjected);
    const injectedRuns = injected.flatMap((e) => e.events.flatMap((ev) => ev.run_ids));
    expect(injectedRuns.sort()).toEqual([...ids].sort());
    const eventIds = injected.flatMap((e) => e.events.map((ev) => ev.id));
    expect(new Set(eventIds).size).toBe(eventIds.length);
    for (const id of ids) expect(text).toMatch(new RegExp(`^ack ${id}=completed$`, 'm'));
    assertTurnsNeverOverlap(chat.events);

    // The runs are the chat's, delivered.
    const list = await d.api('GET', '/api/runs');
    const runs = (list.body.runs as { id: string; parent: string; delivery: string }[]).filter((r) =>
      ids.includes(r.id),
    );
    expect(runs.map((r) => r.parent)).toEqual(ids.map(() => `chat:${chat.view.id}`));
    expect(runs.map((r) => r.delivery)).toEqual(ids.map(() => 'delivered'));
    chat.stopFollowing();
  });

  it('ends a chat on DELETE: its parent process goes, its stream says closed', async () => {
    const chat = await d.chat();
    const pid = chat.view.pid!;
    expect(isAlive(pid)).toBe(true);
    expect((await d.api('DELETE', `/api/chats/${chat.view.id}`)).body).toEqual({ ok: true });
    await chat.until((e) => e.type === 'closed', 'closed');
    await waitUntil(() => !isAlive(pid), 5000, 'the parent process gone');
    expect((await d.api('GET', `/api/chats/${chat.view.id}`)).status).toBe(404);
  });
});
