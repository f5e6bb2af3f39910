import * as acp from '@agentclientprotocol/sdk';
import { loadSavedSession, saveSession, withPrompt } from './session-file.js';
import { CRASH_EXIT_CODE, type PermissionAnswer, runTurn, SIM_CONTEXT_TOKENS, type TurnIo } from './turn.js';

/**
 * The simulator as an ACP agent: one process hosts any number of sessions, each running at most one turn
 * at a time, and honours `session/cancel` (stop reason `cancelled`) and `session/close`.
 */

export interface SimAgentOptions {
  /** The model from the command line (`--model`), until a session sets its own. */
  model?: string;
  /** The reasoning effort from the command line (`--effort`), until a session sets its own. */
  effort?: string;
  /** Advertise `model` and `effort` as session config options (`session/set_config_option`). */
  configOptions: boolean;
  /** Advertise `session/close`. */
  close: boolean;
  /** Answer `session/new` with "authentication required" (as an agent nobody logged in to does). */
  authRequired?: boolean;
  /** The protocol version `initialize` answers. @default acp.PROTOCOL_VERSION */
  protocolVersion?: number;
  /**
   * Keep sessions in this directory and advertise `loadSession`: a later process reopens one with
   * `session/load`, replaying its earlier prompts. Absent: sessions die with the process.
   */
  sessionsDir?: string;
  /** Ends the process with `code` (for `fail=crash` and `exit=N`); does not return. */
  terminate(code: number): void;
}

/** The models the simulator offers as a config option; the first is the default. */
export const SIM_MODELS = ['sim-default', 'sim-large', 'sim-small'] as const;
export const SIM_EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max'] as const;

interface SimSession {
  id: string;
  cwd: string;
  mcpServers: acp.McpServer[];
  model: string | undefined;
  effort: string | undefined;
  turns: number;
  /** Earlier prompts of the session, oldest first (bounded; `#sim info` says them as `earlier`). */
  history: string[];
  /** Runs spawned with `#sim … yield` whose completion events have not all come as prompts yet. */
  awaited: Map<string, string | undefined>;
  /** Aborts the running turn; absent between turns. */
  turn?: AbortController;
}

const VERSION = '0.1.0';

/** Builds the agent app; connect it to a stream (stdio in `main.ts`, memory in tests). */
export function createSimAgent(options: SimAgentOptions): acp.AgentApp {
  const sessions = new Map<string, SimSession>();
  let sessionCount = 0;

  const sessionOf = (sessionId: string): SimSession => {
    const session = sessions.get(sessionId);
    if (!session) throw acp.RequestError.sessionNotFound(sessionId);
    return session;
  };

  const save = (session: SimSession) => {
    if (options.sessionsDir === undefined) return;
    const { cwd, model, effort, turns, history } = session;
    saveSession(options.sessionsDir, session.id, { cwd, model, effort, turns, history });
  };

  const app = acp
    .agent({ name: 'crew-sim-agent' })
    .onRequest(acp.methods.agent.initialize, () => ({
      protocolVersion: options.protocolVersion ?? acp.PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: options.sessionsDir !== undefined,
        promptCapabilities: {},
        mcpCapabilities: { http: true },
        sessionCapabilities: options.close ? { close: {} } : {},
      },
      agentInfo: { name: 'crew-sim-agent', version: VERSION },
      authMethods: [],
    }))
    .onRequest(acp.methods.agent.session.new, ({ params }) => {
      if (options.authRequired) throw acp.RequestError.authRequired(undefined, 'sim: not logged in');
      sessionCount += 1;
      const session: SimSession = {
        id: `sim-${process.pid}-${sessionCount}`,
        cwd: params.cwd,
        mcpServers: params.mcpServers,
        model: options.model,
        effort: options.effort,
        turns: 0,
        history: [],
        awaited: new Map(),
      };
      sessions.set(session.id, session);
      save(session);
      return options.configOptions
        ? { sessionId: session.id, configOptions: configOptionsOf(session) }
        : { sessionId: session.id };
    })
    .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
      const session = sessionOf(params.sessionId);
      if (session.turn) throw acp.RequestError.invalidRequest(undefined, 'a turn is already running');
      const turn = new AbortController();
      session.turn = turn;
      session.turns += 1;
      try {
        const text = params.prompt.map((block) => (block.type === 'text' ? block.text : '')).join('');
        const io = turnIo(session, client, turn.signal);
        // Said by `#sim info` during the turn: the prompts before this one.
        session.history = withPrompt(session.history, text);
        save(session);
        const outcome = await runTurn(text, io);
        switch (outcome.kind) {
          case 'stop':
            return { stopReason: outcome.stopReason };
          case 'error':
            throw new acp.RequestError(-32603, outcome.message);
          case 'crash':
          case 'exit':
            options.terminate(outcome.kind === 'crash' ? CRASH_EXIT_CODE : outcome.code);
            return new Promise<never>(() => {});
        }
      } finally {
        if (session.turn === turn) delete session.turn;
      }
    })
    .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
      sessions.get(params.sessionId)?.turn?.abort();
    });

  const sessionsDir = options.sessionsDir;
  if (sessionsDir !== undefined) {
    app.onRequest(acp.methods.agent.session.load, async ({ params, client }) => {
      const saved = loadSavedSession(sessionsDir, params.sessionId);
      if (!saved) throw acp.RequestError.resourceNotFound(params.sessionId);
      const session: SimSession = {
        id: params.sessionId,
        cwd: params.cwd,
        mcpServers: params.mcpServers,
        model: saved.model,
        effort: saved.effort,
        turns: saved.turns,
        history: saved.history,
        awaited: new Map(),
      };
      // The history is replayed before the answer, as ACP asks of session/load.
      for (const prompt of saved.history) {
        await client.notify(acp.methods.client.session.update, {
          sessionId: session.id,
          update: { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: prompt } },
        });
      }
      sessions.set(session.id, session);
      process.stderr.write(`sim: session ${session.id} loaded (${saved.history.length} earlier prompts)\n`);
      return options.configOptions ? { configOptions: configOptionsOf(session) } : {};
    });
  }
  if (options.close) {
    app.onRequest(acp.methods.agent.session.close, ({ params }) => {
      const session = sessionOf(params.sessionId);
      session.turn?.abort();
      sessions.delete(session.id);
      process.stderr.write(`sim: session ${session.id} closed\n`);
      return {};
    });
  }
  if (options.configOptions) {
    app.onRequest(acp.methods.agent.session.setConfigOption, ({ params }) => {
      const session = sessionOf(params.sessionId);
      const value = String(params.value);
      if (params.configId === 'model' && (SIM_MODELS as readonly string[]).includes(value))
        session.model = value;
      else if (params.configId === 'effort' && (SIM_EFFORTS as readonly string[]).includes(value))
        session.effort = value;
      else
        throw acp.RequestError.invalidParams(
          undefined,
          `no value "${value}" for option "${params.configId}"`,
        );
      return { configOptions: configOptionsOf(session) };
    });
  }
  return app;
}

function configOptionsOf(session: SimSession): acp.SessionConfigOption[] {
  return [
    {
      type: 'select',
      id: 'model',
      name: 'Model',
      category: 'model',
      currentValue: session.model ?? SIM_MODELS[0],
      options: SIM_MODELS.map((value) => ({ value, name: value })),
    },
    {
      type: 'select',
      id: 'effort',
      name: 'Reasoning effort',
      category: 'thought_level',
      currentValue: session.effort ?? 'medium',
      options: SIM_EFFORTS.map((value) => ({ value, name: value })),
    },
  ];
}

function turnIo(session: SimSession, client: acp.AgentContext, signal: AbortSignal): TurnIo {
  const sessionId = session.id;
  const update = (update: acp.SessionUpdate) =>
    client.notify(acp.methods.client.session.update, { sessionId, update });
  return {
    signal,
    cwd: session.cwd,
    say: (text) => update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } }),
    toolCall: (index) =>
      update({
        sessionUpdate: 'tool_call',
        toolCallId: `sim-tool-${session.turns}-${index}`,
        title: `sim tool ${index}`,
        kind: 'other',
        status: 'completed',
      }),
    usage: (usedTokens) =>
      update({ sessionUpdate: 'usage_update', used: usedTokens, size: SIM_CONTEXT_TOKENS }),
    askPermission: async (): Promise<PermissionAnswer> => {
      try {
        const response = await client.request(
          acp.methods.client.session.requestPermission,
          {
            sessionId,
            toolCall: { toolCallId: `sim-ask-${session.turns}`, title: 'sim asks for permission' },
            options: [
              { optionId: 'allow', name: 'Allow once', kind: 'allow_once' },
              { optionId: 'allow-always', name: 'Allow always', kind: 'allow_always' },
              { optionId: 'reject', name: 'Reject', kind: 'reject_once' },
            ],
          },
          { cancellationSignal: signal },
        );
        if (response.outcome.outcome === 'cancelled') return 'cancelled';
        return response.outcome.optionId.startsWith('allow') ? 'allowed' : 'rejected';
      } catch {
        return 'cancelled';
      }
    },
    // One MCP client per turn that spawns, closed when the turn ends (also when it is cancelled). Loaded
    // only then: the MCP SDK and zod cost more to load than the rest of the simulator, and most runs
    // never spawn.
    connectCrew: async (signal) => (await import('./crew-client.js')).connectCrew(session.mcpServers, signal),
    awaited: session.awaited,
    info: () => ({
      pid: process.pid,
      sessionId,
      earlier: session.history.slice(0, -1),
      cwd: session.cwd,
      model: session.model ?? null,
      effort: session.effort ?? null,
      // Header names only: their values carry tokens that have no place in a transcript.
      mcpServers: session.mcpServers.map((server) => ({
        name: server.name,
        type: 'type' in server ? server.type : 'stdio',
        url: 'url' in server ? server.url : null,
        headers: 'headers' in server ? server.headers.map((h) => h.name) : [],
      })),
    }),
  };
}
