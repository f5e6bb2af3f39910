import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NumberedChatEvent } from '../../src/chat/chat-event.js';
import { readSse } from '../../src/chat/sse-reader.js';
import { DEFAULT_ANSWER } from '../../src/sim/answer.js';
import { startTestDaemon, type TestDaemon } from './chat-harness.js';

describe('chats over HTTP: shapes, refusals and the event stream', () => {
  let d: TestDaemon;
  beforeAll(async () => {
    d = await startTestDaemon({ 'agents.cmd': { runner: 'command', command: ['true'] } });
  });
  afterAll(async () => {
    await d.stop();
  });

  it('refuses what it cannot do, each with its code', async () => {
    const cases: [string, string, unknown, number, string][] = [
      ['POST', '/api/chats', { cwd: 'relative/dir' }, 400, 'invalid_argument'],
      ['POST', '/api/chats', { cwd: '/no/such/dir' }, 400, 'invalid_argument'],
      ['POST', '/api/chats', { agent: 'nobody' }, 400, 'unknown_agent'],
      ['POST', '/api/chats', { agent: 'cmd' }, 400, 'invalid_argument'],
      ['POST', '/api/chats', '[]', 400, 'invalid_argument'],
      ['GET', '/api/chats/nope', undefined, 404, 'not_found'],
      ['POST', '/api/chats/nope/messages', { text: 'hi' }, 404, 'not_found'],
      ['DELETE', '/api/chats/nope', undefined, 404, 'not_found'],
      ['GET', '/api/chats/nope/events', undefined, 404, 'not_found'],
    ];
    for (const [method, path, body, status, code] of cases) {
      const answer = await d.api(method, path, body);
      expect({ method, path, status: answer.status, code: answer.body.refusal?.code }).toEqual({
        method,
        path,
        status,
        code,
      });
    }
    const chat = await d.chat();
    const empty = await d.api('POST', `/api/chats/${chat.view.id}/messages`, { text: '  ' });
    expect(empty).toMatchObject({ status: 400, body: { refusal: { code: 'empty_task', path: 'text' } } });
    const idle = await d.api('POST', `/api/chats/${chat.view.id}/cancel`);
    expect(idle).toMatchObject({ status: 409, body: { refusal: { code: 'not_running' } } });
    const anonymous = await fetch(`${d.daemon.url}/api/chats`, { method: 'POST', body: '{}' });
    expect(anonymous.status).toBe(401);
    const listed = await d.api('GET', '/api/chats');
    expect((listed.body.chats as { id: string }[]).map((c) => c.id)).toContain(chat.view.id);
  });

  it('answers a message after its turn with wait: true, and cancels a turn in flight', async () => {
    const chat = await d.chat();
    const waited = await d.api('POST', `/api/chats/${chat.view.id}/messages`, { text: 'hello', wait: true });
    expect(waited.body).toMatchObject({ ok: true, turn: { turn: 1, stop_reason: 'end_turn' } });
    expect(chat.textOf(1)).toBe(DEFAULT_ANSWER);

    const hanging = d.api('POST', `/api/chats/${chat.view.id}/messages`, { text: '#sim hang', wait: true });
    await chat.until((e) => e.type === 'message' && e.turn === 2, 'the hanging turn');
    expect((await d.api('POST', `/api/chats/${chat.view.id}/cancel`)).body).toMatchObject({ ok: true });
    expect((await hanging).body).toMatchObject({ ok: true, turn: { turn: 2, stop_reason: 'cancelled' } });
  });

  it('streams from a given event number (since / Last-Event-ID), and ends the stream when the chat closes', async () => {
    const chat = await d.chat();
    await d.api('POST', `/api/chats/${chat.view.id}/messages`, { text: 'one', wait: true });
    await d.api('POST', `/api/chats/${chat.view.id}/messages`, { text: 'two', wait: true });
    const all = chat.events.map((e) => e.seq);
    const from = all[2]!;
    const response = await fetch(`${d.daemon.url}/api/chats/${chat.view.id}/events`, {
      headers: { authorization: `Bearer ${d.token}`, 'last-event-id': String(from) },
    });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const seen: NumberedChatEvent[] = [];
    const reading = (async () => {
      for await (const message of readSse(response.body!)) {
        const event = JSON.parse(message.data) as NumberedChatEvent;
        expect(message.event).toBe(event.type);
        expect(message.id).toBe(String(event.seq));
        seen.push(event);
      }
    })();
    await chat.until(() => seen.length >= all.length - from, 'the replay');
    await d.api('DELETE', `/api/chats/${chat.view.id}`);
    await reading; // the server ends the stream after `closed`
    // Every event after `from`, in order and without gaps (a late event of the last turn may join), then `closed`.
    const seqs = seen.map((e) => e.seq);
    expect(seqs).toEqual(seqs.map((_, i) => from + 1 + i));
    expect(seqs).toEqual(expect.arrayContaining(all.filter((seq) => seq > from)));
    expect(seen.at(-1)).toMatchObject({ type: 'closed', reason: 'closed by the operator' });
  });
});
