import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import type { Clock } from '../core/clock.js';
import { classifyRpcError, type ErrorKind } from '../core/error-kind.js';
import { CrewFault } from '../core/errors.js';
import { PausableTimers } from '../core/pausable-timers.js';
import { type AgentProcess, describeExit, spawnAgentProcess, terminateGroup } from './acp-process.js';
import { jsonStringCapStream, MAX_ENCODED_BYTES_PER_CHAR } from './json-string-cap.js';
import { protocolLineBoundStream } from './protocol-line-bound.js';
import type { RunCell } from './run-cell.js';

/**
 * A runtime (DESIGN §1): one agent process and the ACP client connection to it, hosting one session
 * (dedicated) or several (shared). It routes each session's updates and permission requests to that
 * session's sink, puts a gateway-side timeout on every request but `session/prompt` (the SDK has none;
 * a turn's length is the gateway's to judge), and reports its own death once, with a reason.
 *
 * A dedicated runtime can be paused by the memory pause ({@link AcpRuntime.pause}): its processes stop
 * and its request timeouts stand still until it continues, so a held agent is never taken for a hung one.
 * Its other timers cannot fire on a held agent: they run only once the connection is lost or the process
 * is going (the kill grace, the wait for a death reason), and ending a runtime continues it first.
 */

/** Where a session's traffic from the agent goes. */
export interface SessionSink {
  onUpdate(update: acp.SessionUpdate): void;
  onPermission(request: acp.RequestPermissionRequest): acp.RequestPermissionResponse;
}

export interface RuntimeOptions {
  argv: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  clock: Clock;
  /** Limit on every request but `session/prompt`. */
  requestTimeoutMs: number;
  /** SIGTERM → SIGKILL. */
  killGraceMs: number;
  /** Names the runtime in reasons: `agent "x"` or `shared runtime of agent "x"`. */
  label: string;
  /**
   * Chars kept of any one string in a message (`agent.transcript_max_bytes` + 1): a chunk of any size is
   * read, cut there, and the transcript writer cuts it with its marker. Unset, the SDK's message limit.
   */
  maxStringChars?: number;
  /** The process's `oom_score_adj` is raised to this (`host.oom_score_adj`); 0 or absent leaves it. */
  oomScoreAdj?: number;
  /** Holds every process the runtime starts (run-cell.ts); absent: its process group only. */
  cell?: RunCell;
  /**
   * Longest protocol line read from the agent; a longer one ends the runtime `agent_protocol_error`
   * before the SDK buffers it. @default the SDK's message limit for `maxStringChars`
   */
  maxLineBytes?: number;
}

/** The SDK's own limit on one message, kept as the floor. */
const SDK_MAX_MESSAGE_BYTES = 32 * 1024 * 1024;

/** Room for one message whose strings are capped at `maxStringChars`: one such string and the rest. */
function maxMessageBytesFor(maxStringChars: number): number {
  return Math.max(SDK_MAX_MESSAGE_BYTES, maxStringChars * MAX_ENCODED_BYTES_PER_CHAR + 1024 * 1024);
}

const CLIENT_INFO = { name: 'crew', version: '0.1.0' };
const STDERR_IN_REASON_CHARS = 300;

/** A request error with the agent's own words, or a timeout, or a lost connection, as one sentence. */
function runtimeDied(message: string, errorKind?: ErrorKind): CrewFault {
  return new CrewFault('runtime_died', message, errorKind === undefined ? {} : { errorKind });
}

/** The typed cause a runtime's error carries (see {@link classifyRpcError}), if any. */
export function errorKindOf(error: unknown): ErrorKind | undefined {
  const kind = error instanceof CrewFault ? error.details.errorKind : undefined;
  return typeof kind === 'string' ? (kind as ErrorKind) : undefined;
}

export class AcpRuntime {
  readonly pid: number;
  readonly startTime: number | undefined;
  /** Resolves with the reason once the process has exited (on its own, or killed). */
  readonly died: Promise<string>;
  /** Set once the process has exited. */
  private reasonOfDeath: string | undefined;
  private readonly deathListeners = new Set<(reason: string) => void>();
  private readonly proc: AgentProcess;
  private readonly connection: acp.ClientConnection;
  private readonly sinks = new Map<string, SessionSink>();
  private capabilities: acp.AgentCapabilities = {};
  private terminating: Promise<void> | undefined;
  /** Set when the agent broke the protocol beyond repair (a line over the bound): why, in words. */
  protocolFault: string | undefined;
  private exitedBeforeTerminate = false;
  /** The request timeouts: they count only while the agent runs (the memory pause may stop it). */
  private readonly timers: PausableTimers;

  /** Starts the process (throws when it cannot be started); call {@link initialize} next. */
  constructor(private readonly options: RuntimeOptions) {
    this.timers = new PausableTimers(options.clock);
    this.proc = spawnAgentProcess(options.argv, {
      cwd: options.cwd,
      env: options.env,
      ...(options.oomScoreAdj ? { oomScoreAdj: options.oomScoreAdj } : {}),
      ...(options.cell ? { cell: options.cell } : {}),
    });
    this.pid = this.proc.pid;
    this.startTime = this.proc.startTime;
    const app = acp
      .client({ name: 'crew' })
      .onNotification(acp.methods.client.session.update, ({ params }) => {
        this.sinks.get(params.sessionId)?.onUpdate(params.update);
      })
      .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
        const sink = this.sinks.get(params.sessionId);
        return sink ? sink.onPermission(params) : { outcome: { outcome: 'cancelled' } };
      });
    const { stdin, stdout } = this.proc.child;
    // Internal: spawnAgentProcess always pipes all three.
    if (!stdin || !stdout) throw new Error('the agent process has no stdio pipes');
    const { maxStringChars } = options;
    const maxLineBytes =
      options.maxLineBytes ??
      (maxStringChars === undefined ? SDK_MAX_MESSAGE_BYTES : maxMessageBytesFor(maxStringChars)) - 1;
    const bound = protocolLineBoundStream(maxLineBytes, (lineBytes) => {
      this.protocolFault = `${options.label} sent a protocol line of over ${lineBytes} bytes with no newline (the limit is ${maxLineBytes}); ended as a protocol error`;
      void this.terminate();
    });
    const raw = Readable.toWeb(stdout) as ReadableStream<Uint8Array>;
    const output = Writable.toWeb(stdin) as WritableStream<Uint8Array>;
    // The bound counts what the SDK would buffer: after the string cap, which streams and shortens a huge
    // chunk's text (a 34 MB chunk is a legal line that the cap makes small), not before it.
    this.connection = app.connect(
      maxStringChars === undefined
        ? acp.ndJsonStream(output, raw.pipeThrough(bound))
        : acp.ndJsonStream(output, raw.pipeThrough(jsonStringCapStream(maxStringChars)).pipeThrough(bound), {
            maxMessageBytes: maxMessageBytesFor(maxStringChars),
          }),
    );
    this.died = this.proc.exited.then((exit) => {
      this.exitedBeforeTerminate = this.terminating === undefined;
      // Whatever else was in the group (a grandchild) goes too.
      void this.terminate();
      const reason =
        this.protocolFault ?? `${options.label} (pid ${this.pid}) ${describeExit(exit)}${this.stderrHint()}`;
      this.reasonOfDeath = reason;
      for (const listener of [...this.deathListeners]) listener(reason);
      this.deathListeners.clear();
      return reason;
    });
    // An agent that closed its stdout but lives on can no longer be talked to: end it. Its stdout
    // usually ends just before its exit is seen, so the timer goes with the exit; left set, it would
    // hold a closed gateway's event loop for the kill grace.
    void this.connection.closed.then(() => {
      if (this.proc.exit !== undefined) return;
      const timer = this.options.clock.setTimer(() => void this.terminate(), options.killGraceMs);
      void this.proc.exited.then(() => this.options.clock.clearTimer(timer));
    });
  }

  /** Whether the process exited or the connection to it is lost. */
  get isDown(): boolean {
    return this.proc.exit !== undefined || this.connection.signal.aborted || this.terminating !== undefined;
  }

  /** Whether the process exited without Crew asking it to (no terminate() before its exit). */
  get exitedByItself(): boolean {
    return this.proc.exit !== undefined && this.exitedBeforeTerminate;
  }

  /** The leader's exit code, once it exited by itself with one. */
  get exitCode(): number | undefined {
    return this.proc.exit?.code ?? undefined;
  }

  get supportsClose(): boolean {
    return Boolean(this.capabilities.sessionCapabilities?.close);
  }

  get supportsHttpMcp(): boolean {
    return this.capabilities.mcpCapabilities?.http === true;
  }

  /** Whether the agent advertised `loadSession` (a session survives its process). */
  get supportsLoadSession(): boolean {
    return this.capabilities.loadSession === true;
  }

  /** `initialize`: checks the protocol version; an error (e.g. authentication required) is thrown. */
  async initialize(): Promise<void> {
    const response = await this.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      clientInfo: CLIENT_INFO,
    });
    if (response.protocolVersion !== acp.PROTOCOL_VERSION) {
      throw runtimeDied(
        `${this.options.label} speaks ACP protocol version ${response.protocolVersion}; Crew speaks ${acp.PROTOCOL_VERSION}`,
        'agent_protocol_error',
      );
    }
    this.capabilities = response.agentCapabilities ?? {};
    this.authMethods = (response.authMethods ?? []).map((m) => m.name || m.id);
  }

  /** The ways the agent said it can be authenticated (`initialize`), named in an auth-required reason. */
  private authMethods: string[] = [];

  /** `session/new`; the sink receives the session's traffic from then on. */
  async newSession(
    params: acp.NewSessionRequest,
    sink: SessionSink,
  ): Promise<{ sessionId: string; configOptions: acp.SessionConfigOption[] }> {
    const response = await this.request(acp.methods.agent.session.new, params);
    this.sinks.set(response.sessionId, sink);
    return { sessionId: response.sessionId, configOptions: response.configOptions ?? [] };
  }

  /**
   * `session/load` (only when {@link supportsLoadSession}): reopens a session a previous process of the
   * same agent held. The agent replays the history as updates to `sink` before it answers; like
   * {@link prompt}, this resolves only after those updates have reached the sink.
   */
  async loadSession(
    params: acp.LoadSessionRequest,
    sink: SessionSink,
  ): Promise<{ configOptions: acp.SessionConfigOption[] }> {
    this.sinks.set(params.sessionId, sink);
    try {
      const response = await this.request(acp.methods.agent.session.load, params);
      return { configOptions: response?.configOptions ?? [] };
    } catch (error) {
      this.sinks.delete(params.sessionId);
      throw error;
    } finally {
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** Routes a kept session's traffic to a new sink (a continuing run). */
  attach(sessionId: string, sink: SessionSink): void {
    this.sinks.set(sessionId, sink);
  }

  /** Stops routing a session's traffic. */
  detach(sessionId: string): void {
    this.sinks.delete(sessionId);
  }

  async setConfigOption(
    sessionId: string,
    configId: string,
    value: string,
  ): Promise<acp.SessionConfigOption[]> {
    const response = await this.request(acp.methods.agent.session.setConfigOption, {
      sessionId,
      configId,
      value,
    });
    return response.configOptions;
  }

  /**
   * `session/prompt`, with no timeout. Resolves only after the updates the agent sent before its answer
   * have reached the sink: the SDK settles a response synchronously as it reads it but dispatches
   * notifications through async handlers, so without a turn of the event loop the last chunks of a turn
   * could in principle arrive after its answer (and be dropped as late).
   */
  async prompt(sessionId: string, text: string): Promise<acp.PromptResponse> {
    try {
      return await this.connection.agent.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: 'text', text }],
      });
    } catch (error) {
      throw this.explain('session/prompt', error);
    } finally {
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** `session/cancel`; a lost connection is not an error here (the death is reported elsewhere). */
  async cancel(sessionId: string): Promise<void> {
    await this.connection.agent.notify(acp.methods.agent.session.cancel, { sessionId }).catch(() => {});
  }

  /** `session/close` when advertised (errors ignored: the session is being given up anyway). */
  async closeSession(sessionId: string): Promise<void> {
    this.detach(sessionId);
    if (!this.supportsClose || this.isDown) return;
    await this.request(acp.methods.agent.session.close, { sessionId }).catch(() => {});
  }

  /**
   * Stops (`true`) or continues (`false`) every process of the runtime (the memory pause: its cell's
   * freeze or SIGSTOP, else its process group's), and holds its request timeouts meanwhile. Never throws.
   */
  pause(isPaused: boolean): void {
    if (this.options.cell !== undefined) this.options.cell.pause(isPaused);
    else {
      try {
        process.kill(-this.pid, isPaused ? 'SIGSTOP' : 'SIGCONT');
      } catch {
        // The group is gone: nothing to stop or continue.
      }
    }
    this.timers.pause(isPaused);
  }

  /** Whether the memory pause holds it stopped. */
  get isPaused(): boolean {
    return this.timers.isPaused;
  }

  /** Ends the process group: stdin closed, SIGTERM, SIGKILL after the grace. Resolves when it is gone. */
  terminate(): Promise<void> {
    this.terminating ??= (async () => {
      this.connection.close();
      this.proc.child.stdin?.end();
      await terminateGroup(this.proc, { clock: this.options.clock, graceMs: this.options.killGraceMs });
    })();
    return this.terminating;
  }

  /**
   * Calls `listener` once with the reason when the process exits (at once if it already has). Returns
   * the unsubscribe function. Unlike `died.then`, a listener that is removed leaves nothing behind, which
   * matters for a shared runtime that outlives thousands of turns.
   */
  onDeath(listener: (reason: string) => void): () => void {
    if (this.reasonOfDeath !== undefined) {
      listener(this.reasonOfDeath);
      return () => {};
    }
    this.deathListeners.add(listener);
    return () => this.deathListeners.delete(listener);
  }

  /** The death reason when the process is going or gone, waiting at most the kill grace for its exit. */
  deathReason(): Promise<string | undefined> {
    if (!this.isDown) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const timer = this.options.clock.setTimer(() => {
        unsubscribe();
        resolve(`lost the connection to ${this.options.label} (pid ${this.pid})`);
      }, this.options.killGraceMs);
      const unsubscribe = this.onDeath((reason) => {
        this.options.clock.clearTimer(timer);
        resolve(reason);
      });
    });
  }

  /** Why a request failed, in one sentence: the death reason if the process went, else the error. */
  async reasonFor(error: unknown): Promise<string> {
    return (await this.deathReason()) ?? (error instanceof Error ? error.message : String(error));
  }

  /** A request with the gateway-side timeout. */
  private async request<M extends acp.AgentRequestMethod>(
    method: M,
    params: acp.AgentRequestParamsByMethod[M],
  ): Promise<acp.AgentRequestResponsesByMethod[M]> {
    const { requestTimeoutMs } = this.options;
    const abort = new AbortController();
    const timer = this.timers.setTimer(() => abort.abort(), requestTimeoutMs);
    try {
      return await this.connection.agent.request(method, params, {
        cancellationSignal: abort.signal,
        stopWaitingOnCancel: true,
      });
    } catch (error) {
      if (abort.signal.aborted) {
        throw runtimeDied(
          `${method}: ${this.options.label} did not answer within ${requestTimeoutMs} ms`,
          'timeout',
        );
      }
      throw this.explain(method, error);
    } finally {
      this.timers.clearTimer(timer);
    }
  }

  /** One sentence for a failed request: the agent's error, or the connection loss. */
  private explain(method: string, error: unknown): CrewFault {
    if (error instanceof acp.RequestError) {
      if (error.code === -32000) {
        return runtimeDied(
          `${this.options.label} requires authentication (${error.message}); log in with the agent's own CLI first${this.authMethods.length > 0 ? ` (it offers: ${this.authMethods.join(', ')})` : ''}`,
          'auth_required',
        );
      }
      // The agent's message stays the run's `error`; the typed cause comes from `data` first.
      return runtimeDied(
        `${method} failed: ${error.message} (code ${error.code})${dataHint(error.data)}`,
        classifyRpcError({ code: error.code, message: error.message, data: error.data }),
      );
    }
    const message = error instanceof Error ? error.message : String(error);
    if (this.protocolFault !== undefined) return runtimeDied(this.protocolFault, 'agent_protocol_error');
    return runtimeDied(`${method} failed: ${message}`, this.isDown ? 'agent_exited' : 'agent_protocol_error');
  }

  /** The methods the agent offered in `initialize` to authenticate (names, or ids). */
  get offeredAuthMethods(): readonly string[] {
    return this.authMethods;
  }

  private stderrHint(): string {
    const lines = this.proc
      .stderrTail()
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    const last = lines.at(-1);
    return last ? `; stderr: ${last.slice(-STDERR_IN_REASON_CHARS)}` : '';
  }
}

const DATA_HINT_CHARS = 300;

/** The agent's error `data` in short (it often holds the provider's own message), or nothing. */
function dataHint(data: unknown): string {
  if (data === undefined || data === null) return '';
  const text = typeof data === 'string' ? data : JSON.stringify(data);
  if (text === '{}' || text === '') return '';
  return `; data: ${text.length > DATA_HINT_CHARS ? `${text.slice(0, DATA_HINT_CHARS)}…` : text}`;
}
