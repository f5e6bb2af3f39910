import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NumberedChatEvent } from '../../src/chat/chat-event.js';
import { DEFAULT_ANSWER } from '../../src/sim/answer.js';
import { isAlive, waitUntil } from '../helpers/sim.js';
import { spawnedIds, startTestDaemon, type TestDaemon } from './chat-harness.js';

type Injected = Extract<NumberedChatEvent, { type: 'injected' }>;
const isInjected = (e: NumberedChatEvent): e is Injected => e.type === 'injected';

interface RunRow {
  id: string;
  status: string;
  error?: string;
}

describe("a hosted chat: the parent's runtime killed mid-chat", () => {
  let d: TestDaemon;
  beforeAll(async () => {
    d = await startTestDaemon();
  });
  afterAll(async () => {
    await d.stop();
  });

  it('fails its shared children with the reason; the chat goes on in a fresh runtime and gets their events', async () => {
    const chat = await d.chat();
    const pid = chat.view.pid!;
    await chat.say('#sim spawn="#sim hang" spawn="#sim hang" yield');
    await chat.untilText(/spawned \S+\nspawned \S+\n/);
    const ids = spawnedIds(chat.text());
    const rows = async () =>
      ((await d.api('GET', '/api/runs')).body.runs as RunRow[]).filter((r) => ids.includes(r.id));
    const deadline = Date.now() + 10_000;
    while ((await rows()).some((r) => r.status !== 'running')) {
      if (Date.now() > deadline) throw new Error('children not running');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }

    process.kill(pid, 'SIGKILL');

    const injection = (await chat.until(isInjected, 'the failed runs injected')) as Injected;
    const failed = await rows();
    expect(failed.map((r) => r.status)).toEqual(['failed', 'failed']);
    for (const row of failed) {
      expect(row.error).toMatch(
        new RegExp(
          `parent runtime of chat ${chat.view.id} \\(agent "sim"\\) \\(pid ${pid}\\) was killed by SIGKILL`,
        ),
      );
    }
    const notices = chat.events
      .filter((e) => e.type === 'notice')
      .map((e) => (e.type === 'notice' ? e.text : ''));
    expect(notices[0]).toMatch(/the parent agent's process ended: .*was killed by SIGKILL/);
    // The simulator does not advertise loadSession: a new session, and the person is told.
    expect(notices[1]).toMatch(/restarted \(pid \d+\) in a new session: it cannot reload sessions/);
    expect(injection.events.flatMap((e) => e.run_ids).sort()).toEqual([...ids].sort());
    await chat.until((e) => e.type === 'turn_ended' && e.turn === injection.turn, 'the injection turn');
    for (const id of ids) expect(chat.textOf(injection.turn)).toMatch(new RegExp(`^ack ${id}=failed$`, 'm'));

    const view = (await d.api('GET', `/api/chats/${chat.view.id}`)).body.chat as {
      pid: number;
      state: string;
    };
    expect(view.pid).not.toBe(pid);
    expect(isAlive(view.pid)).toBe(true);
    await waitUntil(() => !isAlive(pid), 5000, 'the killed runtime gone');

    await chat.say('hello again');
    const next = injection.turn + 1;
    await chat.until((e) => e.type === 'turn_ended' && e.turn === next, 'a turn in the fresh runtime');
    expect(chat.textOf(next)).toBe(DEFAULT_ANSWER);
  });

  it('ends a person turn in flight with the reason when the parent dies, and runs the next one afresh', async () => {
    const chat = await d.chat();
    const pid = chat.view.pid!;
    await chat.say('#sim hang');
    await chat.until((e) => e.type === 'message', 'the turn');
    process.kill(pid, 'SIGKILL');
    const end = await chat.until((e) => e.type === 'turn_ended' && e.turn === 1, 'the turn to end');
    expect(end).toMatchObject({ error: expect.stringMatching(/process ended: .*killed by SIGKILL/) });
    await chat.say('are you there?');
    await chat.until((e) => e.type === 'turn_ended' && e.turn === 2, 'the next turn');
    expect(chat.textOf(2)).toBe(DEFAULT_ANSWER);
  });
});
