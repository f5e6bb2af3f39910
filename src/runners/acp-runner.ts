import { randomUUID } from 'node:crypto';
import type * as acp from '@agentclientprotocol/sdk';
import type { AgentDef } from '../core/agent-def.js';
import { applyAgentEnv } from '../core/agent-env.js';
import type { Clock } from '../core/clock.js';
import { CrewError, CrewFault, refuse } from '../core/errors.js';
import type { KeptSession } from '../core/scheduler-types.js';
import { fillArgv } from './acp-argv.js';
import { applyModelAndEffort, unhonouredWarnings } from './acp-config-options.js';
import { HostedRuntimes } from './acp-hosted-runtimes.js';
import { reopenKeptSession } from './acp-kept-reopen.js';
import { offerToPause } from './acp-pause-offer.js';
import type { PermissionPolicy } from './acp-permission.js';
import { AcpRun, type Placement, type RunContext } from './acp-run.js';
import { AcpRuntime, errorKindOf, type SessionSink } from './acp-runtime.js';
import { SharedRuntimePool } from './acp-shared-pool.js';
import { processGroupContainment } from './create-containment.js';
import type { PausableCells } from './pausable-cells.js';
import type { Containment } from './run-cell.js';
import type { McpServerRef, RunHandle, Runner, RunnerEvent, RunRequest } from './runner.js';

/**
 * The `acp` runner (DESIGN §6, Runners): drives agent CLIs that speak the Agent Client Protocol.
 *
 * - Dedicated runtime: one detached process (own process group) per run, ended with the run.
 * - Shared runtime: when the gateway allows it (`request.shared`) and the agent is `shared: true`, one
 *   pooled process per agent hosts runs as sessions; it lives until it dies or the runner closes. A
 *   runtime that dies fails its live runs with the reason; the next start gets a fresh one.
 * - Hosted runtime: a process another part of Crew owns by a key (a hosted chat's parent, `chat:<id>`,
 *   opened with {@link AcpRunner.openHosted}); a request whose `runtimeKey` names a live one running the
 *   same command becomes an extra session in it, stopped with `session/cancel`, never by killing it.
 * - A model or reasoning effort, or `keep`, forces a dedicated process.
 * - Kept conversations (`keep: true`) stay open after their run until {@link AcpRunner.release}; a start
 *   with `continueFrom` prompts in the kept session again. One a previous gateway process kept comes with
 *   `resumeSession` and is reopened in a new process with `session/load` (issue 29).
 */

export interface AcpRunnerOptions {
  clock: Clock;
  /**
   * Time between SIGTERM and SIGKILL for a process group, and how long a shared session may take to
   * honour `session/cancel` before its run ends anyway. Mirrors `host.kill_grace_secs`.
   * @default 5000
   */
  killGraceMs?: number;
  /**
   * The answer to `session/request_permission` (`agent.permission_policy`).
   * @default 'allow'
   */
  permissionPolicy?: PermissionPolicy;
  /**
   * Gateway-side limit on every ACP request except `session/prompt` (initialize, session/new,
   * set_config_option, session/close). A turn's length is the gateway's to judge: it calls `stop`.
   * @default 30000
   */
  requestTimeoutMs?: number;
  /**
   * The environment of agent processes.
   * @default process.env
   */
  env?: NodeJS.ProcessEnv;
  /**
   * Bytes a run's transcript keeps (`agent.transcript_max_bytes`): a message string (one
   * `agent_message_chunk`) of any size is read and cut just past it, and the writer cuts with its
   * marker. Unset, a message over the ACP SDK's 32 MiB limit drops the connection.
   */
  transcriptMaxBytes?: number;
  /**
   * The `oom_score_adj` a run's process is raised to (`host.oom_score_adj`): dedicated and shared
   * runtimes, not a hosted chat's parent, which the kernel should end last. @default 0, left as inherited
   */
  oomScoreAdj?: number;
  /**
   * Holds each runtime's processes, in whatever group or session (see run-cell.ts).
   * @default the process group tree
   */
  containment?: Containment;
  /** Longest protocol line an agent may send (see protocol-line-bound.ts). @default the SDK's message limit */
  maxProtocolLineBytes?: number;
  /** Where a run's dedicated runtime is offered to the memory pause (`acp-pause-offer.ts`). @default none */
  pausable?: PausableCells;
}

interface Conversation {
  placement: Placement;
  /** The run using the session now, if any. */
  busy: AcpRun | undefined;
}

export class AcpRunner implements Runner {
  private readonly clock: Clock;
  private readonly killGraceMs: number;
  private readonly permissionPolicy: PermissionPolicy;
  private readonly requestTimeoutMs: number;
  private readonly env: NodeJS.ProcessEnv;
  private readonly transcriptMaxBytes: number | undefined;
  private readonly oomScoreAdj: number;
  private readonly containment: Containment;
  private readonly maxProtocolLineBytes: number | undefined;
  private readonly pausable: PausableCells | undefined;
  private readonly runs = new Set<AcpRun>();
  /** Every process started and not yet known gone. */
  private readonly runtimes = new Set<AcpRuntime>();
  private readonly shared = new SharedRuntimePool((agent, cwd) =>
    this.spawn(
      fillArgv(agent.command, { model: agent.model }),
      cwd,
      `shared runtime of agent "${agent.name}"`,
      agent.env,
      this.oomScoreAdj,
    ),
  );
  private readonly conversations = new Map<string, Conversation>();
  private readonly hosted = new HostedRuntimes();
  private closed = false;

  constructor(options: AcpRunnerOptions) {
    this.clock = options.clock;
    this.killGraceMs = options.killGraceMs ?? 5000;
    this.permissionPolicy = options.permissionPolicy ?? 'allow';
    this.requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    this.env = options.env ?? process.env;
    this.transcriptMaxBytes = options.transcriptMaxBytes;
    this.oomScoreAdj = options.oomScoreAdj ?? 0;
    this.containment = options.containment ?? processGroupContainment;
    this.maxProtocolLineBytes = options.maxProtocolLineBytes;
    this.pausable = options.pausable;
  }

  start(request: RunRequest, onEvent: (event: RunnerEvent) => void): RunHandle {
    const run = new AcpRun(request, this.context(), onEvent);
    if (this.closed) {
      run.failAtOnce('the ACP runner is closed');
      return run;
    }
    this.runs.add(run);
    void run.done.then(() => this.runs.delete(run));
    run.begin();
    return run;
  }

  async release(conversationId: string): Promise<void> {
    const conversation = this.conversations.get(conversationId);
    if (!conversation) return;
    if (conversation.busy) {
      const run = conversation.busy;
      run.stop('cancel');
      await run.done;
    }
    if (this.conversations.get(conversationId) !== conversation) return;
    this.conversations.delete(conversationId);
    const { runtime, sessionId } = conversation.placement;
    await runtime.closeSession(sessionId);
    await runtime.terminate();
  }

  /**
   * Starts and initializes a runtime of `agent` in `cwd` owned by the caller under `key` (a hosted chat's
   * parent), replacing a dead one. Runs whose `runtimeKey` is `key` and whose command is the same become
   * sessions in it while it lives. Rejects with the reason when it cannot start (its process is gone).
   */
  async openHosted(key: string, agent: AgentDef, cwd: string, label: string): Promise<AcpRuntime> {
    // Internal: the daemon suspends its chats before it closes the runners, so no chat reaches this.
    if (this.closed) throw new Error('the ACP runner is closed');
    const argv = fillArgv(agent.command, { model: agent.model });
    // A parent is what the kernel should end last: its score is left as inherited.
    const runtime = this.spawn(argv, cwd, label, agent.env, 0);
    await initializeOrEnd(runtime);
    if (this.closed) {
      await runtime.terminate();
      // Internal, as above: a chat that was starting as the daemon closed is suspended, not answered.
      throw new Error('the ACP runner is closed');
    }
    this.hosted.set(key, runtime, argv);
    return runtime;
  }

  /** Ends the runtime under `key` (its process group); its live sessions fail with the reason. */
  async closeHosted(key: string): Promise<void> {
    await this.hosted.take(key)?.terminate();
  }

  async close(): Promise<void> {
    this.closed = true;
    const runs = [...this.runs];
    for (const run of runs) run.stop('shutdown');
    // Shared runtimes go at once too: their sessions end `cancelled` without waiting out a grace.
    const terminations = [...this.runtimes].map((runtime) => runtime.terminate());
    await Promise.all(runs.map((run) => run.done));
    await Promise.all(terminations);
    await Promise.all([...this.runtimes].map((runtime) => runtime.terminate()));
    this.conversations.clear();
    this.shared.clear();
    this.hosted.clear();
  }

  private context(): RunContext {
    return {
      clock: this.clock,
      killGraceMs: this.killGraceMs,
      permissionPolicy: this.permissionPolicy,
      offerToPause: (run, runtime) =>
        offerToPause(this.pausable, {
          runId: run.request.runId,
          agent: run.request.agent.name,
          runtime,
          clock: this.clock,
        }),
      place: (run, sink, onRuntime) => this.place(run, sink, onRuntime),
      settle: (run, placement, healthy) => this.settle(run, placement, healthy),
    };
  }

  private async place(
    run: AcpRun,
    sink: SessionSink,
    onRuntime: (runtime: AcpRuntime) => void,
  ): Promise<Placement> {
    const { request } = run;
    if (request.continueFrom !== undefined) return this.resume(run, request.continueFrom, sink, onRuntime);
    const { agent } = request;
    const model = request.model ?? agent.model;
    const effort = request.reasoningEffort;
    const hosted =
      request.runtimeKey !== undefined &&
      !request.keep &&
      effort === undefined &&
      (request.model === undefined || request.model === agent.model)
        ? this.hosted.live(request.runtimeKey, fillArgv(agent.command, { model }))
        : undefined;
    const isShared =
      hosted !== undefined ||
      (request.shared &&
        agent.shared &&
        !request.keep &&
        request.model === undefined &&
        effort === undefined);
    let runtime: AcpRuntime;
    if (hosted) {
      runtime = hosted;
    } else if (isShared) {
      runtime = await this.shared.get(agent, request.cwd);
    } else {
      runtime = this.spawn(
        fillArgv(agent.command, { model, effort }),
        request.cwd,
        `agent "${agent.name}"`,
        agent.env,
        this.oomScoreAdj,
      );
      onRuntime(runtime);
      await initializeOrEnd(runtime);
    }
    let sessionId: string | undefined;
    try {
      const opened = await runtime.newSession(
        {
          cwd: request.cwd,
          mcpServers: runtime.supportsHttpMcp ? request.mcpServers.map(toAcpMcpServer) : [],
        },
        sink,
      );
      sessionId = opened.sessionId;
      const placement: Placement = {
        runtime,
        sessionId,
        dedicated: !isShared,
        configOptions: opened.configOptions,
        ...(request.keep && { conversationId: request.runId }),
      };
      const missing = await applyModelAndEffort(placement, model, effort);
      // A hosted or shared runtime was started with another run's argv: only a dedicated one's argv took them.
      const argv = hosted || isShared ? [] : agent.command;
      const warnings = unhonouredWarnings(agent.name, missing, { model: request.model, effort }, (target) =>
        argv.some((arg) => arg.includes(target === 'model' ? '{model}' : '{effort}')),
      );
      if (warnings.length > 0) placement.warnings = warnings;
      if (placement.conversationId !== undefined) {
        this.conversations.set(placement.conversationId, { placement, busy: run });
      }
      return placement;
    } catch (error) {
      const reason = await runtime.reasonFor(error);
      const kind = runtime.isDown && runtime.exitedByItself ? 'agent_exited' : errorKindOf(error);
      if (!isShared) await runtime.terminate();
      else if (sessionId !== undefined) void runtime.closeSession(sessionId);
      throw new CrewFault('runtime_died', reason, kind === undefined ? {} : { errorKind: kind });
    }
  }

  /** Places a continuing run in its kept conversation's session. */
  private async resume(
    run: AcpRun,
    conversationId: string,
    sink: SessionSink,
    onRuntime: (runtime: AcpRuntime) => void,
  ): Promise<Placement> {
    const conversation = this.conversations.get(conversationId);
    if (!conversation) {
      // Kept by a previous process of the gateway: its session is reopened in a new agent process.
      const kept = run.request.resumeSession;
      if (kept !== undefined) return this.reopen(run, conversationId, kept, sink, onRuntime);
      throw new CrewError(
        refuse(
          'conversation_released',
          `conversation ${conversationId} is not open: it was released, expired or never kept`,
        ),
      );
    }
    if (conversation.busy) {
      throw new CrewError(
        refuse(
          'conversation_busy',
          `conversation ${conversationId} is busy with run ${conversation.busy.request.runId}`,
        ),
      );
    }
    const { placement } = conversation;
    if (placement.runtime.isDown) {
      this.conversations.delete(conversationId);
      throw new CrewError(
        refuse('conversation_released', `conversation ${conversationId} is gone: its agent process ended`),
      );
    }
    conversation.busy = run;
    placement.runtime.attach(placement.sessionId, sink);
    onRuntime(placement.runtime);
    try {
      const missing = await applyModelAndEffort(placement, run.request.model, run.request.reasoningEffort);
      // The kept session's process was started for the first turn: a later turn's values need an option.
      const warnings = unhonouredWarnings(
        run.request.agent.name,
        missing,
        { model: run.request.model, effort: run.request.reasoningEffort },
        () => false,
      );
      placement.warnings = warnings.length > 0 ? warnings : undefined;
    } catch (error) {
      conversation.busy = undefined;
      throw error;
    }
    return placement;
  }

  /**
   * A continuing run of a conversation a previous gateway process kept (issue 29): a new dedicated process
   * of its agent reopens the session with `session/load` before the prompt (acp-kept-reopen.ts).
   */
  private async reopen(
    run: AcpRun,
    conversationId: string,
    kept: KeptSession,
    sink: SessionSink,
    onRuntime: (runtime: AcpRuntime) => void,
  ): Promise<Placement> {
    const { request } = run;
    const { agent } = request;
    const effort = request.reasoningEffort;
    const runtime = this.spawn(
      fillArgv(agent.command, { model: request.model ?? agent.model, effort }),
      kept.cwd,
      `agent "${agent.name}"`,
      agent.env,
      this.oomScoreAdj,
    );
    onRuntime(runtime);
    await initializeOrEnd(runtime);
    try {
      const loaded = await reopenKeptSession(
        runtime,
        kept,
        request.mcpServers.map(toAcpMcpServer),
        sink,
        agent.name,
      );
      const placement: Placement = {
        runtime,
        sessionId: kept.id,
        dedicated: true,
        configOptions: loaded.configOptions,
        conversationId,
        sessionCwd: kept.cwd,
      };
      const missing = await applyModelAndEffort(placement, request.model, effort);
      const warnings = unhonouredWarnings(agent.name, missing, { model: request.model, effort }, (target) =>
        agent.command.some((arg) => arg.includes(target === 'model' ? '{model}' : '{effort}')),
      );
      if (warnings.length > 0) placement.warnings = warnings;
      this.conversations.set(conversationId, { placement, busy: run });
      return placement;
    } catch (error) {
      const reason = await runtime.reasonFor(error);
      const kind = runtime.isDown && runtime.exitedByItself ? 'agent_exited' : errorKindOf(error);
      await runtime.terminate();
      throw new CrewFault(
        'runtime_died',
        `could not reopen conversation ${conversationId} after the gateway restarted: ${reason}`,
        kind === undefined ? {} : { errorKind: kind },
      );
    }
  }

  private async settle(run: AcpRun, placement: Placement, healthy: boolean): Promise<void> {
    const { runtime, sessionId, conversationId } = placement;
    if (conversationId !== undefined) {
      const conversation = this.conversations.get(conversationId);
      if (healthy && conversation?.busy === run) {
        conversation.busy = undefined;
        runtime.detach(sessionId);
        return;
      }
      if (conversation?.placement === placement) this.conversations.delete(conversationId);
    }
    if (placement.dedicated) {
      runtime.detach(sessionId);
      await runtime.terminate();
    } else {
      // Not awaited: an agent that ignored session/cancel may not answer this either, and the run's end
      // must not wait on it. The request has its own timeout.
      void runtime.closeSession(sessionId);
    }
  }

  private spawn(
    argv: string[],
    cwd: string,
    label: string,
    agentEnv: Record<string, string> | undefined,
    oomScoreAdj: number,
  ): AcpRuntime {
    const runtime = new AcpRuntime({
      argv,
      cwd,
      // The agent's own variables go in its environment only, never its argv.
      env: applyAgentEnv(this.env, agentEnv).env,
      clock: this.clock,
      requestTimeoutMs: this.requestTimeoutMs,
      killGraceMs: this.killGraceMs,
      label,
      ...(this.transcriptMaxBytes !== undefined ? { maxStringChars: this.transcriptMaxBytes + 1 } : {}),
      oomScoreAdj,
      // One cell per process: a shared runtime's sessions live and end with it.
      cell: this.containment.open(`rt-${randomUUID()}`),
      ...(this.maxProtocolLineBytes !== undefined ? { maxLineBytes: this.maxProtocolLineBytes } : {}),
    });
    this.runtimes.add(runtime);
    void runtime.died.then(() => runtime.terminate()).then(() => this.runtimes.delete(runtime));
    return runtime;
  }
}

/** `initialize`, or end the process and throw the agent's reason (auth required, wrong protocol, …). */
async function initializeOrEnd(runtime: AcpRuntime): Promise<void> {
  try {
    await runtime.initialize();
  } catch (error) {
    const reason = await runtime.reasonFor(error);
    const kind = runtime.isDown && runtime.exitedByItself ? 'agent_exited' : errorKindOf(error);
    await runtime.terminate();
    throw new CrewFault('runtime_died', reason, kind === undefined ? {} : { errorKind: kind });
  }
}

/** Crew's MCP endpoint as ACP's `session/new` wants it (HTTP, headers as name/value pairs). */
export function toAcpMcpServer(server: McpServerRef): acp.McpServer {
  return {
    type: 'http',
    name: server.name,
    url: server.url,
    headers: Object.entries(server.headers).map(([name, value]) => ({ name, value })),
  };
}
