import type { Clock, TimerHandle } from '../core/clock.js';
import type { CrewConfig } from '../core/config-schema.js';
import { Scheduler } from '../core/scheduler.js';
import { withPruneHook, withWorkspaceRunners } from '../runners/workspace-wiring.js';
import type { OutboxEvent } from '../store/store.js';
import { Delivery } from './delivery.js';
import type { GatewayDeps } from './gateway-deps.js';
import type { Placement } from './placement.js';
import { providerLimits } from './provider-feed.js';
import { RunSupervisor, type RunSupervisorDeps } from './run-supervisor.js';

/*
 * The gateway's parts, built from its config and deps (issue 30: out of gateway.ts, which wires them to
 * each other and is its API and lifecycle).
 */

/**
 * The gateway's pure scheduler, from the config, the host cap and the placement: the scheduler holds
 * proxies of runs placed elsewhere beside the runs this host executes, weighs only the runs that start a
 * process here, and applies the per-host provider limits only where no shared cap binds.
 */
export function schedulerFor(config: CrewConfig, cap: number, placement: Placement): Scheduler {
  return new Scheduler({
    cap: cap + placement.proxyRoom,
    staggerMs: config['agent.subagent_spawn_stagger_secs'] * 1000,
    ...(placement.startsHere ? { startsHere: placement.startsHere } : {}),
    maxQueued: config['agent.subagent_max_queued'],
    maxQueuedWaveMembers: config['agent.subagent_max_queued_wave_members'],
    maxDepth: config['agent.subagent_max_depth'],
    maxChildren: config['agent.subagent_max_children'],
    timeoutMs: config['agent.subagent_timeout_secs'] * 1000,
    reservationBufferGb: config['agent.reservation_buffer_gb'],
    fallbackCostGb: config['agent.subagent_cost_gb'],
    ...(placement.providerLimitsHere ? providerLimits(config, cap) : {}),
  });
}

/** Calls `fn` every `intervalMs` on `clock` until the returned function is called. */
export function every(clock: Clock, intervalMs: number, fn: () => void): () => void {
  let handle: TimerHandle | undefined;
  let stopped = false;
  const arm = () => {
    handle = clock.setTimer(() => {
      if (stopped) return;
      fn();
      arm();
    }, intervalMs);
  };
  arm();
  return () => {
    stopped = true;
    if (handle !== undefined) clock.clearTimer(handle);
  };
}

/** Delivery and the reaper: a workspace run's transcript prune also removes its worktree. */
export function deliveryFor(
  config: CrewConfig,
  deps: GatewayDeps,
  epoch: number,
  log: (line: string) => void,
  scheduler: Scheduler,
  hooks: {
    releaseConversation: (id: string, reason: 'expired' | 'evicted') => void;
    onUndeliverable: (event: OutboxEvent) => void;
  },
): Delivery {
  return new Delivery({
    clock: deps.clock,
    store: deps.store,
    transcripts: deps.workspaces ? withPruneHook(deps.transcripts, deps.workspaces, log) : deps.transcripts,
    epoch,
    config,
    ...(deps.injectionTimeoutMs !== undefined ? { injectionTimeoutMs: deps.injectionTimeoutMs } : {}),
    ...(deps.reaperIntervalMs !== undefined ? { reaperIntervalMs: deps.reaperIntervalMs } : {}),
    idleConversations: () => scheduler.idleConversations(),
    liveConversations: () => scheduler.liveConversationIds(),
    log,
    ...hooks,
  });
}

/** The run supervisor: runs in isolated workspaces start through the workspace runners. */
export function supervisorFor(
  deps: GatewayDeps,
  log: (line: string) => void,
  step: RunSupervisorDeps['step'],
): RunSupervisor {
  return new RunSupervisor({
    step,
    runnerFor: deps.workspaces ? withWorkspaceRunners(deps.runnerFor, deps.workspaces) : deps.runnerFor,
    transcripts: deps.transcripts,
    ...(deps.observer ? { observer: deps.observer } : {}),
    log,
  });
}
