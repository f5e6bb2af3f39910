import { randomBytes } from 'node:crypto';
import type { AgentDef } from '../core/agent-def.js';
import type { Clock } from '../core/clock.js';
import { CrewError, refuse } from '../core/errors.js';
import { LIVE_STATUSES, type ParentKey } from '../core/types.js';
import type { Gateway } from '../gateway/gateway.js';
import { fillArgv } from '../runners/acp-argv.js';
import { sameArgv } from '../runners/acp-hosted-runtimes.js';
import type { PermissionPolicy } from '../runners/acp-permission.js';
import type { AcpRuntime } from '../runners/acp-runtime.js';
import type { McpServerRef } from '../runners/runner.js';
import type { ChatRecord } from '../store/chat-record.js';
import type { Store } from '../store/store.js';
import { Chat } from './chat.js';
import type { ParentRuntimes } from './parent-session.js';

/**
 * Hosted parents (DESIGN §6): Crew runs the configured parent agent (`chat.parent_agent`) itself, one
 * runtime and session per chat, with Crew's MCP endpoint and a chat-scoped token in `session/new`, so the
 * parent's spawns are attributed to `chat:<id>`. Each chat is the relay's sink for that parent key, and
 * the gateway asks {@link ChatHost.runtimeKeyFor} where an eligible child should run: in the chat's own
 * runtime when it uses the same agent command.
 *
 * Chats are persisted (issue 12 §4): {@link ChatHost.restore} continues the open chats of the last run of
 * Crew, whose pending completion events the relay then hands over again. Open chats are bounded
 * (`chat.max_chats`): a new chat beyond the bound closes the least recently active one. When the daemon
 * stops ({@link ChatHost.suspendAll}) chats end their runtimes but stay in the store, and their runs are
 * left to the gateway's own shutdown.
 */

/** What the host needs of the gateway: delivery, and the chat's runs when it closes. */
export type ChatGateway = Pick<Gateway, 'attachSink' | 'list' | 'cancel'>;

export interface ChatHostOptions {
  clock: Clock;
  gateway: ChatGateway;
  /** The ACP runner (hosted runtimes). */
  runtimes: ParentRuntimes;
  agents: ReadonlyMap<string, AgentDef>;
  /** The agents of a chat working in `cwd`, when they depend on it (as the gateway's `agentsAt`). */
  agentsAt?: (cwd: string) => ReadonlyMap<string, AgentDef>;
  /** `chat.parent_agent`: the agent a chat hosts unless it names another. */
  parentAgent: string;
  /** Where a chat runs when it names no directory. */
  defaultCwd: string;
  /** Crew's MCP endpoint with a chat-scoped token (and the chat's directory) for a chat's session. */
  mcpServersFor(chatId: string, cwd: string): McpServerRef[];
  permissionPolicy: PermissionPolicy;
  /** One injection attempt's bound (`CREW_INJECTION_TIMEOUT` clamped to the delivery timeout). */
  attemptTimeoutMs: number;
  /** How long to wait for a closing chat's runs to end after cancelling them. @default 5000 */
  closeGraceMs?: number;
  /** @default 50 */
  coalesceMs?: number;
  /** The parent runtime of a chat started or ended (the host sampler counts its session). */
  onRuntimeStarted?(chatId: string, runtime: AcpRuntime): void;
  onRuntimeEnded?(chatId: string, runtime: AcpRuntime): void;
  /** A chat closed (its token can go). */
  onClosed?(chatId: string): void;
  /** Where open chats are kept across restarts. */
  store: Pick<Store, 'chats' | 'saveChat' | 'deleteChat'>;
  /** `chat.max_chats`: open chats at most. @default 16 */
  maxChats?: number;
  /** `chat.turns_kept`: turns kept per chat. @default 50 */
  turnsKept?: number;
  /** Says what happened to a chat that could not be continued. */
  log?(line: string): void;
}

export interface CreateChatOptions {
  /** Absolute working directory of the parent (and default of its runs). */
  cwd?: string;
  /** An ACP agent instead of `chat.parent_agent`. */
  agent?: string;
}

const POLL_MS = 50;

export class ChatHost {
  private readonly chats = new Map<string, { chat: Chat; detach: () => void }>();
  private closed = false;

  constructor(private readonly options: ChatHostOptions) {}

  /**
   * Starts a chat: its parent's runtime and session. Refuses an unknown or non-ACP agent; fails with
   * `not_running` and the reason when the parent cannot start.
   */
  async create(request: CreateChatOptions = {}): Promise<Chat> {
    if (this.closed) throw new CrewError(refuse('not_running', 'the gateway is shutting down; no new chats'));
    const name = request.agent ?? this.options.parentAgent;
    const cwd = request.cwd ?? this.options.defaultCwd;
    const agent = (this.options.agentsAt?.(cwd) ?? this.options.agents).get(name);
    if (!agent) {
      throw new CrewError(
        refuse(
          'unknown_agent',
          `no agent "${name}" to host as a chat's parent; list agents with crew agents`,
          {
            path: 'agent',
          },
        ),
      );
    }
    if (agent.runner !== 'acp') {
      throw new CrewError(
        refuse(
          'invalid_argument',
          `agent "${name}" is not an ACP agent, so Crew cannot host it as a parent`,
          {
            path: 'agent',
          },
        ),
      );
    }
    await this.makeRoom();
    const chat = this.open(randomBytes(6).toString('hex'), agent, cwd);
    try {
      await chat.start();
    } catch (error) {
      await this.close(chat.id);
      throw new CrewError(
        refuse(
          'not_running',
          `could not start agent "${name}" as the chat's parent: ${error instanceof Error ? error.message : String(error)}`,
        ),
      );
    }
    return chat;
  }

  /**
   * Continues the chats the store holds (a restart): each is back, attached to the relay (which hands
   * over its pending events) and its parent starting, loading the old session when the agent can. A chat
   * whose agent is gone or no longer ACP is forgotten, and said so.
   */
  restore(): void {
    for (const record of this.options.store.chats()) {
      const agent = (this.options.agentsAt?.(record.cwd) ?? this.options.agents).get(record.agent);
      if (agent?.runner !== 'acp') {
        this.options.log?.(
          `crew: chat ${record.id} cannot continue: agent "${record.agent}" is ${agent ? 'not an ACP agent' : 'gone'}; its pending events will be undeliverable`,
        );
        this.options.store.deleteChat(record.id);
        continue;
      }
      const chat = this.open(record.id, agent, record.cwd, record);
      chat.start().catch((error: unknown) => {
        this.options.log?.(
          `crew: chat ${record.id}: the parent agent could not start again (${error instanceof Error ? error.message : String(error)}); the next turn tries again`,
        );
      });
    }
  }

  private open(id: string, agent: AgentDef, cwd: string, restored?: ChatRecord): Chat {
    const chat = new Chat({
      id,
      clock: this.options.clock,
      agent,
      cwd,
      mcpServers: this.options.mcpServersFor(id, cwd),
      runtimes: this.options.runtimes,
      permissionPolicy: this.options.permissionPolicy,
      attemptTimeoutMs: this.options.attemptTimeoutMs,
      ...(this.options.coalesceMs !== undefined ? { coalesceMs: this.options.coalesceMs } : {}),
      ...(this.options.turnsKept !== undefined ? { turnsKept: this.options.turnsKept } : {}),
      ...(restored ? { restored } : {}),
      persist: (record) => this.options.store.saveChat(record),
      onRuntimeStarted: (runtime) => this.options.onRuntimeStarted?.(id, runtime),
      onRuntimeEnded: (runtime) => this.options.onRuntimeEnded?.(id, runtime),
    });
    const detach = this.options.gateway.attachSink(chat.key, chat);
    this.chats.set(id, { chat, detach });
    return chat;
  }

  /** Closes the least recently active chats until a new one fits under `chat.max_chats`. */
  private async makeRoom(): Promise<void> {
    const max = this.options.maxChats ?? 16;
    while (this.chats.size >= max) {
      let oldest: Chat | undefined;
      for (const { chat } of this.chats.values())
        if (!oldest || chat.lastActiveAt < oldest.lastActiveAt) oldest = chat;
      if (!oldest) return;
      await this.close(
        oldest.id,
        `closed to make room: at most ${max} chats stay open (chat.max_chats), and this one was the least recently active`,
      );
    }
  }

  get(id: string): Chat | undefined {
    return this.chats.get(id)?.chat;
  }

  list(): Chat[] {
    return [...this.chats.values()].map((entry) => entry.chat);
  }

  /**
   * The runtime an eligible run of `parent` should join: the chat's own when `parent` is a live chat
   * and the run's agent has the same command (and model) as the chat's parent.
   */
  runtimeKeyFor(parent: ParentKey, agent: AgentDef): string | undefined {
    if (!parent.startsWith('chat:') || agent.runner !== 'acp') return undefined;
    const chat = this.chats.get(parent.slice('chat:'.length))?.chat;
    if (!chat || chat.isClosed) return undefined;
    const own = fillArgv(chat.agent.command, { model: chat.agent.model });
    return sameArgv(fillArgv(agent.command, { model: agent.model }), own) ? chat.key : undefined;
  }

  /**
   * Ends a chat: its live runs are cancelled (nobody would receive their events) and given the close
   * grace to end, then its runtime goes. False when there is no such chat.
   */
  async close(id: string, reason = 'closed'): Promise<boolean> {
    const entry = this.chats.get(id);
    if (!entry) return false;
    this.chats.delete(id);
    entry.detach();
    this.options.store.deleteChat(id);
    await this.cancelRuns(entry.chat.key);
    await entry.chat.close(reason);
    this.options.onClosed?.(id);
    return true;
  }

  /**
   * The daemon stops: every chat's runtime ends, but the chats stay in the store to continue at the
   * next start, and their runs are left to the gateway (whose events then wait for the chat to return).
   */
  async suspendAll(reason = 'Crew is stopping; this chat continues when it starts again'): Promise<void> {
    this.closed = true;
    const entries = [...this.chats.entries()];
    this.chats.clear();
    await Promise.all(
      entries.map(async ([id, entry]) => {
        entry.detach();
        await entry.chat.close(reason);
        this.options.onClosed?.(id);
      }),
    );
  }

  private async cancelRuns(parent: ParentKey): Promise<void> {
    const scope = { kind: 'parent' as const, parent };
    const live = () =>
      this.options.gateway.list(scope).runs.filter((run) => run.parent === parent && isLive(run.status));
    for (const run of live()) this.options.gateway.cancel(run.id, scope);
    const { clock } = this.options;
    const deadline = clock.now() + (this.options.closeGraceMs ?? 5000);
    while (live().length > 0 && clock.now() < deadline) {
      await new Promise<void>((resolve) => clock.setTimer(resolve, POLL_MS));
    }
  }
}

function isLive(status: string): boolean {
  return (LIVE_STATUSES as readonly string[]).includes(status);
}
