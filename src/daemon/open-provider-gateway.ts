import type { Tokens } from '../http/tokens.js';
import { type ProviderGateway, startProviderGateway } from '../provider/provider-gateway.js';
import type { DaemonBase, LateParts } from './daemon-parts.js';

/**
 * The provider gateway (issue 17), when `providers.enabled`: agents that name a provider call it through
 * this loopback pass-through, which feeds the provider cap and the token budget. It reports each exchange
 * to the gateway, the metrics and the tracer through `late`: nothing calls through before a run starts.
 */
export async function openProviderGateway(
  base: DaemonBase,
  tokens: Tokens,
  late: LateParts,
): Promise<ProviderGateway | undefined> {
  const { config } = base;
  if (!config['providers.enabled']) return undefined;
  const providerGateway = await startProviderGateway({
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
    clock: base.clock,
    onExchange: (exchange) => {
      const call = {
        provider: exchange.provider,
        runId: exchange.runId,
        status: exchange.status,
        ...(exchange.retryAfterMs !== undefined ? { retryAfterMs: exchange.retryAfterMs } : {}),
        tokens: exchange.usage.inputTokens + exchange.usage.outputTokens,
      };
      late.metrics?.observeProviderCall(call);
      late.tracer?.providerCall(exchange);
      late.gateway?.observeProviderCall(call);
    },
  });
  base.cleanups.add(() => providerGateway.close());
  return providerGateway;
}
