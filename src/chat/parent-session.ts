import type { AgentDef } from '../core/agent-def.js';
import { CrewFault } from '../core/errors.js';
import { toAcpMcpServer } from '../runners/acp-runner.js';
import type { AcpRuntime, SessionSink } from '../runners/acp-runtime.js';
import type { McpServerRef } from '../runners/runner.js';

/**
 * A hosted chat's parent: one runtime of the parent agent (registered with the ACP runner under the
 * chat's key, so eligible children can join it) and the chat's session in it. When the process dies the
 * session is gone with it; the next {@link ParentSession.ensure} starts a fresh runtime and either loads
 * the old session (`session/load`, when the agent advertises `loadSession`) or opens a new one and says
 * so, since the parent then remembers nothing of the chat.
 */

/** What the ACP runner offers a hosted chat: a runtime of its own, known by a key. */
export interface ParentRuntimes {
  openHosted(key: string, agent: AgentDef, cwd: string, label: string): Promise<AcpRuntime>;
  closeHosted(key: string): Promise<void>;
}

export interface OpenSession {
  runtime: AcpRuntime;
  sessionId: string;
}

export interface ParentSessionOptions {
  /** The runtime key (`chat:<id>`). */
  key: string;
  /** Names the runtime in reasons. */
  label: string;
  agent: AgentDef;
  cwd: string;
  /** Crew's MCP endpoint with the chat-scoped token. */
  mcpServers: McpServerRef[];
  runtimes: ParentRuntimes;
  /** Where the session's traffic goes. */
  sink: SessionSink;
  /** Tells the person something about the parent's process or session. */
  notice(text: string): void;
  /** A runtime is up with the session in it. */
  onStarted?(runtime: AcpRuntime): void;
  /** The runtime of the session ended (died or was closed). */
  onEnded?(runtime: AcpRuntime, reason: string): void;
  /** The session of an earlier run of Crew (a chat continued after a restart): loaded when the agent can. */
  sessionId?: string;
}

export class ParentSession {
  private open: OpenSession | undefined;
  private opening: Promise<OpenSession> | undefined;
  /** The last session id, to load into a fresh runtime. */
  private lastSessionId: string | undefined;
  /** The session's history is being replayed (`session/load`): not news for the person. */
  private loading = false;
  private closed = false;
  private warnedNoMcp = false;

  constructor(private readonly options: ParentSessionOptions) {
    this.lastSessionId = options.sessionId;
  }

  /** The live session, if there is one now. */
  get current(): OpenSession | undefined {
    return this.open && !this.open.runtime.isDown ? this.open : undefined;
  }

  /** Whether updates now are a replayed history. */
  get isLoading(): boolean {
    return this.loading;
  }

  /** The live session, or a fresh runtime and session. Rejects with the reason when none can start. */
  ensure(): Promise<OpenSession> {
    const current = this.current;
    if (current) return Promise.resolve(current);
    if (this.closed) return Promise.reject(new Error('the chat is closed'));
    this.opening ??= this.start().finally(() => {
      this.opening = undefined;
    });
    return this.opening;
  }

  /** Ends the runtime; no fresh one starts after this. */
  async close(): Promise<void> {
    this.closed = true;
    await this.opening?.catch(() => undefined);
    this.open = undefined;
    await this.options.runtimes.closeHosted(this.options.key);
  }

  private async start(): Promise<OpenSession> {
    const { options } = this;
    const runtime = await options.runtimes.openHosted(options.key, options.agent, options.cwd, options.label);
    try {
      // Internal: whoever closed the chat is not waiting for this start; the catch below ends the runtime.
      if (this.closed) throw new Error('the chat is closed');
      const sessionId = await this.openSession(runtime);
      if (this.closed) throw new Error('the chat is closed');
      const open = { runtime, sessionId };
      this.open = open;
      this.lastSessionId = sessionId;
      runtime.onDeath((reason) => {
        if (this.open === open) this.open = undefined;
        options.onEnded?.(runtime, reason);
      });
      options.onStarted?.(runtime);
      return open;
    } catch (error) {
      const reason = await runtime.reasonFor(error);
      await options.runtimes.closeHosted(options.key);
      throw new CrewFault('runtime_died', reason, { key: options.key });
    }
  }

  /** `session/load` of the previous session when the agent can, else `session/new`. */
  private async openSession(runtime: AcpRuntime): Promise<string> {
    const { options } = this;
    if (!runtime.supportsHttpMcp && !this.warnedNoMcp) {
      this.warnedNoMcp = true;
      options.notice(
        `agent "${options.agent.name}" does not take MCP servers over HTTP, so it cannot reach Crew to spawn sub-agents`,
      );
    }
    const params = {
      cwd: options.cwd,
      mcpServers: runtime.supportsHttpMcp ? options.mcpServers.map(toAcpMcpServer) : [],
    };
    const previous = this.lastSessionId;
    // Said once the new session is open, so a reader who sees it finds the chat in that session.
    let afresh: string | undefined;
    if (previous !== undefined && runtime.supportsLoadSession) {
      this.loading = true;
      try {
        await runtime.loadSession({ ...params, sessionId: previous }, options.sink);
        options.notice(`the parent agent restarted (pid ${runtime.pid}) and reloaded the conversation`);
        return previous;
      } catch (error) {
        if (runtime.isDown) throw error;
        afresh = `the parent agent restarted (pid ${runtime.pid}) but could not reload the conversation (${messageOf(error)}); it starts afresh and remembers nothing said before`;
      } finally {
        this.loading = false;
      }
    } else if (previous !== undefined) {
      afresh = `the parent agent restarted (pid ${runtime.pid}) in a new session: it cannot reload sessions, so it remembers nothing said before`;
    }
    const opened = await runtime.newSession(params, options.sink);
    if (afresh !== undefined) options.notice(afresh);
    return opened.sessionId;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
