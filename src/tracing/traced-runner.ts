import type { Runner } from '../runners/runner.js';
import type { RunTracer } from './run-tracer.js';

/**
 * A runner whose runs start with their span's `TRACEPARENT` in the agent's environment (as an agent `env`
 * entry, so it reaches the process the way every agent variable does), letting an instrumented agent CLI
 * continue the trace. A shared ACP runtime's environment is its first run's. Only used with tracing on.
 */
export function tracedRunner(inner: Runner, tracer: Pick<RunTracer, 'traceparentOf'>): Runner {
  return {
    start(request, onEvent) {
      const traceparent = tracer.traceparentOf(request.runId);
      const traced =
        traceparent === undefined
          ? request
          : {
              ...request,
              agent: { ...request.agent, env: { ...request.agent.env, TRACEPARENT: traceparent } },
            };
      return inner.start(traced, onEvent);
    },
    release: (conversationId) => inner.release(conversationId),
    close: () => inner.close(),
  };
}
