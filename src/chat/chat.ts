import type * as acp from '@agentclientprotocol/sdk';
import type { AgentDef } from '../core/agent-def.js';
import type { Clock, TimerHandle } from '../core/clock.js';
import type { DeliveredEvent, Sink } from '../gateway/sink.js';
import { answerPermission, type PermissionPolicy } from '../runners/acp-permission.js';
import type { AcpRuntime, SessionSink } from '../runners/acp-runtime.js';
import type { McpServerRef } from '../runners/runner.js';
import type { ChatRecord, ChatTurnRecord } from '../store/chat-record.js';
import type { ChatState, ChatView, InjectedEvent, NumberedChatEvent, TurnOutcome } from './chat-event.js';
import { ChatLog } from './chat-log.js';
import { type HeldEvent, HeldEvents } from './held-events.js';
import { type OpenSession, type ParentRuntimes, ParentSession } from './parent-session.js';
import { TurnQueue } from './turn-queue.js';

/**
 * One hosted chat (DESIGN §6, hosted parents): a person talks to a parent agent Crew runs, and the
 * completion events of the runs that parent spawned are injected into the same session as prompt turns.
 *
 * - One turn at a time: a person's message and an injection never run at once; each waits its turn in
 *   arrival order ({@link TurnQueue}), and every completion waiting when an injection starts shares it.
 * - Delivery (the chat is the relay's {@link Sink} for `chat:<id>`): `deliver` resolves once the parent
 *   has accepted the injection turn (its first update or its answer), rejects when the turn could not be
 *   sent, and withdraws the event when the attempt's bound (`attemptTimeoutMs`, the relay's own) runs
 *   out first, so an event the relay gives up on is never injected later. An injection turn the parent
 *   has not taken by that bound gets `session/cancel` and its events stay owed, so the chat is free
 *   again (issue 29). Event ids are remembered:
 *   an event handed over again after it was injected is acknowledged, not injected twice.
 * - The parent's process dying ends the turn in flight with the reason; a fresh runtime starts (loading
 *   the session when the agent can) and the chat goes on.
 * - Persisted (`persist`, issue 12 §4): its session id, its last `turnsKept` turns and the events it
 *   injected are written at each turn's start and end and when an injection is accepted (before the relay
 *   settles it), so a chat `restored` after a restart shows its turns again, continues its session, and
 *   acknowledges rather than injects an event it had already injected.
 */

export interface ChatOptions {
  id: string;
  clock: Clock;
  agent: AgentDef;
  cwd: string;
  mcpServers: McpServerRef[];
  runtimes: ParentRuntimes;
  permissionPolicy: PermissionPolicy;
  /** One delivery attempt's bound: a held event is withdrawn after this (`CREW_INJECTION_TIMEOUT`). */
  attemptTimeoutMs: number;
  /** How long an injection waits for more completions to join it. @default 50 */
  coalesceMs?: number;
  /** Events kept for late subscribers. @default 1000 */
  backlog?: number;
  onRuntimeStarted?(runtime: AcpRuntime): void;
  onRuntimeEnded?(runtime: AcpRuntime): void;
  /** A chat of an earlier run of Crew to continue (its turns are replayed to subscribers). */
  restored?: ChatRecord;
  /** Writes the chat's state (the store); nothing after the chat closed. */
  persist?(record: ChatRecord): void;
  /** Turns kept in the persisted record (`chat.turns_kept`). @default 50 */
  turnsKept?: number;
}

/** Event numbers one life of a chat may use (a life that emitted more would overlap the next). */
export const CHAT_SEQ_BLOCK = 1_000_000_000;

/** A persisted turn's text and answer are cut to this many characters each. */
export const TURN_TEXT_MAX_CHARS = 2000;
/** Injected event ids persisted (the most recent): enough for every event a restart can hand over again. */
export const PERSISTED_INJECTED_IDS = 1000;

interface PersonItem {
  at: number;
  text: string;
  done: (outcome: TurnOutcome) => void;
}

type TurnResult =
  | { kind: 'answered'; stopReason: acp.StopReason }
  | { kind: 'error'; message: string }
  | { kind: 'died'; reason: string };

/** Eager restarts after deaths within {@link RESTART_WINDOW_MS}; beyond that, the next turn restarts. */
const MAX_EAGER_RESTARTS = 3;
const RESTART_WINDOW_MS = 60_000;

export class Chat implements Sink {
  readonly id: string;
  /** The parent key of its runs and the key of its runtime. */
  readonly key: string;
  readonly agent: AgentDef;
  readonly cwd: string;
  readonly createdAt: number;
  private readonly clock: Clock;
  private readonly log: ChatLog;
  private readonly parent: ParentSession;
  private readonly queue = new TurnQueue<PersonItem, HeldEvent>();
  private readonly held: HeldEvents;
  private readonly coalesceMs: number;
  private turns = 0;
  /** The turn in flight: its number and, for an injection, what to do once the parent accepts it. */
  private turn: { n: number; onAccepted?: () => void } | undefined;
  private pumpTimer: TimerHandle | undefined;
  private pumpAt = 0;
  private pumping = false;
  /** A turn is being prepared or runs (its items are out of the queue). */
  private active = false;
  private closed = false;
  private readonly restarts: number[] = [];
  /** The last turns, as persisted. */
  private readonly turnRecords: ChatTurnRecord[] = [];
  private activeAt: number;
  /** This is the chat's `lives`-th opening (see {@link ChatRecord.lives}). */
  private readonly lives: number;

  constructor(private readonly options: ChatOptions) {
    this.id = options.id;
    this.key = `chat:${options.id}`;
    this.agent = options.agent;
    this.cwd = options.cwd;
    this.clock = options.clock;
    const restored = options.restored;
    this.createdAt = restored?.createdAt ?? options.clock.now();
    this.activeAt = restored?.activeAt ?? this.createdAt;
    this.coalesceMs = options.coalesceMs ?? 50;
    // Each life numbers its events in a block of its own, so ids keep rising across restarts and a client
    // that resumes with the last id it saw before a restart misses nothing (issue 29).
    this.lives = (restored?.lives ?? 1) + (restored ? 1 : 0);
    this.log = new ChatLog(() => this.clock.now(), options.backlog, (this.lives - 1) * CHAT_SEQ_BLOCK);
    this.held = new HeldEvents(options.clock, options.attemptTimeoutMs, (held) =>
      this.queue.removeInjection(held.id),
    );
    if (restored) this.replay(restored);
    this.parent = new ParentSession({
      key: this.key,
      label: `parent runtime of chat ${options.id} (agent "${options.agent.name}")`,
      agent: options.agent,
      cwd: options.cwd,
      mcpServers: options.mcpServers,
      runtimes: options.runtimes,
      sink: this.sessionSink(),
      notice: (text) => this.log.emit({ type: 'notice', text }),
      onStarted: (runtime) => {
        options.onRuntimeStarted?.(runtime);
        this.save(); // the session id, to load after a restart
      },
      onEnded: (runtime, reason) => this.onRuntimeEnded(runtime, reason),
      ...(restored?.sessionId !== undefined ? { sessionId: restored.sessionId } : {}),
    });
    // The new life is written at once: a restart before its first turn must not reuse its block.
    if (restored) this.save();
  }

  /** The chat as the store keeps it. */
  record(): ChatRecord {
    const sessionId = this.parent.current?.sessionId ?? this.options.restored?.sessionId;
    return {
      id: this.id,
      agent: this.agent.name,
      cwd: this.cwd,
      createdAt: this.createdAt,
      activeAt: this.activeAt,
      ...(sessionId !== undefined ? { sessionId } : {}),
      turnCount: this.turns,
      turns: this.turnRecords.map((turn) => ({ ...turn })),
      injected: this.held.recentInjected(PERSISTED_INJECTED_IDS),
      lives: this.lives,
    };
  }

  /** When a turn last began or ended. */
  get lastActiveAt(): number {
    return this.activeAt;
  }

  /** Starts the parent's runtime and session; rejects with the reason when it cannot. */
  async start(): Promise<void> {
    await this.parent.ensure();
  }

  get state(): ChatState {
    if (this.closed) return 'closed';
    if (this.active) return 'busy';
    return this.parent.current ? 'idle' : 'starting';
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** The parent runtime's pid while it runs. */
  get pid(): number | undefined {
    return this.parent.current?.runtime.pid;
  }

  view(): ChatView {
    const current = this.parent.current;
    return {
      id: this.id,
      parent: this.key,
      agent: this.agent.name,
      cwd: this.cwd,
      state: this.state,
      ...(current ? { pid: current.runtime.pid, session_id: current.sessionId } : {}),
      created_at: new Date(this.createdAt).toISOString(),
      turns: this.turns,
      pending_events: this.held.size,
      queued_messages: this.queue.waitingPeople,
    };
  }

  /**
   * A person's message: it runs as the next turn once the ones before it (and injections that arrived
   * earlier) are done. Resolves when its turn ends.
   */
  send(text: string): Promise<TurnOutcome> {
    if (this.closed) return Promise.resolve({ turn: 0, error: 'the chat is closed' });
    return new Promise((done) => {
      this.queue.addPerson({ at: this.clock.now(), text, done });
      this.schedulePump(0);
    });
  }

  /** Cancels the turn in flight (`session/cancel`); false when none runs. */
  interrupt(): boolean {
    const current = this.parent.current;
    if (!this.turn || !current) return false;
    void current.runtime.cancel(current.sessionId);
    return true;
  }

  /** The relay's push: see the class comment. */
  deliver(event: DeliveredEvent): Promise<void> {
    if (this.closed) return Promise.reject(new Error(`chat ${this.id} is closed`));
    const { done, added } = this.held.attempt(event);
    if (added) {
      this.queue.addInjection(added);
      this.schedulePump(0);
    }
    return done;
  }

  /** Events from `sinceSeq` on, then live ones until unsubscribed or the chat closes. */
  subscribe(listener: (event: NumberedChatEvent) => void, sinceSeq?: number): () => void {
    return this.log.subscribe(listener, sinceSeq);
  }

  /** Ends the chat: waiting messages and events are let go, the turn cancelled, the runtime ended. */
  async close(reason = 'closed'): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.pumpTimer !== undefined) this.clock.clearTimer(this.pumpTimer);
    this.pumpTimer = undefined;
    const { people } = this.queue.drain();
    for (const person of people) person.done({ turn: 0, error: 'the chat was closed before this turn' });
    this.held.settleAll(new Error(`chat ${this.id} was closed`));
    const current = this.parent.current;
    if (this.turn && current) await current.runtime.cancel(current.sessionId);
    await this.parent.close();
    this.log.emit({ type: 'closed', reason });
  }

  // ── turns ──────────────────────────────────────────────────────────────────────────────────────

  /** Runs the pump in `delayMs` (or sooner, when it is due sooner already). */
  private schedulePump(delayMs: number): void {
    if (this.closed || this.pumping) return;
    const at = this.clock.now() + delayMs;
    if (this.pumpTimer !== undefined) {
      if (this.pumpAt <= at) return;
      this.clock.clearTimer(this.pumpTimer);
    }
    this.pumpAt = at;
    this.pumpTimer = this.clock.setTimer(() => {
      this.pumpTimer = undefined;
      void this.pump();
    }, delayMs);
  }

  /** Runs turns while any are due; at most one pump runs (one turn per session at a time). */
  private async pump(): Promise<void> {
    if (this.pumping || this.closed) return;
    this.pumping = true;
    try {
      for (;;) {
        if (this.closed) return;
        const next = this.queue.next(this.clock.now(), this.coalesceMs);
        if (next.kind === 'none') return;
        if (next.kind === 'wait') {
          this.pumping = false;
          this.schedulePump(next.delayMs);
          return;
        }
        this.active = true;
        try {
          if (next.kind === 'person') await this.personTurn(next.item);
          else await this.injectionTurn(next.items);
        } finally {
          this.active = false;
        }
      }
    } finally {
      this.pumping = false;
    }
  }

  private async personTurn(item: PersonItem): Promise<void> {
    let open: OpenSession;
    try {
      open = await this.parent.ensure();
    } catch (error) {
      const n = ++this.turns;
      const message = `the parent agent could not start: ${messageOf(error)}`;
      this.log.emit({ type: 'message', turn: n, text: item.text });
      this.log.emit({ type: 'turn_ended', turn: n, error: message });
      item.done({ turn: n, error: message });
      return;
    }
    const n = ++this.turns;
    this.turn = { n };
    this.log.emit({ type: 'message', turn: n, text: item.text });
    this.beginTurn({ turn: n, kind: 'message', text: cut(item.text), answer: '', at: this.clock.now() });
    const result = await this.prompt(open, item.text);
    this.turn = undefined;
    const outcome = this.endTurn(n, result);
    item.done(outcome);
  }

  private async injectionTurn(items: HeldEvent[]): Promise<void> {
    let open: OpenSession;
    try {
      open = await this.parent.ensure();
    } catch (error) {
      const reason = new Error(`the parent agent could not start: ${messageOf(error)}`);
      for (const held of items) this.held.settle(held, reason);
      return;
    }
    // Only what someone still waits for: an event whose attempts timed out meanwhile was withdrawn.
    const sending = this.held.takeForSending(items);
    if (sending.length === 0 || this.closed) {
      for (const held of sending) this.held.settle(held, new Error(`chat ${this.id} was closed`));
      return;
    }
    const n = ++this.turns;
    let accepted = false;
    /** Cancelled at the attempt's bound (below): an update that comes after is no acceptance. */
    let timedOut = false;
    const accept = () => {
      if (accepted || timedOut) return;
      accepted = true;
      for (const held of sending) this.held.settle(held);
      // Written before the relay settles the events: a restart in between acknowledges them, never
      // injects them again.
      this.save();
    };
    this.turn = { n, onAccepted: accept };
    this.log.emit({ type: 'injected', turn: n, events: sending.map((held) => injectedOf(held.event)) });
    this.beginTurn(
      {
        turn: n,
        kind: 'injection',
        text: cut(sending.map((held) => held.event.text).join('\n\n')),
        events: sending.map((held) => {
          const { text: _text, ...shape } = injectedOf(held.event);
          return shape;
        }),
        answer: '',
        at: this.clock.now(),
      },
      false,
    );
    // A parent that does not take the turn within the attempt's bound would hold the chat for good: it
    // gets session/cancel, the events stay owed (the relay offers them again), and the chat is free.
    const bound = this.options.attemptTimeoutMs;
    const timer = this.clock.setTimer(() => {
      if (accepted || this.turn?.n !== n) return;
      timedOut = true;
      this.log.emit({
        type: 'notice',
        text: `the parent did not take the completion events within ${Math.round(bound / 1000)} s; its turn was cancelled and they will be offered again`,
      });
      void open.runtime.cancel(open.sessionId).catch(() => undefined);
    }, bound);
    const result = await this.prompt(open, sending.map((held) => held.event.text).join('\n\n'));
    this.clock.clearTimer(timer);
    this.turn = undefined;
    if (timedOut && !accepted) {
      for (const held of sending)
        this.held.settle(held, new Error(`event ${held.id} was not taken by the parent within ${bound} ms`));
    } else if (result.kind === 'answered') accept();
    else if (!accepted) {
      const reason = result.kind === 'died' ? result.reason : result.message;
      for (const held of sending) this.held.settle(held, new Error(`the injection turn failed: ${reason}`));
    }
    this.endTurn(n, result);
  }

  /** One `session/prompt`, raced against the runtime's death. */
  private async prompt(open: OpenSession, text: string): Promise<TurnResult> {
    const { runtime, sessionId } = open;
    let unsubscribe = () => {};
    const died = new Promise<TurnResult>((resolve) => {
      unsubscribe = runtime.onDeath((reason) => resolve({ kind: 'died', reason }));
    });
    const answered = runtime.prompt(sessionId, text).then(
      (response): TurnResult => ({ kind: 'answered', stopReason: response.stopReason }),
      async (error: unknown): Promise<TurnResult> => {
        const reason = await runtime.deathReason();
        return reason !== undefined ? { kind: 'died', reason } : { kind: 'error', message: messageOf(error) };
      },
    );
    try {
      return await Promise.race([answered, died]);
    } finally {
      unsubscribe();
    }
  }

  private endTurn(n: number, result: TurnResult): TurnOutcome {
    const outcome: TurnOutcome =
      result.kind === 'answered'
        ? { turn: n, stop_reason: result.stopReason }
        : {
            turn: n,
            error:
              result.kind === 'died' ? `the parent agent's process ended: ${result.reason}` : result.message,
          };
    this.log.emit({ type: 'turn_ended', ...outcome });
    const record = this.turnRecords.find((turn) => turn.turn === n);
    if (record) {
      record.endedAt = this.clock.now();
      if ('stop_reason' in outcome) record.stopReason = outcome.stop_reason;
      else record.error = outcome.error;
    }
    this.activeAt = this.clock.now();
    this.save();
    return outcome;
  }

  /** A turn begins: kept (the oldest beyond `turnsKept` let go), and written unless `save` is false. */
  private beginTurn(turn: ChatTurnRecord, save = true): void {
    this.turnRecords.push(turn);
    const kept = this.options.turnsKept ?? 50;
    if (this.turnRecords.length > kept) this.turnRecords.splice(0, this.turnRecords.length - kept);
    this.activeAt = turn.at;
    if (save) this.save();
  }

  private save(): void {
    if (this.closed || !this.options.persist) return;
    try {
      this.options.persist(this.record());
    } catch (error) {
      // A store that refuses writes (a full disk) must not break the conversation; it is written again at
      // the next turn's boundary.
      this.log.emit({ type: 'notice', text: `could not save the chat: ${messageOf(error)}` });
    }
  }

  /** A restored chat: its kept turns are told again, then that it continues. */
  private replay(record: ChatRecord): void {
    this.turns = record.turnCount;
    this.held.seedInjected(record.injected);
    for (const turn of record.turns) {
      this.turnRecords.push({ ...turn });
      if (turn.kind === 'message') this.log.emit({ type: 'message', turn: turn.turn, text: turn.text });
      else {
        // The events' texts were persisted joined (and cut): the first carries them.
        const events = (turn.events ?? []).map((event, i) => ({ ...event, text: i === 0 ? turn.text : '' }));
        this.log.emit({ type: 'injected', turn: turn.turn, events });
      }
      if (turn.answer !== '') this.log.emit({ type: 'text', turn: turn.turn, text: turn.answer });
      if (turn.stopReason !== undefined)
        this.log.emit({ type: 'turn_ended', turn: turn.turn, stop_reason: turn.stopReason });
      else
        this.log.emit({
          type: 'turn_ended',
          turn: turn.turn,
          error: turn.error ?? 'Crew stopped during this turn',
        });
    }
    this.log.emit({
      type: 'notice',
      text: `Crew restarted; this chat continues (${record.turnCount} turns so far, the last ${record.turns.length} shown)`,
    });
  }

  // ── the parent's traffic and process ───────────────────────────────────────────────────────────

  private sessionSink(): SessionSink {
    return {
      onUpdate: (update) => {
        if (this.parent.isLoading) return;
        this.turn?.onAccepted?.();
        if (update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text') {
          this.log.emit({ type: 'text', turn: this.turn?.n ?? 0, text: update.content.text });
          const record = this.turn ? this.turnRecords.find((turn) => turn.turn === this.turn?.n) : undefined;
          if (record && record.answer.length < TURN_TEXT_MAX_CHARS)
            record.answer = cut(record.answer + update.content.text);
        }
      },
      onPermission: (request) =>
        this.closed
          ? { outcome: { outcome: 'cancelled' } }
          : answerPermission(request.options, this.options.permissionPolicy),
    };
  }

  private onRuntimeEnded(runtime: AcpRuntime, reason: string): void {
    this.options.onRuntimeEnded?.(runtime);
    if (this.closed) return;
    this.log.emit({ type: 'notice', text: `the parent agent's process ended: ${reason}` });
    // A fresh parent at once, so the failed children's events have somewhere to go; a parent that keeps
    // dying is restarted only by the next turn.
    const now = this.clock.now();
    while (this.restarts.length > 0 && (this.restarts[0] as number) <= now - RESTART_WINDOW_MS)
      this.restarts.shift();
    if (this.restarts.length >= MAX_EAGER_RESTARTS) return;
    this.restarts.push(now);
    this.parent.ensure().then(
      () => this.schedulePump(0),
      (error: unknown) => {
        if (!this.closed)
          this.log.emit({ type: 'notice', text: `the parent agent could not restart: ${messageOf(error)}` });
      },
    );
  }
}

function injectedOf(event: DeliveredEvent): InjectedEvent {
  return {
    id: event.id,
    kind: event.kind,
    run_ids: event.run_ids,
    ...(event.batch_id !== undefined ? { batch_id: event.batch_id } : {}),
    text: event.text,
  };
}

/** Cuts a persisted text at {@link TURN_TEXT_MAX_CHARS}, saying so. */
function cut(text: string): string {
  return text.length <= TURN_TEXT_MAX_CHARS ? text : `${text.slice(0, TURN_TEXT_MAX_CHARS)} […cut]`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
