import type { ProcessTreeSampler } from '../host/sampler.js';
import { DaemonMetrics } from '../metrics/daemon-metrics.js';
import { packageVersion } from '../package-version.js';
import type { Runner } from '../runners/runner.js';
import type { SqliteStore } from '../store/sqlite-store.js';
import { createRunTracer } from '../tracing/run-tracer.js';
import { tracedRunner } from '../tracing/traced-runner.js';
import type { DaemonBase, LateParts } from './daemon-parts.js';
import type { DaemonRunners } from './open-runners.js';

export interface Observability {
  metrics: DaemonMetrics;
  /** The runners the gateway uses: traced when a tracer is on, else the plain ones. */
  commandRunner: Runner;
  acpRunner: Runner;
}

/**
 * OpenTelemetry traces (issue 32 §2): only with an OTLP endpoint in the environment; otherwise nothing is
 * imported or wired, and the runners are the plain ones. `GET /metrics` counts from start; prom-client
 * loads at the first scrape. Both read the gateway through `late`.
 */
export async function openObservability(
  base: DaemonBase,
  parts: { store: SqliteStore; runners: DaemonRunners; sampler: ProcessTreeSampler },
  late: LateParts,
): Promise<Observability> {
  const { config, clock, cleanups } = base;
  const { store, runners, sampler } = parts;
  const tracer = await createRunTracer(base.env, {
    liveRun: (id) => late.gateway?.liveRun(id),
    store,
    now: () => clock.now(),
    version: packageVersion(),
    log: base.log,
  });
  if (tracer) cleanups.add(() => tracer.close());
  const commandRunner = tracer ? tracedRunner(runners.command, tracer) : runners.command;
  const acpRunner = tracer ? tracedRunner(runners.acp, tracer) : runners.acp;
  late.tracer = tracer;
  const metrics = new DaemonMetrics({
    now: () => clock.now(),
    counts: () =>
      late.gateway?.counts() ?? { queued: 0, queuedSingles: 0, starting: 0, running: 0, permitsHeld: 0 },
    queueLimits: {
      singles: config['agent.subagent_max_queued'],
      waveMembers: config['agent.subagent_max_queued_wave_members'],
    },
    // Set with the gateway, before the server listens: no scrape comes earlier.
    capStatus: () => late.resources!(),
    providerCaps: () => late.gateway?.providerCaps() ?? {},
    store,
    liveStatus: (id) => late.gateway?.liveRun(id)?.status,
    treesGb: () => sampler.currentGb(),
    watch: (watcher) => late.gateway?.watch(watcher) ?? (() => undefined),
  });
  late.metrics = metrics;
  cleanups.add(() => metrics.close());
  return { metrics, commandRunner, acpRunner };
}
