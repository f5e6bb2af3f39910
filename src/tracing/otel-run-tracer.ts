import {
  type Context,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { isTerminal, type RunId } from '../core/types.js';
import type { GatewayChange } from '../gateway/gateway.js';
import type { Exchange } from '../provider/provider-metrics.js';
import type { RunTracer, RunTracerSources } from './run-tracer.js';
import { currentTraceparent } from './trace-scope.js';

/** Statuses whose run span is an error (a cancelled run is the parent's choice, not a fault). */
const ERROR_STATUSES = new Set(['failed', 'timed_out', 'lost']);

interface OpenRun {
  span: Span;
  /** Open while the run waits for a permit (queued, starting). */
  wait: Span | undefined;
  traceparent: string;
}

/** A traceparent's span context as the remote parent of a run's span. */
function parentContext(traceparent: string | undefined): Context {
  if (traceparent === undefined) return ROOT_CONTEXT;
  const [, traceId = '', spanId = '', flags = '00'] = traceparent.split('-');
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId,
    spanId,
    traceFlags: Number.parseInt(flags, 16) & TraceFlags.SAMPLED,
    isRemote: true,
  });
}

/**
 * The OpenTelemetry side of {@link RunTracer}, loaded only when an OTLP endpoint is configured. A run's
 * span follows the GenAI semantic conventions' agent invocation (`invoke_agent {agent}`, attributes
 * `gen_ai.operation.name`, `gen_ai.agent.name`, `gen_ai.agent.id`, `gen_ai.provider.name`); its children are
 * `crew.admission_wait` (admitted → holding a permit and launched) and one `chat` span per model request
 * through the provider gateway. Spans go out in batches over OTLP/HTTP (JSON).
 */
export class OtelRunTracer implements RunTracer {
  private readonly open = new Map<RunId, OpenRun>();

  private constructor(
    private readonly provider: BasicTracerProvider,
    private readonly tracer: Tracer,
    private readonly sources: RunTracerSources,
  ) {}

  static create(env: NodeJS.ProcessEnv, sources: RunTracerSources): OtelRunTracer {
    const base = (env.OTEL_EXPORTER_OTLP_ENDPOINT ?? '').replace(/\/+$/, '');
    const url = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || `${base}/v1/traces`;
    const delay = Number(env.OTEL_BSP_SCHEDULE_DELAY);
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({
        'service.name': env.OTEL_SERVICE_NAME || 'crew',
        'service.version': sources.version,
      }),
      spanProcessors: [
        new BatchSpanProcessor(new OTLPTraceExporter({ url }), {
          ...(Number.isFinite(delay) && delay > 0 ? { scheduledDelayMillis: delay } : {}),
        }),
      ],
    });
    sources.log(`crew: tracing: runs are exported as OpenTelemetry spans to ${url}`);
    return new OtelRunTracer(provider, provider.getTracer('crew', sources.version), sources);
  }

  watcher = (change: GatewayChange): void => {
    if (change.kind !== 'runs') return;
    for (const id of change.runIds) {
      const live = this.sources.liveRun(id);
      const open = this.open.get(id);
      if (live && !open) this.begin(id, live.agent, live.provider, live.parent, live.createdAt, live.status);
      else if (live && open?.wait && live.status === 'running') this.endWait(open, live.startedAt);
      else if (!live && open) this.finish(id, open);
    }
  };

  providerCall(exchange: Exchange): void {
    const open = this.open.get(exchange.runId);
    if (!open) return;
    const span = this.tracer.startSpan(
      'chat',
      {
        kind: SpanKind.CLIENT,
        startTime: exchange.startedAt,
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': exchange.provider,
          'http.response.status_code': exchange.status,
          'gen_ai.usage.input_tokens': exchange.usage.inputTokens,
          'gen_ai.usage.output_tokens': exchange.usage.outputTokens,
        },
      },
      trace.setSpan(ROOT_CONTEXT, open.span),
    );
    if (exchange.status >= 400) {
      span.setAttribute('error.type', String(exchange.status));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end(exchange.endedAt);
  }

  traceparentOf(runId: RunId): string | undefined {
    return this.open.get(runId)?.traceparent;
  }

  async close(): Promise<void> {
    for (const [id, open] of this.open) this.finish(id, open);
    await this.provider.shutdown().catch((error: unknown) => {
      this.sources.log(`crew: tracing: sending the last spans failed: ${String(error)}`);
    });
  }

  private begin(
    id: RunId,
    agent: string,
    provider: string | undefined,
    parent: string,
    createdAt: number,
    status: string,
  ): void {
    // The MCP request's traceparent, when this admission happens inside a traced tool call.
    const ctx = parentContext(currentTraceparent());
    const span = this.tracer.startSpan(
      `invoke_agent ${agent}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: createdAt,
        attributes: {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.agent.name': agent,
          'gen_ai.agent.id': id,
          ...(provider !== undefined ? { 'gen_ai.provider.name': provider } : {}),
          'crew.run.parent': parent,
        },
      },
      ctx,
    );
    const sc = span.spanContext();
    const traceparent = `00-${sc.traceId}-${sc.spanId}-${sc.traceFlags.toString(16).padStart(2, '0')}`;
    const wait =
      status === 'running'
        ? undefined
        : this.tracer.startSpan(
            'crew.admission_wait',
            { startTime: createdAt },
            trace.setSpan(ROOT_CONTEXT, span),
          );
    this.open.set(id, { span, wait, traceparent });
  }

  private endWait(open: OpenRun, at: number | undefined): void {
    open.wait?.end(at ?? this.sources.now());
    open.wait = undefined;
  }

  private finish(id: RunId, open: OpenRun): void {
    this.open.delete(id);
    const record = this.sources.store.run(id);
    const run = record?.run;
    this.endWait(open, run?.startedAt ?? run?.endedAt);
    if (run && isTerminal(run.status)) {
      open.span.setAttribute('crew.run.status', run.status);
      if (ERROR_STATUSES.has(run.status)) {
        open.span.setAttribute('error.type', record?.errorKind ?? run.status);
        open.span.setStatus({ code: SpanStatusCode.ERROR, ...(run.error ? { message: run.error } : {}) });
      }
    }
    open.span.end(run?.endedAt ?? this.sources.now());
  }
}
