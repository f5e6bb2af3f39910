import type { AgentDef } from '../core/agent-def.js';
import type { Clock } from '../core/clock.js';
import type { CrewConfig } from '../core/config-schema.js';
import type { ProviderCapPolicy } from '../core/provider-cap.js';
import type { Scheduler } from '../core/scheduler.js';
import type { SchedulerEvent } from '../core/scheduler-types.js';
import type { RunId } from '../core/types.js';
import type { RunRequest } from '../runners/runner.js';
import type { GatewayDeps } from './gateway-deps.js';
import type { RunView } from './run-view.js';

/** In an agent's command, the run's provider gateway base URL (for CLIs that take it as a flag, like codex). */
const PROVIDER_URL_PLACEHOLDER = '{provider_base_url}';

/**
 * The command with `{provider_base_url}` filled in; without a gateway URL (the gateway is off, or the
 * run shares a runtime) an argument that names it is dropped, so the CLI falls back to its own setting.
 */
/** Whether an agent's command carries the provider URL placeholder. */
function namesProviderUrl(command: readonly string[]): boolean {
  for (const arg of command) if (arg.includes(PROVIDER_URL_PLACEHOLDER)) return true;
  return false;
}

export function withProviderUrl(command: readonly string[], url: string | undefined): string[] {
  // Most commands name no URL: one copy instead of an array per argument (this runs at every launch).
  if (!namesProviderUrl(command)) return [...command];
  return command.flatMap((arg) => {
    if (!arg.includes(PROVIDER_URL_PLACEHOLDER)) return [arg];
    return url === undefined ? [] : [arg.split(PROVIDER_URL_PLACEHOLDER).join(url)];
  });
}

/** One provider's cap as `resource_status`'s `providers` shows it (the traffic comes from the proxy). */
export interface ProviderCapView {
  cap: number;
  cap_source: 'configured' | 'adaptive';
  /**
   * Which cap holds this provider's starts back now: `provider` while a hold lasts or its cap is below
   * the host cap, else `host` (the tighter wins).
   */
  binds: 'host' | 'provider';
  hold_until: string | null;
  running: number;
}

/** A model request of a run, answered (what the provider gateway tells the gateway after each exchange). */
export interface ProviderCall {
  provider: string;
  runId: RunId;
  status: number;
  retryAfterMs?: number;
  /** This call's tokens (input + output). */
  tokens: number;
}

/**
 * The provider gateway's feed into admission (issue 17): each answered model request becomes scheduler
 * events (a rate limit, a token budget passed), and the scheduler's provider state becomes views (the
 * `providers` caps, a queued run's `waiting_for: provider`).
 */
export class ProviderFeed {
  constructor(
    private readonly deps: {
      scheduler: Pick<Scheduler, 'providerStatus' | 'waitsForProvider' | 'liveRun' | 'limits'>;
      clock: Clock;
      config: CrewConfig;
      step: (event: SchedulerEvent) => void;
      providerEnvFor?: GatewayDeps['providerEnvFor'];
    },
  ) {}

  /**
   * A 429 / 529 / 503 lowers that provider's cap and holds its starts; the call's tokens count against
   * the run's budget (the scheduler stops its turn past it: `stop: token_budget`).
   */
  observe(call: ProviderCall): void {
    if (call.status === 429 || call.status === 529 || call.status === 503) {
      this.deps.step({
        type: 'provider_limited',
        provider: call.provider,
        runId: call.runId,
        ...(call.retryAfterMs !== undefined ? { retryAfterMs: call.retryAfterMs } : {}),
      });
    }
    if (call.tokens > 0 && this.deps.scheduler.liveRun(call.runId)) {
      this.deps.step({ type: 'tokens', runId: call.runId, tokens: call.tokens });
    }
  }

  /** Each provider's cap, hold and running count (`resource_status`'s `providers`). */
  caps(): Record<string, ProviderCapView> {
    const now = this.deps.clock.now();
    const out: Record<string, ProviderCapView> = {};
    for (const [name, p] of Object.entries(this.deps.scheduler.providerStatus())) {
      const held = p.holdUntil > now;
      out[name] = {
        cap: p.cap,
        cap_source: p.source,
        binds: held || p.cap < this.deps.scheduler.limits.cap ? 'provider' : 'host',
        hold_until: p.holdUntil > now ? new Date(p.holdUntil).toISOString() : null,
        running: p.running,
      };
    }
    return out;
  }

  /** A queued run that waits for its provider (cap or hold) says so, with the hold's end. */
  withWaiting(view: RunView): RunView {
    if (view.status !== 'queued') return view;
    const run = this.deps.scheduler.liveRun(view.id);
    const waiting = run ? this.deps.scheduler.waitsForProvider(run, this.deps.clock.now()) : undefined;
    if (!waiting) return view;
    return {
      ...view,
      waiting_for: 'provider',
      ...(waiting.holdUntil !== undefined ? { hold_until: new Date(waiting.holdUntil).toISOString() } : {}),
    };
  }

  /**
   * The agent as this run launches it: a dedicated process gets the provider gateway's base URL with its
   * own run token in its environment (and `{provider_base_url}` in its command); a shared runtime's one
   * environment cannot speak for each of its runs, so it calls the provider as is. The same object when
   * nothing changes.
   */
  routed(
    agent: AgentDef,
    runId: RunId,
    request: Pick<RunRequest, 'shared' | 'runtimeKey' | 'cwd'>,
  ): AgentDef {
    const provider = this.providerOf(agent);
    const env =
      provider !== undefined &&
      this.deps.providerEnvFor &&
      !request.shared &&
      request.runtimeKey === undefined
        ? this.deps.providerEnvFor(runId, provider, request.cwd)
        : undefined;
    // The common launch (no provider URL to route, no placeholder to drop) runs the agent as it is.
    if (env === undefined && !namesProviderUrl(agent.command)) return agent;
    const command = withProviderUrl(agent.command, env?.CREW_PROVIDER_BASE_URL);
    const sameCommand =
      command.length === agent.command.length && command.every((a, i) => a === agent.command[i]);
    if (!env && sameCommand) return agent;
    return { ...agent, command, ...(env ? { env: { ...agent.env, ...env } } : {}) };
  }

  /** The provider an agent calls through the gateway, when the gateway is on. */
  providerOf(agent: AgentDef | undefined): string | undefined {
    return this.deps.config['providers.enabled'] ? agent?.provider : undefined;
  }
}

/**
 * The provider caps: an adaptive one starts at the host cap (it binds only once the provider pushes
 * back); a configured one (`providers.NAME.cap`) is the operator's number. None when the gateway is off.
 */
export function providerLimits(config: CrewConfig, hostCap: number): { provider?: ProviderCapPolicy } {
  const fixed: Record<string, number> = {};
  for (const name of ['anthropic', 'openai', 'gemini'] as const) {
    const cap = config[`providers.${name}.cap`];
    if (cap > 0) fixed[name] = cap;
  }
  const adaptive = config['providers.adaptive_cap'];
  if (!config['providers.enabled'] || (!adaptive && Object.keys(fixed).length === 0)) return {};
  return {
    provider: {
      initialCap: hostCap,
      maxCap: Math.max(hostCap, config['agent.subagent_auto_max']),
      fixed,
      adaptive,
    },
  };
}
