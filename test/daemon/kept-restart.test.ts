import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { api, type DaemonProcess, pollFor, startDaemonProcess } from '../helpers/daemon-process.js';
import { infoOf, simCommand } from '../helpers/sim.js';

/**
 * Kept conversations across a real `crew serve` restart (issue 29): the simulator with `--sessions DIR`
 * advertises `loadSession` and keeps its sessions on disk, as opencode and claude-agent-acp do; without it
 * it cannot reload one. The first turn is said again by the agent in the continued turn (`#sim info`
 * lists the session's earlier prompts), which shows the session itself came back, not a new one.
 */

type Run = { id: string; status: string; error?: string };

const daemons: DaemonProcess[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const d of daemons.splice(0)) {
    await d.stop();
    d.cleanup();
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function config(sessionsDir: string | undefined) {
  return {
    'agents.keeper': {
      runner: 'acp',
      command: sessionsDir === undefined ? simCommand() : simCommand('--sessions', sessionsDir),
    },
  };
}

async function ended(d: DaemonProcess, id: string): Promise<Run> {
  return pollFor(`run ${id} to end`, async () => {
    const runs = (await api(d, 'GET', '/api/runs')).body.runs as Run[];
    const run = runs.find((r) => r.id === id);
    return run && !['queued', 'starting', 'running'].includes(run.status) ? run : undefined;
  });
}

async function transcript(d: DaemonProcess, id: string): Promise<string> {
  const body = (await api(d, 'GET', `/api/runs/${id}?offset=0&limit=1000`)).body;
  return String(body.text ?? '');
}

/** Starts a daemon, opens a kept conversation with one completed turn, and stops the daemon. */
async function keptThenRestart(
  sessionsDir: string | undefined,
  signal: NodeJS.Signals,
  /** The agent's sessions directory after the restart; `null`: none (it no longer loads sessions). */
  sessionsDirAfter: string | null | undefined = sessionsDir,
) {
  const first = await startDaemonProcess({ config: config(sessionsDir) });
  daemons.push(first);
  const spawned = await api(first, 'POST', '/api/spawn', {
    args: { task: 'remember the word heron', agent: 'keeper', keep: true },
  });
  const conversation = (spawned.body.runs as Run[])[0]!.id;
  expect(await ended(first, conversation)).toMatchObject({ status: 'completed' });
  await first.stop(signal);
  // Its home is the second's, removed with it.
  daemons.splice(daemons.indexOf(first), 1);
  const before = Date.now();
  const second = await startDaemonProcess({
    home: first.home,
    config: config(sessionsDirAfter ?? undefined),
  });
  const restartMs = Date.now() - before;
  daemons.push(second);
  return { second, conversation, restartMs };
}

describe('kept conversations survive a daemon restart when the agent can load sessions (issue 29)', () => {
  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    it(`after ${signal}, spawn_continue reopens the session with session/load and the agent sees the earlier turn`, async () => {
      const sessionsDir = mkdtempSync(join(tmpdir(), 'crew-kept-sessions-'));
      dirs.push(sessionsDir);
      const { second, conversation, restartMs } = await keptThenRestart(sessionsDir, signal);
      const t0 = Date.now();
      const continued = await api(second, 'POST', `/api/conversations/${conversation}/continue`, {
        args: { task: '#sim info' },
      });
      expect(continued.body).toMatchObject({ ok: true });
      const next = (continued.body.runs as Run[])[0]!.id;
      expect(await ended(second, next)).toMatchObject({ status: 'completed' });
      const continueMs = Date.now() - t0;
      const info = infoOf(await transcript(second, next));
      const earlier = info.earlier as string[];
      expect(earlier).toHaveLength(1);
      expect(earlier[0]).toContain('remember the word heron');
      // The conversation stays kept: a third turn continues it in the same session.
      const third = await api(second, 'POST', `/api/conversations/${conversation}/continue`, {
        args: { task: '#sim info' },
      });
      const thirdId = (third.body.runs as Run[])[0]!.id;
      expect(await ended(second, thirdId)).toMatchObject({ status: 'completed' });
      expect(infoOf(await transcript(second, thirdId))).toMatchObject({
        sessionId: info.sessionId,
        earlier: [expect.stringContaining('heron'), expect.stringContaining('#sim info')],
      });
      console.log(
        `kept-restart ${signal}: daemon restart ${restartMs} ms, continue to completed ${continueMs} ms`,
      );
    }, 120_000);
  }

  it('a session the agent can no longer load: the continued run fails saying so, and the conversation is released', async () => {
    const sessionsDir = mkdtempSync(join(tmpdir(), 'crew-kept-sessions-'));
    dirs.push(sessionsDir);
    const { second, conversation } = await keptThenRestart(sessionsDir, 'SIGTERM');
    // The agent's own session store is gone (wiped, another machine): its session/load refuses.
    for (const file of readdirSync(sessionsDir)) rmSync(join(sessionsDir, file));
    const continued = await api(second, 'POST', `/api/conversations/${conversation}/continue`, {
      args: { task: '#sim info' },
    });
    expect(continued.body).toMatchObject({ ok: true });
    const next = (continued.body.runs as Run[])[0]!.id;
    const run = await ended(second, next);
    expect(run.status).toBe('failed');
    expect(run.error).toMatch(
      new RegExp(`could not reopen conversation ${conversation} after the gateway restarted`),
    );
    const again = await api(second, 'POST', `/api/conversations/${conversation}/continue`, {
      args: { task: '#sim info' },
    });
    expect(again.body).toMatchObject({ ok: false, refusal: { code: 'conversation_released' } });
  }, 120_000);

  it('an agent that no longer advertises loadSession after the restart (its definition changed): the run fails saying so', async () => {
    const sessionsDir = mkdtempSync(join(tmpdir(), 'crew-kept-sessions-'));
    dirs.push(sessionsDir);
    const { second, conversation } = await keptThenRestart(sessionsDir, 'SIGTERM', null);
    const continued = await api(second, 'POST', `/api/conversations/${conversation}/continue`, {
      args: { task: '#sim info' },
    });
    expect(continued.body).toMatchObject({ ok: true });
    const run = await ended(second, (continued.body.runs as Run[])[0]!.id);
    expect(run.status).toBe('failed');
    expect(run.error).toMatch(
      /agent "keeper" does not advertise ACP loadSession, so its session .* cannot be reopened/,
    );
  }, 120_000);

  it('an agent that cannot load sessions: continue answers conversation_released saying why', async () => {
    const { second, conversation } = await keptThenRestart(undefined, 'SIGTERM');
    const continued = await api(second, 'POST', `/api/conversations/${conversation}/continue`, {
      args: { task: '#sim info' },
    });
    expect(continued.body).toMatchObject({ ok: false, refusal: { code: 'conversation_released' } });
    expect(JSON.stringify(continued.body)).toMatch(
      /cannot reload sessions \(it does not advertise ACP loadSession\)/,
    );
  }, 120_000);
});
