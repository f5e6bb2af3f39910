import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatView } from '../../src/chat/chat-event.js';
import { isAlive, waitUntil } from '../helpers/sim.js';
import { bundledCommand } from '../helpers/test-bundle.js';
import { startTestDaemon, type TestDaemon } from './chat-harness.js';

describe('a hosted chat whose parent agent advertises loadSession', () => {
  let d: TestDaemon;
  let state: string;
  beforeAll(async () => {
    state = mkdtempSync(join(tmpdir(), 'crew-remembering-'));
    d = await startTestDaemon({
      'agents.remembering': {
        command: bundledCommand('test-fixtures/remembering-agent', state),
      },
      'chat.parent_agent': 'remembering',
    });
  });
  afterAll(async () => {
    await d.stop();
    rmSync(state, { recursive: true, force: true });
  });

  it('reloads the session into a fresh runtime after the old one is killed; the replay is not news', async () => {
    const chat = await d.chat();
    expect(chat.view.agent).toBe('remembering');
    await chat.say('first');
    await chat.untilText(/^turn 1: first \(remembers: nothing\)$/m);
    const pid = chat.view.pid!;
    process.kill(pid, 'SIGKILL');
    await chat.until(
      (e) => e.type === 'notice' && /restarted \(pid \d+\) and reloaded the conversation/.test(e.text),
      'the reload notice',
    );
    await waitUntil(() => !isAlive(pid), 5000, 'the killed runtime gone');
    const view = (await d.api('GET', `/api/chats/${chat.view.id}`)).body.chat as ChatView;
    expect(view.session_id).toBe(chat.view.session_id);
    expect(view.pid).not.toBe(pid);

    await chat.say('second');
    await chat.untilText(/^turn 2: second \(remembers: first\)$/m);
    expect(chat.text()).not.toMatch(/replayed/);
  });

  it('starts afresh in a new session, and says so, when the agent cannot load the old one', async () => {
    const chat = await d.chat();
    await chat.say('before');
    await chat.untilText(/^turn 1: before \(remembers: nothing\)$/m);
    const { pid, session_id: sessionId } = chat.view;
    // The agent's record of the session is gone, so its session/load fails (sessionNotFound).
    for (const file of readdirSync(state)) rmSync(join(state, file));
    process.kill(pid as number, 'SIGKILL');
    const notice = await chat.until(
      (e) => e.type === 'notice' && /could not reload the conversation/.test(e.text),
      'the notice that the reload failed',
    );
    expect(notice).toMatchObject({
      text: expect.stringMatching(
        /\(session\/load failed: .*\); it starts afresh and remembers nothing said before$/,
      ),
    });
    await waitUntil(() => !isAlive(pid as number), 5000, 'the killed runtime gone');
    const view = (await d.api('GET', `/api/chats/${chat.view.id}`)).body.chat as ChatView;
    expect(view.session_id).toBeDefined();
    expect(view.session_id).not.toBe(sessionId);

    await chat.say('after');
    await chat.untilText(/^turn 1: after \(remembers: nothing\)$/m);
    // And the new session is the one reloaded next time.
    process.kill(view.pid as number, 'SIGKILL');
    await chat.until(
      (e) => e.type === 'notice' && /reloaded the conversation/.test(e.text),
      'the reload of the new session',
    );
    await chat.say('again');
    await chat.untilText(/^turn 2: again \(remembers: after\)$/m);
  });
});
