import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ChatView, NumberedChatEvent } from '../../src/chat/chat-event.js';
import { followChat as follow, injectedRunIds, isInjected } from '../helpers/chat-follow.js';
import { api, type DaemonProcess, pollFor, startDaemonProcess } from '../helpers/daemon-process.js';
import { isAlive, waitUntil } from '../helpers/sim.js';
import { spawnedIds } from './chat-harness.js';

/**
 * Issue 12 §4: a real `crew serve` process is stopped after a chat's child run completed and before its
 * event was injected (the parent is busy with a person's long turn), and started again on the same home:
 * the chat continues (the simulator cannot load sessions, so in a new session, with a notice), and the
 * pending completion event is injected exactly once, also across one more restart.
 */

const CONFIG = { 'agent.max_subagents': 8, 'host.kill_grace_secs': 2, 'chat.parent_agent': 'sim' };

describe('a hosted chat across a restart of the daemon process', () => {
  let home = mkdtempSync(join(tmpdir(), 'crew-chat-restart-'));
  const homes = [home];
  const daemons: DaemonProcess[] = [];
  const parentPids: number[] = [];
  afterAll(async () => {
    for (const d of daemons) if (d.proc.exitCode === null && d.proc.signalCode === null) await d.stop();
    await waitUntil(() => parentPids.every((pid) => !isAlive(pid)), 5000, 'every parent process gone');
    for (const dir of homes) rmSync(dir, { recursive: true, force: true });
  });
  const start = async () => {
    const d = await startDaemonProcess({ home, config: CONFIG });
    daemons.push(d);
    return d;
  };

  it('continues the chat and injects the event that was pending at the stop exactly once', async () => {
    const first = await start();
    const created = await api(first, 'POST', '/api/chats', {});
    const chat = created.body.chat as ChatView;
    parentPids.push(chat.pid as number);
    const spawned = await api(first, 'POST', `/api/chats/${chat.id}/messages`, {
      text: '#sim spawn="#sim sleep=1s child" yield',
      wait: true,
    });
    expect(spawned.body.turn).toMatchObject({ stop_reason: 'end_turn' });
    // The parent is kept busy, so the child's event waits to be injected.
    await api(first, 'POST', `/api/chats/${chat.id}/messages`, { text: '#sim sleep=60s busy' });
    const before = follow(first, chat.id);
    const childId = await pollFor('the child run to complete', async () => {
      const runs = (await api(first, 'GET', '/api/runs')).body.runs as {
        id: string;
        parent: string;
        status: string;
        delivery: string;
      }[];
      const child = runs.find((r) => r.parent === `chat:${chat.id}`);
      return child?.status === 'completed' ? child.id : undefined;
    });
    const text = before.events
      .filter((e): e is Extract<NumberedChatEvent, { type: 'text' }> => e.type === 'text')
      .map((e) => e.text)
      .join('');
    expect(spawnedIds(text)).toEqual([childId]);
    expect(before.events.filter(isInjected)).toEqual([]);
    expect((await api(first, 'GET', `/api/runs/${childId}`)).body.run).toMatchObject({ delivery: 'pending' });
    before.stop();
    expect(await first.stop()).toBe(0);
    await waitUntil(() => !isAlive(chat.pid as number), 5000, 'the first parent process gone');

    const second = await start();
    const listed = (await api(second, 'GET', '/api/chats')).body.chats as ChatView[];
    expect(listed.map((c) => c.id)).toEqual([chat.id]);
    const after = follow(second, chat.id);
    await pollFor('the child event delivered', async () =>
      ((await api(second, 'GET', `/api/runs/${childId}`)).body.run as { delivery: string }).delivery ===
      'delivered'
        ? true
        : undefined,
    );
    await pollFor('the injection turn to end', () => {
      const injected = after.events.find(isInjected);
      return injected &&
        after.events.some((e) => e.type === 'turn_ended' && e.turn === injected.turn && !e.error)
        ? true
        : undefined;
    });
    const view = (await api(second, 'GET', `/api/chats/${chat.id}`)).body.chat as ChatView;
    parentPids.push(view.pid as number);
    expect(injectedRunIds(after.events)).toEqual([childId]);
    // The turns before the stop are told again, then that the chat continues in a new session.
    expect(after.events.filter((e) => e.type === 'message').map((e) => e.text)).toEqual([
      '#sim spawn="#sim sleep=1s child" yield',
      '#sim sleep=60s busy',
    ]);
    const notices = after.events.filter((e) => e.type === 'notice').map((e) => e.text);
    expect(notices.some((n) => /Crew restarted; this chat continues/.test(n))).toBe(true);
    expect(notices.some((n) => /new session: it cannot reload sessions/.test(n))).toBe(true);
    after.stop();

    // Once more: nothing is injected a second time.
    expect(await second.stop()).toBe(0);
    const third = await start();
    const again = follow(third, chat.id);
    await pollFor('the chat back with its notice', () =>
      again.events.some((e) => e.type === 'notice' && /Crew restarted/.test(e.text)) ? true : undefined,
    );
    const latest = (await api(third, 'GET', `/api/chats/${chat.id}`)).body.chat as ChatView;
    await pollFor('the parent started', async () =>
      ((await api(third, 'GET', `/api/chats/${chat.id}`)).body.chat as ChatView).pid !== undefined
        ? true
        : undefined,
    );
    parentPids.push(((await api(third, 'GET', `/api/chats/${chat.id}`)).body.chat as ChatView).pid as number);
    expect(latest.pending_events).toBe(0);
    // The injection is told again from the store (before the notice that the chat continues), not made again.
    const continued = again.events.find((e) => e.type === 'notice' && /Crew restarted/.test(e.text));
    const told = again.events.filter(isInjected);
    expect(injectedRunIds(told)).toEqual([childId]);
    expect(told.every((e) => e.seq < (continued?.seq ?? 0))).toBe(true);
    expect(latest.turns).toBe(view.turns);
    again.stop();

    // Closing the chat forgets it: the next start has none.
    expect((await api(third, 'DELETE', `/api/chats/${chat.id}`)).body.ok).toBe(true);
    expect(await third.stop()).toBe(0);
    const fourth = await start();
    expect((await api(fourth, 'GET', '/api/chats')).body.chats).toEqual([]);
    expect(await fourth.stop()).toBe(0);
  }, 120_000);

  it('after a SIGKILL too: the chat is back and the pending event is injected once', async () => {
    home = mkdtempSync(join(tmpdir(), 'crew-chat-restart-'));
    homes.push(home);
    const first = await start();
    const chat = (await api(first, 'POST', '/api/chats', {})).body.chat as ChatView;
    parentPids.push(chat.pid as number);
    await api(first, 'POST', `/api/chats/${chat.id}/messages`, {
      text: '#sim spawn="#sim sleep=1s killed" yield',
      wait: true,
    });
    await api(first, 'POST', `/api/chats/${chat.id}/messages`, { text: '#sim sleep=60s busy' });
    const childId = await pollFor('the child run to complete', async () => {
      const runs = (await api(first, 'GET', '/api/runs')).body.runs as {
        id: string;
        parent: string;
        status: string;
      }[];
      const child = runs.find((r) => r.parent === `chat:${chat.id}`);
      return child?.status === 'completed' ? child.id : undefined;
    });
    await first.stop('SIGKILL');
    // The orphaned parent agent ends by itself once its stdin closes.
    await waitUntil(() => !isAlive(chat.pid as number), 10_000, 'the orphaned parent process gone');

    const second = await start();
    const after = follow(second, chat.id);
    await pollFor('the child event delivered', async () =>
      ((await api(second, 'GET', `/api/runs/${childId}`)).body.run as { delivery: string }).delivery ===
      'delivered'
        ? true
        : undefined,
    );
    const view = (await api(second, 'GET', `/api/chats/${chat.id}`)).body.chat as ChatView;
    parentPids.push(view.pid as number);
    await pollFor('the injection seen', () => (after.events.some(isInjected) ? true : undefined));
    expect(injectedRunIds(after.events)).toEqual([childId]);
    // The busy turn in flight at the kill is told as interrupted.
    expect(after.events).toContainEqual(
      expect.objectContaining({ type: 'turn_ended', turn: 2, error: 'Crew stopped during this turn' }),
    );
    after.stop();
  }, 120_000);
});
