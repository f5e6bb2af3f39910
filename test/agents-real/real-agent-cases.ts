import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, pollFor } from '../helpers/daemon-process.js';
import {
  type CliName,
  ensureCli,
  INSTALL_TIMEOUT_MS,
  markedProcesses,
  type Rig,
  runStatus,
  spawnRun,
  startRig,
  waitEnded,
} from './real-agent-rig.js';

/**
 * The cases every real CLI passes through Crew (issue 14): a plain reply; a shell tool call whose
 * permission Crew answers; cancel mid-turn; a 429 that ends `failed` with `provider_rate_limited`; a
 * SIGKILL of `crew serve` mid-turn (issue 12 §1), after which the restarted daemon ends the orphaned agent;
 * a nested spawn (the agent calls Crew's spawn_run through the MCP endpoint it was given).
 * `outlivesCrash`: the agent keeps running when the gateway dies (its stdin closed), so only the restarted
 * gateway can end it (codex-acp); Gemini CLI and opencode exit by themselves within a second,
 * claude-agent-acp within a few.
 *
 * The first four cases run at once on the rig (each its own run, task, file and provider requests; an agent
 * start is seconds of waiting); cancel and crash then run alone, as they count every agent process of the
 * rig and the crash restarts its daemon. `oneAtATime`: the four in turn (opencode: its processes share the
 * rig's HOME and data directory, and one of two at once exited with code 1 at start).
 */
export function realAgentCases(
  name: CliName,
  options: { outlivesCrash?: boolean; oneAtATime?: boolean } = {},
): void {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig(name, await ensureCli(name));
  }, INSTALL_TIMEOUT_MS + 30_000);
  afterAll(async () => {
    await rig?.close();
  });

  /** A run whose agent is waiting for a model call that never answers; resolves with its id. */
  const spawnHanging = async () => {
    const before = rig.provider.requests.length;
    const id = await spawnRun(rig, '#fake hang');
    await pollFor(
      'the agent to reach the hanging model call',
      () => (rig.provider.requests.slice(before).some((r) => r.reply === 'hang') ? true : undefined),
      120_000,
    );
    expect(markedProcesses(rig.mark).length).toBeGreaterThan(0);
    return id;
  };

  (options.oneAtATime ? describe : describe.concurrent)('independent runs', () => {
    it('completes a run with the provider reply in its transcript, and records usage', async () => {
      const id = await spawnRun(rig, 'Say hello.');
      const { run, text } = await waitEnded(rig, id);
      expect(run.status, `${run.error} / ${text}`).toBe('completed');
      expect(text).toContain('Hello from the fake provider.');
      expect(
        rig.provider.requests.some(
          (r) => r.reply === 'text' && r.request?.userTexts.some((t) => t.includes('Say hello.')),
        ),
      ).toBe(true);
    }, 180_000);

    it('runs a shell tool call: the call is in the transcript and Crew allowed it per permission_policy', async () => {
      const id = await spawnRun(rig, `#fake shell="touch crew-proof-${name}.txt" then="shell step done"`);
      const { run, text } = await waitEnded(rig, id);
      expect(run.status, `${run.error} / ${text}`).toBe('completed');
      // The call's own line (Gemini CLI asks permission first and then sends only updates of the call).
      expect(text, text).toMatch(new RegExp(`^\\[tool_call(_update)?\\] .*crew-proof-${name}`, 'm'));
      expect(text).toMatch(/^\[permission\] .*: allow_once \(policy allow\)$/m);
      expect(text).toMatch(/^\[tool_call_update\] .*completed\)$/m);
      expect(text).toContain('shell step done');
      expect(existsSync(join(rig.cwd, `crew-proof-${name}.txt`))).toBe(true);
    }, 180_000);

    it('ends a rate-limited run failed with error_kind provider_rate_limited, keeping the agent message', async () => {
      const started = Date.now();
      const id = await spawnRun(rig, '#fake status=429 retry_after=0');
      const { run } = await waitEnded(rig, id);
      expect(run.status).toBe('failed');
      expect(run.error_kind, run.error).toBe('provider_rate_limited');
      expect(run.error).toMatch(/429|rate/i);
      expect(Date.now() - started).toBeLessThan(150_000);
    }, 180_000);

    it('spawns a nested Crew run through the MCP endpoint it was given; it appears under run:<id>', async () => {
      const args = JSON.stringify({ task: '#sim echo nested child says hi', agent: 'sim' });
      const id = await spawnRun(rig, `#fake tool=spawn_run args='${args}' then="spawned the child"`);
      const { run, text } = await waitEnded(rig, id);
      expect(run.status, `${run.error} / ${text}`).toBe('completed');
      const list = await api(rig.daemon, 'GET', '/api/runs');
      const runs = list.body.runs as { id: string; parent: string; agent: string }[];
      const child = runs.find((r) => r.parent === `run:${id}`);
      expect(child, JSON.stringify(runs)).toMatchObject({ agent: 'sim' });
      const childEnd = await waitEnded(rig, child!.id, 60_000);
      expect(childEnd.run.status).toBe('completed');
      expect((await runStatus(rig, id)).text).toContain('spawned the child');
    }, 180_000);
  });

  describe('runs that need the rig to themselves', () => {
    it('cancels a run mid-turn: it ends cancelled and its process tree is gone', async () => {
      const id = await spawnHanging();
      const cancelled = await api(rig.daemon, 'POST', `/api/runs/${id}/cancel`);
      expect(cancelled.status).toBe(200);
      const { run } = await waitEnded(rig, id, 30_000);
      expect(run.status).toBe('cancelled');
      await pollFor(
        'the agent processes to go',
        () => (markedProcesses(rig.mark).length === 0 ? true : undefined),
        15_000,
      );
    }, 180_000);

    it('survives a crash of crew serve mid-turn: after the restart the run is lost, its processes are gone, its completion comes once', async () => {
      const id = await spawnHanging();
      let orphans: number[] = [];
      await rig.restart('SIGKILL', async () => {
        await new Promise((r) => setTimeout(r, 1000));
        orphans = markedProcesses(rig.mark);
      });
      // In its own session and process group, an agent that ignores its closed pipes outlives the gateway...
      if (options.outlivesCrash) expect(orphans.length).toBeGreaterThan(0);
      // ...and the restarted gateway ends it before it serves (a moment's grace for the kernel's bookkeeping).
      await pollFor(
        'the orphaned agent processes to go',
        () => (markedProcesses(rig.mark).length === 0 ? true : undefined),
        1_000,
      );
      const { run } = await waitEnded(rig, id, 30_000);
      expect(run.status).toBe('lost');
      const completionsOf = async () => {
        const { body } = await api(rig.daemon, 'GET', '/api/events?parent=cli:real-agents&timeout_secs=0');
        return (body.events as { run_ids: string[] }[]).filter((e) => e.run_ids.includes(id));
      };
      expect(await completionsOf()).toHaveLength(1);
      expect(await completionsOf()).toHaveLength(0);
    }, 180_000);
  });
}
