import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Clock } from '../core/clock.js';
import { type Exchange, ProviderMetrics, type RunUsage } from './provider-metrics.js';
import { createProviderProxy } from './provider-proxy.js';
import { RequestGate } from './request-gate.js';

/**
 * The provider gateway as the daemon runs it: the pass-through on its own loopback port, its metrics,
 * and the environment that points an agent at it. The base URL carries the run's token and the provider
 * (`http://127.0.0.1:PORT/p/<run token>/<provider>`), so every call is attributed to its run; a run's
 * token is revoked when it ends, so a late call is refused 401.
 */
export interface ProviderGateway {
  readonly url: string;
  readonly metrics: ProviderMetrics;
  /** Each bounded provider's requests in flight, waiting, and bound now (`resource_status`). */
  requestLimits(): Record<string, { max_in_flight_requests: number; queued_requests: number }>;
  /** The environment variables that send `provider`'s calls through the gateway under `token`. */
  envFor(provider: string, token: string): Record<string, string>;
  close(): Promise<void>;
}

/** The gateway's base URL for the run, whatever the provider (and `{provider_base_url}` in a command). */
export const PROVIDER_BASE_URL_VARIABLE = 'CREW_PROVIDER_BASE_URL';

/** The variable each provider's CLIs read their base URL from. */
const BASE_URL_VARIABLE: ReadonlyMap<string, string> = new Map([
  ['anthropic', 'ANTHROPIC_BASE_URL'],
  ['openai', 'OPENAI_BASE_URL'],
  ['gemini', 'GOOGLE_GEMINI_BASE_URL'],
]);

export async function startProviderGateway(options: {
  host: string;
  upstreams: Readonly<Record<string, string>>;
  resolveRun: (token: string) => string | undefined;
  clock: Clock;
  onExchange?: (exchange: Exchange, usage: RunUsage) => void;
  /** Provider → its bound on requests in flight (0 or absent = none). */
  maxInFlight?: Readonly<Record<string, number>>;
  /** The request gates' queue bounds (tests shorten the wait). */
  requestQueue?: { maxQueued?: number; maxWaitMs?: number };
}): Promise<ProviderGateway> {
  const metrics = new ProviderMetrics();
  const gates = new Map<string, RequestGate>();
  for (const [provider, bound] of Object.entries(options.maxInFlight ?? {})) {
    if (bound > 0)
      gates.set(
        provider,
        new RequestGate({
          maxInFlight: bound,
          clock: options.clock,
          ...options.requestQueue,
        }),
      );
  }
  const server = createServer(
    createProviderProxy({
      upstreams: options.upstreams,
      resolveRun: options.resolveRun,
      metrics,
      clock: options.clock,
      gates: Object.fromEntries(gates),
      ...(options.onExchange ? { onExchange: options.onExchange } : {}),
    }),
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, options.host, () => resolve());
  });
  const url = `http://${options.host}:${(server.address() as AddressInfo).port}`;
  return {
    url,
    metrics,
    requestLimits() {
      const out: Record<string, { max_in_flight_requests: number; queued_requests: number }> = {};
      for (const [provider, gate] of gates) {
        const { queued, limit } = gate.snapshot();
        out[provider] = { max_in_flight_requests: limit, queued_requests: queued };
      }
      return out;
    },
    envFor(provider, token) {
      const variable = BASE_URL_VARIABLE.get(provider);
      if (!variable) return {};
      const base = `${url}/p/${token}/${provider}`;
      // CREW_PROVIDER_BASE_URL also fills `{provider_base_url}` in the agent's command (codex's `-c`).
      return { [variable]: base, [PROVIDER_BASE_URL_VARIABLE]: base };
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const gate of gates.values()) gate.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
