import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { AgentCatalog } from '../agents/agent-catalog.js';
import { ChatHost } from '../chat/chat-host.js';
import { injectionTimeoutMs } from '../chat/injection-timeout.js';
import { realClock } from '../clock/real-clock.js';
import { startClusterMode } from '../cluster/cluster-mode.js';
import { loadConfig, readConfigFile, writeConfigFile } from '../config/config-file.js';
import { liveConfigValue } from '../config/live-config.js';
import { buildPrompt } from '../context/build-prompt.js';
import type { CapResult } from '../core/cap.js';
import { type CrewConfig, parseKeyValue } from '../core/config-schema.js';
import { ownValue } from '../core/own.js';
import { Dashboard } from '../dashboard/dashboard.js';
import { createGateway } from '../gateway/create-gateway.js';
import type { Gateway } from '../gateway/gateway.js';
import { gateCosts, learnCostsFor, sizeCapAtStart } from '../host/cap-at-start.js';
import { CostSampleLog, costSamplesPath } from '../host/cost-samples.js';
import { createHostProbe } from '../host/create-host-probe.js';
import { MemoryGate } from '../host/memory-gate.js';
import { listTree } from '../host/process-tree.js';
import { resourceStatus } from '../host/resource-status.js';
import { ProcessTreeSampler } from '../host/sampler.js';
import { createApp } from '../http/app.js';
import { mountChatRoutes } from '../http/chat-routes.js';
import { dashboardAuthenticator, mountDashboardRoutes, sessionCookieName } from '../http/dashboard-routes.js';
import { loadOperatorToken, Tokens } from '../http/tokens.js';
import { attachDashboardSocket } from '../http/ws.js';
import { DaemonMetrics } from '../metrics/daemon-metrics.js';
import { packageVersion } from '../package-version.js';
import { startProviderGateway } from '../provider/provider-gateway.js';
import { toProviderUsage } from '../provider/provider-metrics.js';
import { AcpRunner } from '../runners/acp-runner.js';
import { CommandRunner } from '../runners/command-runner.js';
import { createContainment } from '../runners/create-containment.js';
import { killIfSame } from '../runners/process-group.js';
import { SelWriter, selPath } from '../sel/sel-writer.js';
import type { SlackService } from '../slack/slack-service.js';
import { SqliteStore } from '../store/sqlite-store.js';
import { createRunTracer, type RunTracer } from '../tracing/run-tracer.js';
import { tracedRunner } from '../tracing/traced-runner.js';
import { FileTranscripts } from '../transcripts/file-transcripts.js';
import { createWorkspaces } from '../workspace/create-workspaces.js';
import { BwrapSandbox } from '../workspace/sandbox.js';
import { CLI_LOG_PARENT, type GatewayFile, gatewayFilePath } from './daemon-address.js';
import { EventsLogSink } from './events-log-sink.js';
import { acquireLock } from './lock.js';

export interface DaemonOptions {
  crewHome: string;
  /** @default '127.0.0.1' */
  host?: string;
  /** 0 picks a free port. @default 7878 */
  port?: number;
  /** The project directory (`./.crew/agents`) and the default cwd of runs. */
  cwd: string;
  env: NodeJS.ProcessEnv;
  log?: (line: string) => void;
}

export interface Daemon {
  url: string;
  port: number;
  gateway: Gateway;
  /** Hosted chats (`/api/chats`). */
  chats: ChatHost;
  config: CrewConfig;
  /** Stop admitting, wait up to `graceMs` for runs to end, cancel the rest, close everything. */
  shutdown(graceMs: number): Promise<void>;
}

/**
 * `crew serve`: the one gateway of this host on `$CREW_HOME` — SQLite store, file transcripts, the SEL
 * on disk, real runners, the auto-sized cap — behind HTTP (`/mcp` and `/api`). A second daemon on the
 * same home refuses to start, naming the running one.
 */
export async function startDaemon(options: DaemonOptions): Promise<Daemon> {
  const { crewHome, env } = options;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const host = options.host ?? '127.0.0.1';
  makeHomePrivate(crewHome, log);
  const releaseLock = acquireLock(crewHome);
  const cleanups: (() => Promise<void> | void)[] = [releaseLock];
  try {
    const { config, clamped } = loadConfig(crewHome);
    const clock = realClock;
    const sel = new SelWriter({ path: selPath(crewHome), clock });
    cleanups.push(() => sel.close());
    for (const c of clamped) {
      sel.write({
        event_type: 'config',
        source: 'gateway',
        tool_name: 'config',
        outcome: 'config_bounds_clamped',
        metadata: { key: c.key, from: c.from, to: c.to, reason: c.reason },
      });
    }
    // Agent files are re-read as they change, per run directory (docs/decisions.md); problems are logged
    // at each read.
    const catalog = new AgentCatalog({
      crewHome,
      config,
      onProblems: (problems) => {
        for (const problem of problems) {
          log(
            `crew: agent problem: ${problem.path}${problem.line ? `:${problem.line}` : ''}: ${problem.message}`,
          );
        }
      },
    });
    const agentsAt = (cwd: string) => catalog.at(cwd);
    const startAgents = agentsAt(options.cwd);

    const hostRoot = env.CREW_HOST_ROOT ?? '/';
    const probe = createHostProbe({ hostRoot, clock });
    cleanups.push(() => probe.close());
    const costLog = new CostSampleLog({
      path: costSamplesPath(crewHome),
      perAgent: config['agent.cost_samples_per_agent'],
    });
    const startup = sizeCapAtStart({ probe, config, samples: costLog.read() });
    const gate = new MemoryGate({ probe, clock, minGb: config['agent.spawn_min_memory_gb'] });
    // Each tick feeds the reservation gate: what each run holds now, against what its agent is expected to.
    let learned = startup.costs;
    let onMemory:
      | ((currentGb: Record<string, number>, settledGb: Record<string, number>) => void)
      | undefined;
    const sampler = new ProcessTreeSampler({
      hostRoot,
      clock,
      intervalMs: config['host.sample_interval_secs'] * 1000,
      ...(startup.cpuCount !== undefined && { cpuCount: startup.cpuCount }),
      onTick: (currentGb, settledGb) => onMemory?.(currentGb, settledGb),
    });
    cleanups.push(() => sampler.close());

    const store = new SqliteStore(`${crewHome}/crew.db`);
    cleanups.push(() => store.close());
    // Before the lost runs' trees below: a cgroup left by a crashed gateway is ended and removed here.
    const containment = await createContainment({
      crewHome,
      mode: env.CREW_CONTAINMENT === 'process_group' ? 'process_group' : 'auto',
    });
    cleanups.push(() => containment.close());
    // Runs that were executing when a previous gateway died: their trees may still run; end them.
    for (const record of store.restartState().executing) {
      if (record.pid === undefined || record.startTime === undefined) continue;
      const survivors = listTree(hostRoot, record.pid, record.startTime);
      await killIfSame(record.pid, record.startTime, { graceMs: 1000, clock });
      for (const pid of survivors) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }

    const killGraceMs = config['host.kill_grace_secs'] * 1000;
    const acp = new AcpRunner({
      clock,
      killGraceMs,
      permissionPolicy: config['agent.permission_policy'],
      requestTimeoutMs: config['agent.acp_request_timeout_secs'] * 1000,
      env,
      transcriptMaxBytes: config['agent.transcript_max_bytes'],
      oomScoreAdj: config['host.oom_score_adj'],
      containment,
    });
    const command = new CommandRunner({
      clock,
      killGraceMs,
      oomScoreAdj: config['host.oom_score_adj'],
      containment,
    });
    // Closed after the gateway (cleanups run in reverse): the gateway's close lets runs end first.
    cleanups.push(
      () => acp.close(),
      () => command.close(),
    );
    const transcripts = new FileTranscripts(crewHome, {
      maxBytes: config['agent.transcript_max_bytes'],
      clock,
      grepBudgetMs: config['agent.grep_budget_ms'],
    });
    // Its grep threads end after the gateway, which may still be answering a status call.
    cleanups.push(() => transcripts.close());
    const tokens = new Tokens(loadOperatorToken(crewHome));
    // The provider gateway (issue 17): agents that name a provider call it through this loopback
    // pass-through, which feeds the provider cap and the token budget. `gatewayRef` is set once the
    // gateway exists; nothing calls through before a run starts.
    let gatewayRef: Gateway | undefined;
    let metricsRef: DaemonMetrics | undefined;
    let tracerRef: RunTracer | undefined;
    const providerGateway = config['providers.enabled']
      ? await startProviderGateway({
          host: '127.0.0.1',
          upstreams: {
            anthropic: config['providers.anthropic.upstream'],
            openai: config['providers.openai.upstream'],
            gemini: config['providers.gemini.upstream'],
          },
          maxInFlight: {
            anthropic: config['providers.anthropic.max_in_flight_requests'],
            openai: config['providers.openai.max_in_flight_requests'],
            gemini: config['providers.gemini.max_in_flight_requests'],
          },
          resolveRun: (token) => {
            const principal = tokens.resolve(token);
            return principal?.kind === 'run' ? principal.runId : undefined;
          },
          clock,
          onExchange: (exchange) => {
            const call = {
              provider: exchange.provider,
              runId: exchange.runId,
              status: exchange.status,
              ...(exchange.retryAfterMs !== undefined ? { retryAfterMs: exchange.retryAfterMs } : {}),
              tokens: exchange.usage.inputTokens + exchange.usage.outputTokens,
            };
            metricsRef?.observeProviderCall(call);
            tracerRef?.providerCall(exchange);
            gatewayRef?.observeProviderCall(call);
          },
        })
      : undefined;
    if (providerGateway) cleanups.push(() => providerGateway.close());
    let baseUrl = '';
    let chats: ChatHost | undefined;

    // Cluster mode (issue 18): only with `cluster.redis_url` set; imported only then, so a single-host
    // daemon loads no Redis client and makes no connection. Closed after the gateway (cleanups run in
    // reverse), so the outcomes of runs the gateway's close ended still reach their origins.
    // In cluster mode the host cap that binds is the worker's concurrency: `cluster.host_cap`, or the cap
    // sized at start. The gateway and `resource_status` use it, so the figures say what binds.
    const hostCap: CapResult =
      config['cluster.redis_url'] !== '' && config['cluster.host_cap'] > 0
        ? { ...startup.cap, cap: config['cluster.host_cap'], capSource: 'pinned' }
        : startup.cap;
    const cluster = await startClusterMode(config, {
      gatewayName: config['cluster.gateway_name'] || defaultGatewayName(crewHome),
      hostCap: hostCap.cap,
      clock,
      log,
      memoryCritical: () => gate.check().isBelowMin,
    });
    if (cluster) cleanups.push(() => cluster.close());

    // OpenTelemetry traces (issue 32 §2): only with an OTLP endpoint in the environment; otherwise nothing
    // is imported or wired, and the runners are the plain ones.
    const tracer = await createRunTracer(env, {
      liveRun: (id) => gatewayRef?.liveRun(id),
      store,
      now: () => clock.now(),
      version: packageVersion(),
      log,
    });
    if (tracer) cleanups.push(() => tracer.close());
    const commandRunner = tracer ? tracedRunner(command, tracer) : command;
    const acpRunner = tracer ? tracedRunner(acp, tracer) : acp;
    tracerRef = tracer;
    // `GET /metrics` (issue 32 §2): counts from start; prom-client loads at the first scrape.
    const metrics = new DaemonMetrics({
      now: () => clock.now(),
      counts: () =>
        gatewayRef?.counts() ?? { queued: 0, queuedSingles: 0, starting: 0, running: 0, permitsHeld: 0 },
      queueLimits: {
        singles: config['agent.subagent_max_queued'],
        waveMembers: config['agent.subagent_max_queued_wave_members'],
      },
      capStatus: () => resources(),
      providerCaps: () => gatewayRef?.providerCaps() ?? {},
      store,
      liveStatus: (id) => gatewayRef?.liveRun(id)?.status,
      treesGb: () => sampler.currentGb(),
      watch: (watcher) => gatewayRef?.watch(watcher) ?? (() => undefined),
    });
    metricsRef = metrics;
    cleanups.push(() => metrics.close());
    const gateway = createGateway(config, {
      clock,
      store,
      sel,
      transcripts: metrics.transcripts(transcripts),
      agents: startAgents,
      agentsAt,
      runnerFor: (agent) => (agent.runner === 'command' ? commandRunner : acpRunner),
      cap: hostCap.cap,
      defaultCwd: options.cwd,
      memoryGate: () => {
        const verdict = gate.check();
        return {
          critical: verdict.isBelowMin,
          minGb: verdict.minGb,
          ...(verdict.reading.availableGb !== undefined ? { availableGb: verdict.reading.availableGb } : {}),
        };
      },
      buildPrompt: (spec, agent) =>
        buildPrompt({
          task: spec.task,
          agent,
          cwd: spec.cwd ?? options.cwd,
          crewHome,
          config,
          ...(spec.includeMemory !== undefined ? { includeMemory: spec.includeMemory } : {}),
          ...(spec.includeLessons !== undefined ? { includeLessons: spec.includeLessons } : {}),
          ...(spec.includeProject !== undefined ? { includeProject: spec.includeProject } : {}),
        }),
      // The token binds the run's own directory: its spawns start there and it can name no other.
      mcpServersFor: (runId, cwd) => [
        {
          name: 'crew',
          url: `${baseUrl}/mcp`,
          headers: { Authorization: `Bearer ${tokens.mint({ kind: 'run', runId, cwd })}` },
        },
      ],
      ...(providerGateway
        ? {
            providerEnvFor: (runId: string, provider: string, cwd: string) =>
              providerGateway.envFor(provider, tokens.mint({ kind: 'run', runId, cwd })),
            liveUsage: (runId: string) => {
              const usage = providerGateway.metrics.runUsage(runId);
              return usage && toProviderUsage(usage);
            },
          }
        : {}),
      runtimeKeyFor: (parent, agent) => chats?.runtimeKeyFor(parent, agent),
      injectionTimeoutMs: injectionTimeoutMs(env, config['agent.subagent_delivery_timeout_secs']),
      log,
      ...(cluster ? { placement: cluster.placement } : {}),
      workspaces: createWorkspaces(crewHome, config, {
        clock,
        store,
        log,
        // A sandboxed agent reaches only the provider gateway and Crew's own MCP endpoint (issue 31).
        sandbox: new BwrapSandbox({
          bwrap: config['workspace.bwrap_path'],
          crewHome,
          hiddenPaths: config['workspace.sandbox_hidden_paths'],
          writablePaths: config['workspace.sandbox_writable_paths'],
          allowedPorts: () =>
            [baseUrl, providerGateway?.url ?? '']
              .map((url) => (url === '' ? 0 : Number(new URL(url).port)))
              .filter((port) => port > 0),
        }),
      }),
      observer: {
        started: (runId, _agent, pid, startTime, shared) => {
          if (pid !== undefined)
            sampler.track(runId, pid, startTime, shared ? { sharedGroup: `pid:${pid}` } : {});
        },
        ended: (runId, agent) => {
          tokens.revoke({ kind: 'run', runId });
          const counted = providerGateway?.metrics.forgetRun(runId);
          const providerUsage = counted && toProviderUsage(counted);
          const usage = sampler.untrack(runId);
          if (!usage) return providerUsage ? { providerUsage } : undefined;
          costLog.appendUsage(agent, usage, clock.now());
          learned = learnCostsFor(costLog.read(), config, startup.cpuCount);
          return { peakMemGb: usage.peakMemGb, ...(providerUsage ? { providerUsage } : {}) };
        },
      },
    });
    cleanups.push(() => gateway.close());
    if (cluster) {
      // The worker takes no new job once the gateway starts closing.
      cleanups.push(() => cluster.stopTaking());
      cluster.bind(gateway, [...new Set(store.outbox({ state: 'pending' }).map((e) => e.parent))]);
    }
    onMemory = (currentGb, settledGb) =>
      gateway.observeMemory({
        availableGb: gate.reading().availableGb,
        currentGb,
        settledGb,
        ...gateCosts(learned),
      });
    // `crew spawn` without --wait: nobody waits, so its events are delivered at once to the events log.
    gateway.attachSink(CLI_LOG_PARENT, new EventsLogSink(join(crewHome, 'events.log')));

    // Hosted chats (DESIGN §6): closed before the gateway, so no parent restarts as the runner closes.
    const chatHost = new ChatHost({
      clock,
      gateway,
      runtimes: acp,
      agents: startAgents,
      agentsAt,
      parentAgent: config['chat.parent_agent'],
      defaultCwd: options.cwd,
      mcpServersFor: (chatId, cwd) => [
        {
          name: 'crew',
          url: `${baseUrl}/mcp`,
          headers: { Authorization: `Bearer ${tokens.mint({ kind: 'chat', chatId, cwd })}` },
        },
      ],
      permissionPolicy: config['agent.permission_policy'],
      attemptTimeoutMs: injectionTimeoutMs(env, config['agent.subagent_delivery_timeout_secs']),
      closeGraceMs: killGraceMs + 1000,
      // The chat's own session is one of the sessions its runtime's usage is divided among.
      onRuntimeStarted: (chatId, runtime) =>
        sampler.track(`chat:${chatId}`, runtime.pid, runtime.startTime, {
          sharedGroup: `pid:${runtime.pid}`,
        }),
      onRuntimeEnded: (chatId) => sampler.untrack(`chat:${chatId}`),
      onClosed: (chatId) => tokens.revoke({ kind: 'chat', chatId }),
      store,
      maxChats: config['chat.max_chats'],
      turnsKept: config['chat.turns_kept'],
      log,
    });
    chats = chatHost;
    cleanups.push(() => chatHost.suspendAll());

    // Slack (issue 16): on when a bot token is set; closed before the chats and the gateway. Imported
    // only then: Bolt is a heavy import that a daemon without Slack should not pay for at every start.
    let slack: SlackService | undefined;
    if (config['slack.bot_token'] !== '') {
      const { createSlackService } = await import('../slack/slack-service.js');
      const service = createSlackService({
        config,
        clock,
        gateway,
        sel,
        ledgerPath: join(crewHome, 'slack.db'),
        runView: (id) => {
          const record = store.run(id);
          return record ? gateway.viewOf(record) : undefined;
        },
        ackedAt: (eventId) => store.outboxEvent(eventId)?.ackedAt,
        pendingParents: () => [...new Set(store.outbox({ state: 'pending' }).map((e) => e.parent))],
        openChat: () => chatHost.create(),
        allowedUsers: liveConfigValue(crewHome, 'slack.allowed_users', config['slack.allowed_users']),
        log,
      });
      slack = service;
      cleanups.push(() => service.close());
    }

    gatewayRef = gateway;
    if (tracer) gateway.watch(tracer.watcher);
    const resources = () => {
      const counts = gateway.counts();
      const status = resourceStatus({
        probe: {
          memory: () => gate.reading(),
          cpuCount: () => probe.cpuCount(),
          loadAverage: () => probe.loadAverage(),
        },
        minMemoryGb: config['agent.spawn_min_memory_gb'],
        cap: hostCap,
        costs: startup.costs,
        basis: hostCap === startup.cap ? startup.basis : { ...startup.basis, pinned_by: 'cluster.host_cap' },
        running: counts.running + counts.starting,
        runningTopLevel: counts.topLevel,
        queued: counts.queued,
      });
      const contained = { ...status, containment: { kind: containment.kind, reason: containment.reason } };
      const withCluster = cluster ? { ...contained, cluster: cluster.status() } : contained;
      if (!providerGateway) return withCluster;
      // Each provider Crew has seen: its cap and hold (the scheduler's) beside its traffic (the gateway's).
      const caps = gateway.providerCaps();
      const traffic = providerGateway.metrics.traffic(clock.now());
      const limits = providerGateway.requestLimits();
      const providers: Record<string, object> = {};
      for (const name of new Set([...Object.keys(caps), ...Object.keys(traffic), ...Object.keys(limits)])) {
        providers[name] = {
          ...ownValue(caps, name),
          ...ownValue(traffic, name),
          ...ownValue(limits, name),
        };
      }
      return { ...withCluster, providers };
    };
    let port = options.port ?? 7878;
    const allowed = () => [`${host}:${port}`, `localhost:${port}`, `127.0.0.1:${port}`];
    // The operator dashboard (`/`, `/api/dashboard`, `/api/ws`): idle until a page or socket uses it.
    const dashboard = new Dashboard({
      gateway,
      viewsOf: (ids) =>
        ids.length === 0
          ? []
          : store.runs({ ids: [...ids], limit: ids.length }).map((r) => gateway.viewOf(r)),
      resources: () => ({ ...resources() }),
      selPath: selPath(crewHome),
      clock,
      readOnly: config['dashboard.read_only'],
      historyMax: config['agent.run_history_max'],
      queueBounds: {
        singles: config['agent.subagent_max_queued'],
        waveMembers: config['agent.subagent_max_queued_wave_members'],
      },
    });
    cleanups.push(() => dashboard.close());
    const cookieName = () => sessionCookieName(port);
    const { app, closeSessions } = createApp({
      authenticate: dashboardAuthenticator(dashboard, cookieName),
      gateway,
      tokens,
      allowedHosts: allowed,
      resources,
      mcpSessions: {
        clock,
        idleMs: config['mcp.session_idle_secs'] * 1000,
        max: config['mcp.max_sessions'],
      },
      setConfig: (key, value) => {
        const raw = readConfigFile(crewHome);
        const checked = parseKeyValue(key, value);
        if (checked.ok) raw[key] = checked.value;
        writeConfigFile(crewHome, raw);
      },
      ...(slack ? { publicRoutes: (app) => slack.mount(app) } : {}),
      metrics: { scrape: () => metrics.scrape(), tokens, scrapeToken: config['metrics.token'] },
    });
    mountChatRoutes(app, chatHost);
    mountDashboardRoutes(app, { dashboard, gateway, cookieName, baseUrl: () => baseUrl });
    const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
      const s = serve({ fetch: app.fetch, hostname: host, port }, () => resolve(s));
      s.once('error', reject);
    });
    port = (server.address() as AddressInfo).port;
    baseUrl = `http://${host}:${port}`;
    // Chats of the last run continue now that their parents can reach Crew's MCP endpoint.
    chatHost.restore();
    const closeSocket = attachDashboardSocket(server as unknown as HttpServer, {
      dashboard,
      tokens,
      allowedHosts: allowed,
      cookieName,
      audit: (refusal, where) => gateway.audit(refusal, where),
    });
    cleanups.push(async () => {
      await closeSocket();
      await closeSessions();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
    });

    const file: GatewayFile = {
      pid: process.pid,
      host,
      port,
      url: baseUrl,
      started_at: new Date().toISOString(),
    };
    writeFileSync(gatewayFilePath(crewHome), `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
    cleanups.push(() => rmSync(gatewayFilePath(crewHome), { force: true }));
    slack?.start();
    log(
      `crew: gateway on ${baseUrl} (cap ${hostCap.cap}, ${hostCap.capSource}; pid ${process.pid}; home ${crewHome})`,
    );

    let stopping: Promise<void> | undefined;
    return {
      url: baseUrl,
      port,
      gateway,
      chats: chatHost,
      config,
      shutdown(graceMs) {
        stopping ??= (async () => {
          gateway.stopAdmitting();
          await gateway.drain(graceMs);
          // Chats first, while their event streams can still say so.
          await chatHost.suspendAll();
          await runCleanups(cleanups);
        })();
        return stopping;
      },
    };
  } catch (error) {
    await runCleanups(cleanups);
    throw error;
  }
}

/** A gateway's cluster name when `cluster.gateway_name` is empty: the host name and a hash of its home. */
function defaultGatewayName(crewHome: string): string {
  const host =
    hostname()
      .toLowerCase()
      .replace(/[^a-z0-9_.-]/g, '-')
      .slice(0, 40) || 'host';
  return `${host}-${createHash('sha256').update(crewHome).digest('hex').slice(0, 8)}`;
}

/**
 * `CREW_HOME` holds the token, the store and every transcript: it is made 0700, also when it already
 * existed with a wider mode (said on the log, since it changes a directory the person made).
 */
export function makeHomePrivate(crewHome: string, log: (line: string) => void): void {
  mkdirSync(crewHome, { recursive: true, mode: 0o700 });
  const mode = statSync(crewHome).mode & 0o777;
  if ((mode & 0o077) === 0) return;
  chmodSync(crewHome, 0o700);
  log(
    `crew: made ${crewHome} private (mode ${mode.toString(8).padStart(4, '0')} → 0700): it holds the token, the run store and transcripts`,
  );
}

async function runCleanups(cleanups: (() => Promise<void> | void)[]): Promise<void> {
  for (const cleanup of [...cleanups].reverse()) {
    try {
      await cleanup();
    } catch {
      // keep closing the rest
    }
  }
  cleanups.length = 0;
}
