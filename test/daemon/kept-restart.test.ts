import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, type DaemonProcess, pollFor, startDaemonProcess } from '../helpers/daemon-process.js';
import { infoOf, simCommand } from '../helpers/sim.js';

/**
 * Kept conversations across a real `crew serve` restart (issue 29): the simulator with `--sessions DIR`
 * advertises `loadSession` and keeps its sessions on disk, as opencode and claude-agent-acp do; without it
 * it cannot reload one. The first turn is said again by the agent in the continued turn (`#sim info`
 * lists the session's earlier prompts), which shows the session itself came back, not a new one.
 *
 * One restart per signal serves every case of that signal: each case has its own agent (its own
 * sessions directory, or none) and its own conversation on the same daemon, so the cases share the
 * daemon starts (the most of this file's cost) and nothing else.
 */

type Run = { id: string; status: string; error?: string };

/** An agent's sessions directory before and after the restart; `undefined`: it cannot load sessions. */
type Sessions = { before: string | undefined; after: string | undefined };

const dirs: string[] = [];
const daemons: DaemonProcess[] = [];

function sessionsDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'crew-kept-sessions-'));
  dirs.push(dir);
  return dir;
}

function config(agents: Record<string, Sessions>, when: keyof Sessions) {
  return Object.fromEntries(
    Object.entries(agents).map(([name, sessions]) => {
      const dir = sessions[when];
      return [
        `agents.${name}`,
        { runner: 'acp', command: dir === undefined ? simCommand() : simCommand('--sessions', dir) },
      ];
    }),
  );
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

/**
 * Starts a daemon, opens a kept conversation with one completed turn on each agent, stops the daemon
 * with `signal`, and starts it again on the same home with each agent's `after` definition.
 */
async function keptThenRestart(agents: Record<string, Sessions>, signal: NodeJS.Signals) {
  const first = await startDaemonProcess({ config: config(agents, 'before') });
  daemons.push(first);
  const conversations = new Map<string, string>();
  await Promise.all(
    Object.keys(agents).map(async (agent) => {
      const spawned = await api(first, 'POST', '/api/spawn', {
        args: { task: 'remember the word heron', agent, keep: true },
      });
      const conversation = (spawned.body.runs as Run[])[0]!.id;
      expect(await ended(first, conversation)).toMatchObject({ status: 'completed' });
      conversations.set(agent, conversation);
    }),
  );
  await first.stop(signal);
  // Its home is the second's, removed with it.
  daemons.splice(daemons.indexOf(first), 1);
  const before = Date.now();
  const second = await startDaemonProcess({ home: first.home, config: config(agents, 'after') });
  const restartMs = Date.now() - before;
  daemons.push(second);
  return { second, conversations, restartMs };
}

type Restarted = Awaited<ReturnType<typeof keptThenRestart>>;

describe('kept conversations survive a daemon restart when the agent can load sessions (issue 29)', () => {
  const restarted = new Map<NodeJS.Signals, Restarted>();
  /** The SIGTERM case whose agent's session store is wiped after the restart. */
  let wipedDir = '';

  beforeAll(async () => {
    wipedDir = sessionsDir();
    const kept = sessionsDir();
    const killed = sessionsDir();
    const [term, kill] = await Promise.all([
      keptThenRestart(
        {
          keeper: { before: kept, after: kept },
          wiped: { before: wipedDir, after: wipedDir },
          // Its definition changed across the restart: it no longer loads sessions.
          changed: { before: sessionsDir(), after: undefined },
          plain: { before: undefined, after: undefined },
        },
        'SIGTERM',
      ),
      keptThenRestart({ keeper: { before: killed, after: killed } }, 'SIGKILL'),
    ]);
    restarted.set('SIGTERM', term);
    restarted.set('SIGKILL', kill);
  }, 120_000);

  afterAll(async () => {
    for (const d of daemons.splice(0)) {
      await d.stop();
      d.cleanup();
    }
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    it(`after ${signal}, spawn_continue reopens the session with session/load and the agent sees the earlier turn`, async () => {
      const { second, conversations, restartMs } = restarted.get(signal)!;
      const conversation = conversations.get('keeper')!;
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
    const { second, conversations } = restarted.get('SIGTERM')!;
    const conversation = conversations.get('wiped')!;
    // The agent's own session store is gone (wiped, another machine): its session/load refuses.
    for (const file of readdirSync(wipedDir)) rmSync(join(wipedDir, file));
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
    const { second, conversations } = restarted.get('SIGTERM')!;
    const continued = await api(
      second,
      'POST',
      `/api/conversations/${conversations.get('changed')!}/continue`,
      { args: { task: '#sim info' } },
    );
    expect(continued.body).toMatchObject({ ok: true });
    const run = await ended(second, (continued.body.runs as Run[])[0]!.id);
    expect(run.status).toBe('failed');
    expect(run.error).toMatch(
      /agent "changed" does not advertise ACP loadSession, so its session .* cannot be reopened/,
    );
  }, 120_000);

  it('an agent that cannot load sessions: continue answers conversation_released saying why', async () => {
    const { second, conversations } = restarted.get('SIGTERM')!;
    const continued = await api(
      second,
      'POST',
      `/api/conversations/${conversations.get('plain')!}/continue`,
      { args: { task: '#sim info' } },
    );
    expect(continued.body).toMatchObject({ ok: false, refusal: { code: 'conversation_released' } });
    expect(JSON.stringify(continued.body)).toMatch(
      /cannot reload sessions \(it does not advertise ACP loadSession\)/,
    );
  }, 120_000);
});
