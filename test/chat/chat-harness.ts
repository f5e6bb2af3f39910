import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChatView, NumberedChatEvent } from '../../src/chat/chat-event.js';
import { readSse } from '../../src/chat/sse-reader.js';
import { type Daemon, startDaemon } from '../../src/daemon/daemon.js';
import { isAlive, waitUntil } from '../helpers/sim.js';

/**
 * A real daemon in this process (port 0, a fresh CREW_HOME): SQLite, the ACP runner with the simulator
 * as the chat's parent and as its children, MCP over real HTTP. Chats are driven through the HTTP API
 * and watched through their server-sent event stream.
 */

export type Body = { ok: boolean; refusal?: { code: string; message: string }; [key: string]: unknown };

export interface TestDaemon {
  daemon: Daemon;
  home: string;
  token: string;
  api(method: string, path: string, body?: unknown): Promise<{ status: number; body: Body }>;
  /** Starts a chat and follows its event stream. */
  chat(request?: Record<string, unknown>): Promise<ChatUnderTest>;
  stop(): Promise<void>;
}

export interface ChatUnderTest {
  view: ChatView;
  events: NumberedChatEvent[];
  /** Posts a person's message (returns at once). */
  say(text: string): Promise<Body>;
  /** The parent's text of turn `turn`. */
  textOf(turn: number): string;
  /** All the parent's text so far. */
  text(): string;
  /** Resolves once an event satisfies `test` (bounded). */
  until(
    test: (event: NumberedChatEvent) => boolean,
    what: string,
    timeoutMs?: number,
  ): Promise<NumberedChatEvent>;
  /** Resolves once the streamed text matches `pattern` (bounded). */
  untilText(pattern: RegExp, timeoutMs?: number): Promise<string>;
  stopFollowing(): void;
}

export async function startTestDaemon(config: Record<string, unknown> = {}): Promise<TestDaemon> {
  const home = mkdtempSync(join(tmpdir(), 'crew-chat-'));
  writeFileSync(
    join(home, 'config.json'),
    JSON.stringify({
      'agent.subagent_spawn_stagger_secs': 0,
      'agent.spawn_min_memory_gb': 0,
      'agent.max_subagents': 8,
      'host.kill_grace_secs': 2,
      ...config,
    }),
  );
  const daemon = await startDaemon({ crewHome: home, port: 0, cwd: home, env: process.env, log: () => {} });
  const token = readFileSync(join(home, 'token'), 'utf8').trim();
  const followers: AbortController[] = [];
  /** Every parent process a chat was seen running in. */
  const parentPids = new Set<number>();

  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${daemon.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: response.status, body: (await response.json()) as Body };
  };

  const chat = async (request: Record<string, unknown> = {}): Promise<ChatUnderTest> => {
    const created = await api('POST', '/api/chats', request);
    if (!created.body.ok) throw new Error(`POST /api/chats: ${JSON.stringify(created.body)}`);
    const view = created.body.chat as ChatView;
    if (view.pid !== undefined) parentPids.add(view.pid);
    const events: NumberedChatEvent[] = [];
    const abort = new AbortController();
    followers.push(abort);
    const response = await fetch(`${daemon.url}/api/chats/${view.id}/events`, {
      headers: { authorization: `Bearer ${token}` },
      signal: abort.signal,
    });
    if (!response.ok || !response.body) throw new Error(`events stream: ${response.status}`);
    const body = response.body;
    void (async () => {
      try {
        for await (const message of readSse(body)) events.push(JSON.parse(message.data) as NumberedChatEvent);
      } catch {
        // aborted
      }
    })();
    const textOf = (turn: number) =>
      events
        .filter(
          (e): e is Extract<NumberedChatEvent, { type: 'text' }> => e.type === 'text' && e.turn === turn,
        )
        .map((e) => e.text)
        .join('');
    const text = () =>
      events
        .filter((e): e is Extract<NumberedChatEvent, { type: 'text' }> => e.type === 'text')
        .map((e) => e.text)
        .join('');
    const until = async (test: (event: NumberedChatEvent) => boolean, what: string, timeoutMs = 20_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = events.find(test);
        if (found) return found;
        if (Date.now() > deadline)
          throw new Error(`timed out waiting for ${what}; events: ${JSON.stringify(events, null, 1)}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const untilText = async (pattern: RegExp, timeoutMs = 20_000) => {
      await until(() => pattern.test(text()), `text matching ${pattern}`, timeoutMs);
      return text();
    };
    return {
      view,
      events,
      say: async (say) => (await api('POST', `/api/chats/${view.id}/messages`, { text: say })).body,
      textOf,
      text,
      until,
      untilText,
      stopFollowing: () => abort.abort(),
    };
  };

  return {
    daemon,
    home,
    token,
    api,
    chat,
    async stop() {
      for (const chat of daemon.chats.list()) if (chat.pid !== undefined) parentPids.add(chat.pid);
      for (const abort of followers) abort.abort();
      await daemon.shutdown(2000);
      rmSync(home, { recursive: true, force: true });
      // No parent (nor, with it, any shared child) outlives the daemon.
      await waitUntil(() => [...parentPids].every((pid) => !isAlive(pid)), 5000, 'every parent process gone');
    },
  };
}

/** Run ids the parent said it spawned (`spawned <id>` lines). */
export function spawnedIds(text: string): string[] {
  return [...text.matchAll(/^spawned (\S+)$/gm)].map((m) => m[1] as string);
}

/** `id=status` pairs of the last `summary:` line. */
export function summaryOf(text: string): Map<string, string> {
  const line = [...text.matchAll(/^summary: (.*)$/gm)].at(-1)?.[1] ?? '';
  return new Map(
    line
      .split(' ')
      .filter((pair) => pair.includes('='))
      .map((pair) => pair.split('=') as [string, string]),
  );
}

/** Turns as they started and ended, in stream order: a turn must end before the next starts. */
export function assertTurnsNeverOverlap(events: readonly NumberedChatEvent[]): void {
  let open: number | undefined;
  for (const event of events) {
    if (event.type === 'message' || event.type === 'injected') {
      if (open !== undefined) throw new Error(`turn ${event.turn} started while turn ${open} ran`);
      open = event.turn;
    } else if (event.type === 'turn_ended') {
      if (open !== event.turn) throw new Error(`turn ${event.turn} ended but turn ${open} was running`);
      open = undefined;
    }
  }
}
