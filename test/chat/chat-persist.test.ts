import { describe, expect, it } from 'vitest';
import { TURN_TEXT_MAX_CHARS } from '../../src/chat/chat.js';
import type { NumberedChatEvent } from '../../src/chat/chat-event.js';
import { type ChatGateway, ChatHost } from '../../src/chat/chat-host.js';
import type { ParentRuntimes } from '../../src/chat/parent-session.js';
import { FakeClock } from '../../src/clock/fake-clock.js';
import type { AgentDef } from '../../src/core/agent-def.js';
import type { DeliveredEvent, Sink } from '../../src/gateway/relay.js';
import type { AcpRuntime, SessionSink } from '../../src/runners/acp-runtime.js';
import { MemoryStore } from '../../src/store/memory-store.js';

/**
 * Issue 12 §4 in-process, on the fake clock: what a chat writes to the store, its bounds (turns kept,
 * chats open), and a chat restored from the store (its session loaded, an event it had injected
 * acknowledged rather than injected again).
 */

/** A parent agent in memory: answers `echo: <prompt>`; records prompts and loads. */
class FakeRuntimes implements ParentRuntimes {
  prompts: string[] = [];
  loads: string[] = [];
  loadSession = false;
  /** The next prompt hangs until `session/cancel` (a parent that never takes the turn). */
  hangNext = false;
  cancels: string[] = [];
  private sessions = 0;

  async openHosted(): Promise<AcpRuntime> {
    let sink: SessionSink | undefined;
    let release: (() => void) | undefined;
    const runtime = {
      pid: 4242,
      startTime: 1,
      isDown: false,
      supportsHttpMcp: true,
      supportsLoadSession: this.loadSession,
      newSession: async (_params: unknown, s: SessionSink) => {
        sink = s;
        return { sessionId: `session-${++this.sessions}` };
      },
      loadSession: async (params: { sessionId: string }, s: SessionSink) => {
        sink = s;
        this.loads.push(params.sessionId);
      },
      prompt: async (sessionId: string, text: string) => {
        this.prompts.push(text);
        if (this.hangNext) {
          this.hangNext = false;
          return new Promise((resolve) => {
            release = () => resolve({ stopReason: 'cancelled' });
          });
        }
        sink?.onUpdate({
          sessionUpdate: 'agent_message_chunk',
          content: { type: 'text', text: `echo: ${text}` },
        } as never);
        void sessionId;
        return { stopReason: 'end_turn' };
      },
      cancel: async (sessionId: string) => {
        this.cancels.push(sessionId);
        release?.();
        release = undefined;
      },
      onDeath: () => () => undefined,
      deathReason: async () => undefined,
      reasonFor: async (error: unknown) => String(error),
    };
    return runtime as unknown as AcpRuntime;
  }

  async closeHosted(): Promise<void> {}
}

const SIM: AgentDef = { name: 'sim', runner: 'acp', command: ['sim'] } as unknown as AgentDef;

function world(store = new MemoryStore(), options: { turnsKept?: number; maxChats?: number } = {}) {
  const clock = new FakeClock();
  const runtimes = new FakeRuntimes();
  const sinks = new Map<string, Sink>();
  const gateway = {
    attachSink: (parent: string, sink: Sink) => {
      sinks.set(parent, sink);
      return () => sinks.delete(parent);
    },
    list: () => ({ runs: [] }),
    cancel: () => ({ ok: true }),
  } as unknown as ChatGateway;
  const host = new ChatHost({
    clock,
    gateway,
    runtimes,
    agents: new Map([['sim', SIM]]),
    parentAgent: 'sim',
    defaultCwd: '/work',
    mcpServersFor: () => [],
    permissionPolicy: 'allow',
    attemptTimeoutMs: 60_000,
    store,
    ...options,
  });
  /** Lets the chat's pump run (its timers are on the fake clock) until `promise` settles. */
  const run = async <T>(promise: Promise<T>): Promise<T> => {
    let done = false;
    void promise.finally(() => {
      done = true;
    });
    for (let i = 0; i < 100 && !done; i++) await clock.advance(10);
    return promise;
  };
  return { clock, runtimes, sinks, host, store, run };
}

const event = (id: string, chatId: string): DeliveredEvent => ({
  id,
  parent: `chat:${chatId}`,
  kind: 'completion',
  run_ids: [`run-${id}`],
  text: `[Subagent completion event] id=run-${id}`,
});

describe('a hosted chat in the store', () => {
  it('writes its session and turns, keeps only chat.turns_kept of them, and cuts long texts', async () => {
    const { host, store, run } = world(new MemoryStore(), { turnsKept: 3 });
    const chat = await run(host.create());
    expect(store.chats()).toMatchObject([{ id: chat.id, agent: 'sim', sessionId: 'session-1', turns: [] }]);
    for (let i = 1; i <= 5; i++) await run(chat.send(`message ${i}`));
    const [record] = store.chats();
    expect(record?.turnCount).toBe(5);
    expect(record?.turns.map((t) => [t.turn, t.text, t.answer, t.stopReason])).toEqual([
      [3, 'message 3', 'echo: message 3', 'end_turn'],
      [4, 'message 4', 'echo: message 4', 'end_turn'],
      [5, 'message 5', 'echo: message 5', 'end_turn'],
    ]);
    await run(chat.send('x'.repeat(10_000)));
    const long = store.chats()[0]?.turns.at(-1);
    expect(long?.text.length).toBeLessThan(TURN_TEXT_MAX_CHARS + 20);
    expect(long?.text).toMatch(/\[…cut\]$/);
    expect(long?.answer.length).toBeLessThan(TURN_TEXT_MAX_CHARS + 20);
    expect(store.chats()[0]?.turns).toHaveLength(3);
  });

  it('keeps at most chat.max_chats open: a new one closes the least recently active', async () => {
    const { host, store, run, clock } = world(new MemoryStore(), { maxChats: 2 });
    const a = await run(host.create());
    await clock.advance(1000);
    const b = await run(host.create());
    await clock.advance(1000);
    await run(a.send('still here')); // a is now more recently active than b
    const closed: NumberedChatEvent[] = [];
    b.subscribe((e) => closed.push(e));
    await clock.advance(1000);
    const c = await run(host.create());
    expect(host.list().map((chat) => chat.id)).toEqual([a.id, c.id]);
    expect(store.chats().map((r) => r.id)).toEqual([a.id, c.id]);
    expect(b.isClosed).toBe(true);
    expect(closed.at(-1)).toMatchObject({ type: 'closed', reason: expect.stringMatching(/chat\.max_chats/) });
  });

  it('continues a chat from the store: turns told again, session loaded, an injected event not injected twice', async () => {
    const store = new MemoryStore();
    const first = world(store);
    first.runtimes.loadSession = true;
    const chat = await first.run(first.host.create());
    await first.run(chat.send('hello'));
    await first.run(first.sinks.get(chat.key)?.deliver(event('e1', chat.id)) as Promise<void>);
    expect(first.runtimes.prompts).toEqual(['hello', '[Subagent completion event] id=run-e1']);
    // The daemon stops: the chat is suspended, not forgotten.
    await first.host.suspendAll();
    expect(store.chats().map((r) => [r.id, r.injected, r.turnCount])).toEqual([[chat.id, ['e1'], 2]]);

    const second = world(store);
    second.runtimes.loadSession = true;
    second.host.restore();
    const back = second.host.get(chat.id);
    if (!back) throw new Error('the chat was not restored');
    const seen: NumberedChatEvent[] = [];
    back.subscribe((e) => seen.push(e));
    await second.clock.advance(100);
    expect(second.runtimes.loads).toEqual(['session-1']);
    expect(seen.filter((e) => e.type === 'message').map((e) => e.text)).toEqual(['hello']);
    expect(seen.filter((e) => e.type === 'injected')).toMatchObject([
      {
        turn: 2,
        events: [
          { id: 'e1', kind: 'completion', run_ids: ['run-e1'], text: expect.stringMatching(/id=run-e1/) },
        ],
      },
    ]);
    expect(seen.some((e) => e.type === 'notice' && /reloaded the conversation/.test(e.text))).toBe(true);
    // e1 again (the relay settled it too late, say): acknowledged, no turn; e2 is injected once.
    const sink = second.sinks.get(chat.key);
    await second.run(sink?.deliver(event('e1', chat.id)) as Promise<void>);
    await second.run(sink?.deliver(event('e2', chat.id)) as Promise<void>);
    await second.run(sink?.deliver(event('e2', chat.id)) as Promise<void>);
    expect(second.runtimes.prompts).toEqual(['[Subagent completion event] id=run-e2']);
    expect(back.view()).toMatchObject({ turns: 3, session_id: 'session-1' });
    await second.host.close(chat.id);
    expect(store.chats()).toEqual([]);
  });

  it('event ids keep rising across restarts, so a client resuming with its last id misses nothing', async () => {
    const store = new MemoryStore();
    let lastSeen = 0;
    const lives = [world(store), world(store), world(store)];
    let id: string | undefined;
    for (const [i, life] of lives.entries()) {
      if (i === 0) id = (await life.run(life.host.create())).id;
      else life.host.restore();
      const chat = life.host.get(id as string);
      if (!chat) throw new Error('the chat was not restored');
      const seen: NumberedChatEvent[] = [];
      // The client reconnects with the last id it saw before the restart.
      chat.subscribe((e) => seen.push(e), lastSeen);
      await life.run(chat.send(`message in life ${i}`));
      // Everything this life said is newer than anything an earlier life said...
      expect(seen.length).toBeGreaterThan(0);
      expect(seen[0]!.seq).toBeGreaterThan(lastSeen);
      // ...including this life's own words after the reconnect.
      expect(seen.some((e) => e.type === 'message' && e.text === `message in life ${i}`)).toBe(true);
      lastSeen = seen.at(-1)!.seq;
      await life.host.suspendAll();
    }
  });

  it('an injection the parent never takes: at the bound it gets session/cancel, the chat is free, the event is offered again', async () => {
    const { host, runtimes, sinks, clock, run } = world();
    const chat = await run(host.create());
    const seen: NumberedChatEvent[] = [];
    chat.subscribe((e) => seen.push(e));
    runtimes.hangNext = true;
    const first = sinks.get(chat.key)?.deliver(event('e1', chat.id)) as Promise<void>;
    const outcome = first.then(
      () => 'delivered',
      (error: Error) => error.message,
    );
    await clock.advance(100);
    expect(runtimes.prompts).toEqual(['[Subagent completion event] id=run-e1']);
    // The attempt's bound (the world's 60 s) passes with the turn still unanswered.
    await clock.advance(60_000);
    expect(runtimes.cancels).toEqual(['session-1']);
    expect(await outcome).toMatch(/not (injected|taken)/);
    // The chat is free: a person's message runs at once.
    const answered = await run(chat.send('are you there?'));
    expect(answered).toMatchObject({ stop_reason: 'end_turn' });
    expect(seen.some((e) => e.type === 'notice' && /did not take/.test(e.text))).toBe(true);
    // The event was not taken, so it is not remembered as injected: the relay's next attempt injects it.
    await run(sinks.get(chat.key)?.deliver(event('e1', chat.id)) as Promise<void>);
    expect(runtimes.prompts.filter((p) => p.includes('id=run-e1'))).toHaveLength(2);
  });

  it('a chat whose agent is gone is forgotten at restore, with a line in the log', async () => {
    const store = new MemoryStore();
    store.saveChat({
      id: 'old',
      agent: 'removed',
      cwd: '/w',
      createdAt: 1,
      activeAt: 1,
      turnCount: 0,
      turns: [],
      injected: [],
    });
    const lines: string[] = [];
    const w = world(store);
    const host = new ChatHost({
      ...(w.host as unknown as { options: ConstructorParameters<typeof ChatHost>[0] }).options,
      log: (line) => lines.push(line),
    });
    host.restore();
    expect(host.list()).toEqual([]);
    expect(store.chats()).toEqual([]);
    expect(lines).toEqual([expect.stringMatching(/chat old cannot continue: agent "removed" is gone/)]);
  });
});
