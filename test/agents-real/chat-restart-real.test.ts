import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatView, NumberedChatEvent, TurnOutcome } from '../../src/chat/chat-event.js';
import { directiveScript, type ModelRequest } from '../../src/fake-provider/script.js';
import { followChat, injectedRunIds, isInjected } from '../helpers/chat-follow.js';
import { api, pollFor } from '../helpers/daemon-process.js';
import { isAlive, waitUntil } from '../helpers/sim.js';
import { ensureCli, INSTALL_TIMEOUT_MS, markedProcesses, type Rig, startRig } from './real-agent-rig.js';

/**
 * Issue 12 §4 with a real parent: a hosted chat whose parent is claude-agent-acp, codex-acp or opencode
 * (each advertises `loadSession`) on the scripted provider, through a real `crew serve` that is stopped while a child's
 * completion waits to be injected (the parent is in a turn the provider never answers) and started again
 * on the same home. The chat must come back in the same session, loaded with `session/load` (the next
 * turn's request to the provider carries what was said before the stop), and the waiting completion must
 * be injected exactly once.
 *
 * The provider's script acts on the newest person message (`#fake` directives, as the default script
 * reads them) and answers `RECALL` with what the conversation it was sent still holds.
 */

const SECRET_WORD = 'pineapple';
/** How long a step that waits for a real agent may take: an agent's start is seconds, more on a loaded machine. */
const AGENT_WAIT_MS = 120_000;

/**
 * The newest user text that is not one the CLI adds itself (Claude Code's `<system-reminder>`, Codex's
 * `<environment_context>`).
 */
function newestUserText(request: ModelRequest): string {
  const texts = request.userTexts.filter((t) => !t.trimStart().startsWith('<'));
  return texts.at(-1) ?? '';
}

function chatScript(request: ModelRequest) {
  const newest = newestUserText(request);
  if (newest.includes('RECALL')) {
    const earlier = request.userTexts.some((t) => t.includes(SECRET_WORD) && !t.includes('RECALL'));
    return { kind: 'text' as const, text: `recall: ${earlier ? SECRET_WORD : 'nothing'}` };
  }
  // A person's message says how its turn goes; anything else (an injection, a side call) gets the default text.
  return directiveScript('noted')({ ...request, userTexts: newest.includes('#fake') ? [newest] : [] });
}

/**
 * Each parent spawns the child by calling Crew's `spawn_run` as the script says. Gemini CLI 0.61 is left out:
 * it advertises `loadSession`, but its `session/load` first sets up recording for the session it is asked to
 * load, which appends a fresh header to that session's file (`$set.messages` with only its set-up message),
 * and then finds nothing resumable there: "No previous sessions found for this project". The same happens
 * without Crew, over raw JSON-RPC. Crew then opens a new session and says so, the path
 * `test/chat/chat-load-session.test.ts` covers.
 */
const CASES = [{ name: 'claude' }, { name: 'codex' }, { name: 'opencode' }] as const;

// The CLIs run at once, each on its own rig (provider, daemon, home, agent mark): most of a case is waiting
// for agent starts and the restart.
describe.concurrent.each(CASES)(
  'a hosted chat with $name as its parent across a restart of crew serve (real CLI, scripted provider)',
  ({ name }) => {
    let rig: Rig;
    beforeAll(async () => {
      const bins = await ensureCli(name);
      rig = await startRig(name, bins, { 'chat.parent_agent': name });
      rig.provider.setScript(chatScript);
    }, INSTALL_TIMEOUT_MS + 60_000);
    afterAll(async () => {
      await rig?.close();
      if (rig) await waitUntil(() => markedProcesses(rig.mark).length === 0, 10_000, 'no agent process left');
    });

    const say = async (chatId: string, text: string, wait: boolean) => {
      const { body } = await api(rig.daemon, 'POST', `/api/chats/${chatId}/messages`, { text, wait });
      expect(body.ok, JSON.stringify(body)).toBe(true);
      return body.turn as TurnOutcome | undefined;
    };
    const textOfTurn = (events: readonly NumberedChatEvent[], turn: number) =>
      events
        .filter(
          (e): e is Extract<NumberedChatEvent, { type: 'text' }> => e.type === 'text' && e.turn === turn,
        )
        .map((e) => e.text)
        .join('');

    it('reloads the session with session/load and injects the completion that waited at the stop once', async () => {
      const created = await api(rig.daemon, 'POST', '/api/chats', { cwd: rig.cwd });
      expect(created.body.ok, JSON.stringify(created.body)).toBe(true);
      const chat = created.body.chat as ChatView;
      expect(chat.agent).toBe(name);
      const before = followChat(rig.daemon, chat.id);

      expect(await say(chat.id, `#fake reply="noted" remember the word ${SECRET_WORD}`, true)).toMatchObject({
        stop_reason: 'end_turn',
      });
      const task = '#sim sleep=3s echo child done';
      const args = JSON.stringify({ task, agent: 'sim' });
      expect(await say(chat.id, `#fake tool=spawn_run args='${args}' then="spawned"`, true)).toMatchObject({
        stop_reason: 'end_turn',
      });
      const childId = await pollFor(
        'the child run',
        async () => {
          const runs = (await api(rig.daemon, 'GET', '/api/runs')).body.runs as {
            id: string;
            parent: string;
          }[];
          return runs.find((r) => r.parent === `chat:${chat.id}`)?.id;
        },
        AGENT_WAIT_MS,
      );
      // A turn the provider never answers keeps the parent busy, so the child's completion has to wait.
      await say(chat.id, '#fake hang (a long task)', false);
      await pollFor(
        'the child to complete, its event still pending',
        async () => {
          const run = (await api(rig.daemon, 'GET', `/api/runs/${childId}`)).body.run as {
            status: string;
            delivery: string;
          };
          return run.status === 'completed' && run.delivery === 'pending' ? true : undefined;
        },
        AGENT_WAIT_MS,
      );
      expect(before.events.filter(isInjected)).toEqual([]);
      const first = (await api(rig.daemon, 'GET', `/api/chats/${chat.id}`)).body.chat as ChatView;
      expect(first.session_id).toBeDefined();
      before.stop();

      await rig.restart();
      await waitUntil(() => !isAlive(first.pid as number), 10_000, 'the first parent process gone');
      const after = followChat(rig.daemon, chat.id);
      await pollFor(
        'the chat back, its session reloaded',
        () =>
          after.events.some((e) => e.type === 'notice' && /reloaded the conversation/.test(e.text))
            ? true
            : undefined,
        AGENT_WAIT_MS,
      );
      await pollFor(
        'the child event delivered',
        async () =>
          ((await api(rig.daemon, 'GET', `/api/runs/${childId}`)).body.run as { delivery: string })
            .delivery === 'delivered'
            ? true
            : undefined,
        AGENT_WAIT_MS,
      );
      expect(injectedRunIds(after.events)).toEqual([childId]);
      const view = (await api(rig.daemon, 'GET', `/api/chats/${chat.id}`)).body.chat as ChatView;
      expect(view.session_id).toBe(first.session_id);
      // The injection reached the model as a prompt of its own in the loaded session, once (the chat counts it
      // delivered at the parent's first update, which may come before the model is asked).
      const isInjection = (r: (typeof rig.provider.requests)[number]) =>
        r.request !== undefined &&
        r.request.tools.length > 0 &&
        newestUserText(r.request).includes(`id=${childId}`);
      const injection = await pollFor(
        'the injection sent to the model',
        () => rig.provider.requests.find(isInjection),
        AGENT_WAIT_MS,
      );
      expect(newestUserText(injection.request as ModelRequest)).toMatch(/status=completed/);
      // Sent in the session as it was: the turns before the stop come with it.
      expect(injection.request?.userTexts.join('\n')).toContain(SECRET_WORD);

      // The loaded session still holds the first turn: the model is sent it with the next message.
      const recall = await say(chat.id, 'RECALL what I asked you to remember', true);
      expect(recall).toMatchObject({ stop_reason: 'end_turn' });
      // (Codex puts a warning about the fake model's metadata before the answer.)
      expect(textOfTurn(after.events, recall?.turn ?? -1)).toMatch(new RegExp(`recall: ${SECRET_WORD}$`));
      // Nothing is injected a second time.
      expect(injectedRunIds(after.events)).toEqual([childId]);
      expect(rig.provider.requests.filter(isInjection).length).toBe(1);
      after.stop();
    }, 300_000);
  },
);
