import type { Run, RunId } from '../core/types.js';
import type { GatewayChange } from '../gateway/gateway.js';
import type { Exchange } from '../provider/provider-metrics.js';
import type { Store } from '../store/store.js';

/**
 * Runs as OpenTelemetry traces (issue 32 §2), on when `OTEL_EXPORTER_OTLP_ENDPOINT` (or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set. Without it {@link createRunTracer} answers undefined
 * without importing any OpenTelemetry module, and the daemon wires nothing: the spawn path is unchanged.
 */
export interface RunTracer {
  /** For `gateway.watch`: opens a run's span when it is admitted, closes it when it ends. */
  watcher(change: GatewayChange): void;
  /** A model request through the provider gateway: a child span of its run. */
  providerCall(exchange: Exchange): void;
  /** The W3C traceparent of a live run's span (the agent's `TRACEPARENT`), if it has one. */
  traceparentOf(runId: RunId): string | undefined;
  /** Ends the spans still open and sends what is buffered. */
  close(): Promise<void>;
}

export interface RunTracerSources {
  liveRun(id: RunId): Readonly<Run> | undefined;
  store: Pick<Store, 'run'>;
  now(): number;
  /** Crew's version (`service.version`). */
  version: string;
  log(line: string): void;
}

export async function createRunTracer(
  env: NodeJS.ProcessEnv,
  sources: RunTracerSources,
): Promise<RunTracer | undefined> {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint || env.OTEL_SDK_DISABLED === 'true' || env.OTEL_TRACES_EXPORTER === 'none') return undefined;
  const { OtelRunTracer } = await import('./otel-run-tracer.js');
  return OtelRunTracer.create(env, sources);
}
