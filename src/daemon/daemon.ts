import { chmodSync, mkdirSync, statSync } from 'node:fs';
import type { ChatHost } from '../chat/chat-host.js';
import { realClock } from '../clock/real-clock.js';
import { loadConfig } from '../config/config-file.js';
import type { CrewConfig } from '../core/config-schema.js';
import type { Gateway } from '../gateway/gateway.js';
import { loadOperatorToken, Tokens } from '../http/tokens.js';
import { buildGateway, wireGateway } from './build-gateway.js';
import { Cleanups } from './cleanups.js';
import type { DaemonBase, LateParts } from './daemon-parts.js';
import { daemonResources } from './daemon-resources.js';
import { writeGatewayFile } from './gateway-file.js';
import { acquireLock } from './lock.js';
import { openAgents } from './open-agents.js';
import { openChats } from './open-chats.js';
import { hostCapOf, openCluster } from './open-cluster.js';
import { openHost } from './open-host.js';
import { openObservability } from './open-observability.js';
import { openProviderGateway } from './open-provider-gateway.js';
import { openRunners } from './open-runners.js';
import { openSel } from './open-sel.js';
import { openSlack } from './open-slack.js';
import { openStore } from './open-store.js';
import { serveHttp } from './serve-http.js';

export interface DaemonOptions {
  crewHome: string;
  /** @default '127.0.0.1' */
  host?: string;
  /** 0 picks a free port. @default 7878 */
  port?: number;
  /** The project directory (`./.crew/agents`) and the default cwd of runs. */
  cwd: string;
  env: NodeJS.ProcessEnv;
  log?: (line: string) => void;
}

export interface Daemon {
  url: string;
  port: number;
  gateway: Gateway;
  /** Hosted chats (`/api/chats`). */
  chats: ChatHost;
  config: CrewConfig;
  /** Stop admitting, wait up to `graceMs` for runs to end, cancel the rest, close everything. */
  shutdown(graceMs: number): Promise<void>;
}

/**
 * `crew serve`: the one gateway of this host on `$CREW_HOME` — SQLite store, file transcripts, the SEL
 * on disk, real runners, the auto-sized cap — behind HTTP (`/mcp` and `/api`). A second daemon on the
 * same home refuses to start, naming the running one.
 *
 * A sequence of steps (one file each under src/daemon/), each adding what it opened to `cleanups`, which
 * close in reverse: the order below is also the close order read backwards, and it matters (the gateway
 * closes before the runners, the store and the cluster it uses; the chats and Slack before the gateway;
 * the HTTP server first). A step that fails closes what the steps before it opened.
 */
export async function startDaemon(options: DaemonOptions): Promise<Daemon> {
  const { crewHome, env } = options;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  makeHomePrivate(crewHome, log);
  const cleanups = new Cleanups();
  cleanups.add(acquireLock(crewHome));
  try {
    const { config, clamped } = loadConfig(crewHome);
    const host = options.host ?? '127.0.0.1';
    const base: DaemonBase = {
      crewHome,
      env,
      cwd: options.cwd,
      host,
      config,
      clock: realClock,
      log,
      cleanups,
    };
    const late: LateParts = { baseUrl: '' };
    const sel = openSel(base, clamped);
    const agents = openAgents(base);
    const hostParts = openHost(base);
    const { store, containment } = await openStore(base, hostParts.hostRoot);
    const runners = openRunners(base, containment);
    const tokens = new Tokens(loadOperatorToken(crewHome));
    const providerGateway = await openProviderGateway(base, tokens, late);
    const hostCap = hostCapOf(config, hostParts.startup.cap);
    const cluster = await openCluster(base, hostCap, hostParts.gate);
    const observability = await openObservability(base, { store, runners, sampler: hostParts.sampler }, late);
    const gateway = buildGateway(
      base,
      {
        agents,
        host: hostParts,
        store,
        sel,
        runners,
        observability,
        tokens,
        providerGateway,
        hostCap,
        cluster,
      },
      late,
    );
    if (cluster) {
      // The worker takes no new job once the gateway starts closing.
      cleanups.add(() => cluster.stopTaking());
      cluster.bind(gateway, [...new Set(store.outbox({ state: 'pending' }).map((e) => e.parent))]);
    }
    wireGateway(base, gateway, hostParts, runners.pauser);
    const chats = openChats(base, { gateway, runners, agents, host: hostParts, tokens, store }, late);
    const slack = await openSlack(base, { gateway, sel, store, chats });

    late.gateway = gateway;
    if (late.tracer) gateway.watch(late.tracer.watcher);
    const resources = daemonResources({
      config,
      now: () => base.clock.now(),
      gateway,
      probe: hostParts.probe,
      gate: hostParts.gate,
      startup: hostParts.startup,
      hostCap,
      containment,
      spawner: runners.spawner,
      cluster,
      providerGateway,
    });
    late.resources = resources;
    const listening = await serveHttp(
      base,
      options.port ?? 7878,
      { gateway, store, tokens, chats, slack, metrics: observability.metrics, resources },
      late,
    );
    writeGatewayFile(base, listening);
    slack?.start();
    log(
      `crew: gateway on ${listening.url} (cap ${hostCap.cap}, ${hostCap.capSource}; pid ${process.pid}; home ${crewHome})`,
    );

    let stopping: Promise<void> | undefined;
    return {
      url: listening.url,
      port: listening.port,
      gateway,
      chats,
      config,
      shutdown(graceMs) {
        stopping ??= (async () => {
          gateway.stopAdmitting();
          await gateway.drain(graceMs);
          // Chats first, while their event streams can still say so.
          await chats.suspendAll();
          await cleanups.runAll();
        })();
        return stopping;
      },
    };
  } catch (error) {
    await cleanups.runAll();
    throw error;
  }
}

/**
 * `CREW_HOME` holds the token, the store and every transcript: it is made 0700, also when it already
 * existed with a wider mode (said on the log, since it changes a directory the person made).
 */
export function makeHomePrivate(crewHome: string, log: (line: string) => void): void {
  mkdirSync(crewHome, { recursive: true, mode: 0o700 });
  const mode = statSync(crewHome).mode & 0o777;
  if ((mode & 0o077) === 0) return;
  chmodSync(crewHome, 0o700);
  log(
    `crew: made ${crewHome} private (mode ${mode.toString(8).padStart(4, '0')} → 0700): it holds the token, the run store and transcripts`,
  );
}
