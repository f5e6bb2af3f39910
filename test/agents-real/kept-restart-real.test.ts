import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { directiveScript, type ModelRequest } from '../../src/fake-provider/script.js';
import { api } from '../helpers/daemon-process.js';
import { waitUntil } from '../helpers/sim.js';
import {
  ensureCli,
  INSTALL_TIMEOUT_MS,
  markedProcesses,
  type Rig,
  startRig,
  waitEnded,
} from './real-agent-rig.js';

/**
 * Issue 29 with a real agent: a kept conversation (`keep: true`) of claude-agent-acp or opencode (each
 * advertises `loadSession`) on the scripted provider survives a restart of `crew serve`. Its next turn
 * (`spawn_continue`) starts a new agent process that reopens the session with `session/load`: the model
 * is sent the first turn again, and answers `RECALL` with the word it holds.
 */

const SECRET_WORD = 'heron';

/** The newest user text that is not one the CLI adds itself (Claude Code's `<system-reminder>`). */
function newestUserText(request: ModelRequest): string {
  return request.userTexts.filter((t) => !t.trimStart().startsWith('<')).at(-1) ?? '';
}

function keptScript(request: ModelRequest) {
  const newest = newestUserText(request);
  if (newest.includes('RECALL')) {
    const earlier = request.userTexts.some((t) => t.includes(SECRET_WORD) && !t.includes('RECALL'));
    return { kind: 'text' as const, text: `recall: ${earlier ? SECRET_WORD : 'nothing'}` };
  }
  return directiveScript('noted')({ ...request, userTexts: [] });
}

const CASES = [{ name: 'claude' }, { name: 'opencode' }] as const;

// The CLIs run at once, each on its own rig (provider, daemon, home, agent mark): most of a case is waiting
// for agent starts and the restart.
describe.concurrent.each(CASES)(
  'a kept conversation of $name across a restart of crew serve (real CLI, scripted provider)',
  ({ name }) => {
    let rig: Rig;
    beforeAll(async () => {
      rig = await startRig(name, await ensureCli(name));
      rig.provider.setScript(keptScript);
    }, INSTALL_TIMEOUT_MS + 60_000);
    afterAll(async () => {
      await rig?.close();
      if (rig) await waitUntil(() => markedProcesses(rig.mark).length === 0, 10_000, 'no agent process left');
    });

    it('spawn_continue after the restart reloads the session: the model sees the earlier turn', async () => {
      const spawned = await api(rig.daemon, 'POST', '/api/spawn', {
        parent: 'cli:real-agents',
        args: { task: `remember the word ${SECRET_WORD}`, agent: name, cwd: rig.cwd, keep: true },
      });
      expect(spawned.body.ok, JSON.stringify(spawned.body)).toBe(true);
      const conversation = (spawned.body.runs as { id: string }[])[0]!.id;
      expect((await waitEnded(rig, conversation)).run.status).toBe('completed');

      const t0 = Date.now();
      await rig.restart();
      const restartMs = Date.now() - t0;
      const t1 = Date.now();
      const continued = await api(rig.daemon, 'POST', `/api/conversations/${conversation}/continue`, {
        parent: 'cli:real-agents',
        args: { task: 'RECALL what I asked you to remember' },
      });
      expect(continued.body.ok, JSON.stringify(continued.body)).toBe(true);
      const next = (continued.body.runs as { id: string }[])[0]!.id;
      const ended = await waitEnded(rig, next);
      const continueMs = Date.now() - t1;
      expect(ended.run.status, ended.run.error).toBe('completed');
      expect(ended.text).toContain(`recall: ${SECRET_WORD}`);
      // The request of the continued turn carried the first turn: the session was loaded, not made anew.
      const recall = rig.provider.requests.filter(
        (r) => r.request !== undefined && newestUserText(r.request).includes('RECALL'),
      );
      expect(recall.length).toBeGreaterThan(0);
      expect(recall.at(-1)?.request?.userTexts.join('\n')).toContain(SECRET_WORD);
      console.log(
        `kept-restart-real ${name}: restart ${restartMs} ms, continue to completed ${continueMs} ms`,
      );
    }, 400_000);
  },
);
