import { join } from 'node:path';
import { injectionTimeoutMs } from '../chat/injection-timeout.js';
import type { ClusterMode } from '../cluster/cluster-mode.js';
import { buildPrompt } from '../context/build-prompt.js';
import type { CapResult } from '../core/cap.js';
import { createGateway } from '../gateway/create-gateway.js';
import type { Gateway } from '../gateway/gateway.js';
import { gateCosts, learnCostsFor } from '../host/cap-at-start.js';
import type { Tokens } from '../http/tokens.js';
import type { ProviderGateway } from '../provider/provider-gateway.js';
import { toProviderUsage } from '../provider/provider-metrics.js';
import type { MemoryPauser } from '../runners/memory-pauser.js';
import type { SelWriter } from '../sel/sel-writer.js';
import type { SqliteStore } from '../store/sqlite-store.js';
import { createWorkspaces } from '../workspace/create-workspaces.js';
import { BwrapSandbox } from '../workspace/sandbox.js';
import { CLI_LOG_PARENT } from './daemon-address.js';
import type { DaemonBase, LateParts } from './daemon-parts.js';
import { EventsLogSink } from './events-log-sink.js';
import type { DaemonAgents } from './open-agents.js';
import type { HostParts } from './open-host.js';
import type { Observability } from './open-observability.js';
import type { DaemonRunners } from './open-runners.js';

/** What the gateway is composed from: every part the steps before it opened. */
export interface GatewayParts {
  agents: DaemonAgents;
  host: HostParts;
  store: SqliteStore;
  sel: SelWriter;
  runners: DaemonRunners;
  observability: Observability;
  tokens: Tokens;
  providerGateway: ProviderGateway | undefined;
  hostCap: CapResult;
  cluster: ClusterMode | undefined;
}

/**
 * The gateway, composed from the daemon's parts (`createGateway`, the one composition root): the run's
 * MCP endpoint and provider environment carry a token minted for it, the sampler tracks its process tree,
 * and its end teaches the cost log. Then the sampler's ticks feed its reservation gate, and `crew spawn`
 * without `--wait` gets its events in the events log.
 */
export function buildGateway(base: DaemonBase, parts: GatewayParts, late: LateParts): Gateway {
  const { config, clock, crewHome, env, log } = base;
  const { host, store, tokens, providerGateway, cluster } = parts;
  const { gate, sampler, costLog, startup } = host;
  const { metrics, commandRunner, acpRunner } = parts.observability;
  const gateway = createGateway(config, {
    clock,
    store,
    isPaused: (runId) => parts.runners.pauser.isPaused(runId),
    sel: parts.sel,
    transcripts: metrics.transcripts(parts.runners.transcripts),
    agents: parts.agents.startAgents,
    agentsAt: parts.agents.agentsAt,
    runnerFor: (agent) => (agent.runner === 'command' ? commandRunner : acpRunner),
    cap: parts.hostCap.cap,
    defaultCwd: base.cwd,
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
        cwd: spec.cwd ?? base.cwd,
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
        url: `${late.baseUrl}/mcp`,
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
    runtimeKeyFor: (parent, agent) => late.chats?.runtimeKeyFor(parent, agent),
    parentNameOf: (parent) => late.clientNames?.get(parent),
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
          [late.baseUrl, providerGateway?.url ?? '']
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
        host.learned = learnCostsFor(costLog.read(), config, startup.cpuCount);
        return { peakMemGb: usage.peakMemGb, ...(providerUsage ? { providerUsage } : {}) };
      },
    },
  });
  base.cleanups.add(() => gateway.close());
  return gateway;
}

/**
 * What the gateway is wired to once it exists: the sampler's ticks feed its reservation gate (what each
 * run holds now, against what its agent is expected to), and `crew spawn` without `--wait` (nobody
 * waits) gets its events delivered at once to the events log.
 */
export function wireGateway(base: DaemonBase, gateway: Gateway, host: HostParts, pauser: MemoryPauser): void {
  host.onMemory = (currentGb, settledGb) => {
    const availableGb = host.gate.reading().availableGb;
    const costs = gateCosts(host.learned);
    pauser.tick({ availableGb, currentGb, settledGb, expectedGb: costs.expectedGb });
    gateway.observeMemory({ availableGb, currentGb, settledGb, ...costs, paused: pauser.pausedRuns() });
  };
  gateway.attachSink(CLI_LOG_PARENT, new EventsLogSink(join(base.crewHome, 'events.log')));
}
