import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, crewCommand, type DaemonProcess, startDaemonProcess } from '../helpers/daemon-process.js';
import { isAlive, waitUntil } from '../helpers/sim.js';
import { spawnedIds } from './chat-harness.js';

/** `crew chat` as a real process against a real `crew serve`, typed at through its stdin. */

interface Terminal {
  proc: ChildProcess;
  out: () => string;
  err: () => string;
  type(line: string): void;
  untilOut(pattern: RegExp, timeoutMs?: number): Promise<string>;
  exited: Promise<number | null>;
}

function startChat(d: DaemonProcess, extra: string[] = [], cwd?: string): Terminal {
  const [node, args] = crewCommand(['chat', ...extra]);
  const proc = spawn(node, args, {
    env: { ...process.env, CREW_HOME: d.home },
    stdio: ['pipe', 'pipe', 'pipe'],
    ...(cwd !== undefined ? { cwd } : {}),
  });
  let out = '';
  let err = '';
  proc.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  proc.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return {
    proc,
    out: () => out,
    err: () => err,
    type: (line) => proc.stdin?.write(`${line}\n`),
    async untilOut(pattern, timeoutMs = 30_000) {
      await waitUntil(
        () => pattern.test(out),
        timeoutMs,
        `crew chat output matching ${pattern}; got:\n${out}\n${err}`,
      );
      return out;
    },
    exited,
  };
}

describe('crew chat: a terminal chat with a hosted parent through the daemon', () => {
  let d: DaemonProcess;
  const terminals: Terminal[] = [];
  beforeAll(async () => {
    d = await startDaemonProcess({ config: { 'agent.max_subagents': 4 } });
  }, 30_000);
  afterAll(async () => {
    for (const t of terminals) if (t.proc.exitCode === null) t.proc.kill('SIGKILL');
    expect(await d.stop()).toBe(0);
    d.cleanup();
  });

  it('a relative --cwd resolves against the directory crew chat runs in', async () => {
    mkdirSync(join(d.home, 'project'), { recursive: true });
    const t = startChat(d, ['--cwd', 'project'], d.home);
    terminals.push(t);
    const banner = await t.untilOut(/^chat (\S+) with agent .* in (.*)$/m);
    const [, chatId, cwd] = /^chat (\S+) with agent .* in (.*)$/m.exec(banner)!;
    expect(cwd).toBe(join(d.home, 'project'));
    // A /quit at once after the banner, before the chat's event stream is even open: the chat is
    // closed on the daemon and the CLI ends cleanly (it once read the closed stream as a lost daemon).
    t.type('/quit');
    expect(await t.exited).toBe(0);
    expect(t.err()).toBe('');
    expect((await api(d, 'GET', `/api/chats/${chatId}`)).status).toBe(404);
  }, 60_000);

  it('streams the answer, shows injected completion events, and /list, /status, /cancel, /quit', async () => {
    const t = startChat(d);
    terminals.push(t);
    const banner = await t.untilOut(/^chat (\S+) with agent "sim" \(pid (\d+)\)/m);
    const [, chatId, pid] = /^chat (\S+) with agent "sim" \(pid (\d+)\)/m.exec(banner)!;

    t.type('#sim spawn="#sim sleep=50ms a" spawn="#sim sleep=50ms b" spawn="#sim sleep=50ms c" yield');
    const text = await t.untilOut(/^summary: .*$/m);
    const ids = spawnedIds(text);
    expect(ids).toHaveLength(3);
    for (const id of ids) {
      expect(text).toMatch(
        new RegExp(`^« \\[Subagent completion event\\] id=${id} agent=sim status=completed`, 'm'),
      );
      expect(text).toMatch(new RegExp(`^ack ${id}=completed$`, 'm'));
    }
    expect(text).toMatch(new RegExp(`^summary: ${ids.map((id) => `(?=.*${id}=completed)`).join('')}`, 'm'));

    t.type('/list');
    await t.untilOut(/^ID\s+STATUS/m);
    await waitUntil(
      () => ids.every((id) => new RegExp(`^${id}\\s+completed\\s+sim`, 'm').test(t.out())),
      10_000,
      'the runs listed',
    );

    t.type(`/status ${ids[0]}`);
    await t.untilOut(new RegExp(`^${ids[0]}  completed  agent=sim .*delivery=delivered$`, 'm'));

    t.type(`/cancel ${ids[1]}`);
    await waitUntil(() => /refused \(not_running\)/.test(t.err()), 10_000, 'the cancel refused');

    t.type('/quit');
    expect(await t.exited).toBe(0);
    const chats = await api(d, 'GET', '/api/chats');
    expect(chats.body.chats).toEqual([]);
    await waitUntil(() => !isAlive(Number(pid)), 5000, 'the parent process gone');
    expect(chatId).toMatch(/^[0-9a-f]+$/);
  });

  it('cancels a running run with /cancel; the parent hears of it', async () => {
    const t = startChat(d);
    terminals.push(t);
    await t.untilOut(/^chat \S+ with agent/m);
    t.type('#sim spawn="#sim hang" yield');
    const [id] = spawnedIds(await t.untilOut(/^spawned \S+$/m));
    t.type(`/cancel ${id}`);
    await t.untilOut(new RegExp(`^cancelled ${id}$`, 'm'));
    await t.untilOut(
      new RegExp(`^« \\[Subagent completion event\\] id=${id} agent=sim status=cancelled`, 'm'),
    );
    await t.untilOut(new RegExp(`^summary: ${id}=cancelled$`, 'm'));
    t.proc.stdin?.end();
    expect(await t.exited).toBe(0);
  });
});
