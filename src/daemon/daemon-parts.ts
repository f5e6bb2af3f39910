import type { ChatHost } from '../chat/chat-host.js';
import type { Clock } from '../core/clock.js';
import type { CrewConfig } from '../core/config-schema.js';
import type { Gateway } from '../gateway/gateway.js';
import type { ClientNames } from '../http/client-names.js';
import type { DaemonMetrics } from '../metrics/daemon-metrics.js';
import type { RunTracer } from '../tracing/run-tracer.js';
import type { Cleanups } from './cleanups.js';
import type { DaemonResources } from './daemon-resources.js';

/** What every start step of the daemon reads: its home, its config, its clock and log, and the cleanups. */
export interface DaemonBase {
  crewHome: string;
  env: NodeJS.ProcessEnv;
  /** The project directory (`./.crew/agents`) and the default cwd of runs. */
  cwd: string;
  /** The address the HTTP server binds. */
  host: string;
  config: CrewConfig;
  clock: Clock;
  log: (line: string) => void;
  /** Each step adds what it opened; closed in reverse (see {@link Cleanups}). */
  cleanups: Cleanups;
}

/**
 * Parts made after the steps whose callbacks reach them (the provider gateway reports to the gateway,
 * the gateway mints MCP URLs from the server's address): set once made. Nothing calls through before:
 * no run starts and no request arrives until the HTTP server listens, the last step.
 */
export interface LateParts {
  /** `http://host:port`, once the server listens; '' before. */
  baseUrl: string;
  gateway?: Gateway;
  metrics?: DaemonMetrics;
  tracer?: RunTracer | undefined;
  chats?: ChatHost;
  resources?: () => DaemonResources;
  /** The names MCP clients gave themselves (made with the HTTP app; admission keeps them with runs). */
  clientNames?: ClientNames;
}
