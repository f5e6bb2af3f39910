import { mkdtempSync, rmSync } from 'node:fs';
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
});
