import { Redis } from 'ioredis';
import { api, type DaemonProcess, pollFor, startDaemonProcess } from '../helpers/daemon-process.js';
import { type RedisServer, startRedisServer } from '../helpers/redis-server.js';
import { bundledCommand } from '../helpers/test-bundle.js';

export interface ClusterRig {
  redis: RedisServer;
  /** A plain client for looking at the cluster's keys. */
  client: Redis;
  gateways: DaemonProcess[];
  name: string;
  /** Starts gateway `i` again on its home (after a kill). */
  restart(i: number): Promise<DaemonProcess>;
  close(): Promise<void>;
}

export interface ClusterRigOptions {
  hostCaps: number[];
  providerCap: number;
  stalledIntervalMs?: number;
  config?: Record<string, unknown>;
  /** Config for gateway `g<i>` alone, over `config`. */
  configOf?: (i: number) => Record<string, unknown>;
}

/** One Redis and one real `crew serve` per host cap, each with its own CREW_HOME, named g0, g1, … */
export async function startCluster(options: ClusterRigOptions): Promise<ClusterRig> {
  const redis = await startRedisServer();
  const name = 'test';
  const configOf = (i: number) => ({
    'cluster.redis_url': redis.url,
    'cluster.name': name,
    'cluster.gateway_name': `g${i}`,
    'cluster.host_cap': options.hostCaps[i],
    'cluster.provider_cap': options.providerCap,
    'cluster.stalled_interval_ms': options.stalledIntervalMs ?? 30_000,
    ...options.config,
    ...options.configOf?.(i),
  });
  // One after the other: several rigs may start at once on a small machine, and a start has a deadline.
  const gateways: DaemonProcess[] = [];
  for (const [i] of options.hostCaps.entries())
    gateways.push(await startDaemonProcess({ config: configOf(i) }));
  const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  client.on('error', () => undefined);
  // Every gateway has published itself: the cluster is formed.
  await pollFor('every gateway to join the cluster', async () => {
    const all = await client.hgetall(`crew:${name}:gateways`).catch(() => ({}));
    return Object.keys(all).length === gateways.length ? true : undefined;
  });
  return {
    redis,
    client,
    gateways,
    name,
    async restart(i) {
      const old = gateways[i] as DaemonProcess;
      const again = await startDaemonProcess({ home: old.home, config: configOf(i) });
      gateways[i] = again;
      return again;
    },
    async close() {
      for (const g of gateways) {
        if (g.proc.exitCode === null && g.proc.signalCode === null) await g.stop('SIGKILL');
        g.cleanup();
      }
      client.disconnect();
      await redis.close();
    },
  };
}

/** Spawns one run through gateway `g` for `parent` (operator token naming the parent). */
export async function spawnVia(g: DaemonProcess, parent: string, args: Record<string, unknown>) {
  return (await api(g, 'POST', '/api/spawn', { parent, args })).body as {
    ok: boolean;
    batch_id?: string;
    runs?: { id: string; status: string }[];
    refusal?: { code: string; message: string; limit?: number; current?: number };
  };
}

export interface EventSeen {
  id: string;
  kind: string;
  run_ids: string[];
  batch_id?: string;
  text: string;
}

/** This parent's next events on gateway `g` (delivering them), waiting up to `timeoutSecs`. */
export async function eventsOf(g: DaemonProcess, parent: string, timeoutSecs = 5): Promise<EventSeen[]> {
  const answer = await api(
    g,
    'GET',
    `/api/events?parent=${encodeURIComponent(parent)}&timeout_secs=${timeoutSecs}`,
  );
  return (answer.body.events as EventSeen[] | undefined) ?? [];
}

/** The runs gateway `g` holds (operator view). */
export async function runsOf(g: DaemonProcess): Promise<{ id: string; status: string; parent: string }[]> {
  const answer = await api(g, 'GET', '/api/runs?limit=100000');
  return (answer.body.runs as { id: string; status: string; parent: string }[] | undefined) ?? [];
}

/** The simulator as a shared runtime (one process per gateway hosts every run's session), as the default agent. */
export const SHARED_SIM_CONFIG = {
  'agents.ssim': { runner: 'acp', command: bundledCommand('sim/main'), shared: true },
  'agent.default_agent': 'ssim',
  'agent.subagent_max_queued': 1000,
};

/** The gateway (its worker's name, BullMQ's `pb`) holding each active job, in one atomic look. */
const ACTIVE_BY_WORKER = `
local out = {}
for _, id in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  table.insert(out, redis.call('HGET', ARGV[1] .. id, 'pb') or '?')
end
return out`;

export interface CapSamples {
  count: number;
  /** Most jobs active at once across the cluster. */
  clusterMax: number;
  /** Most jobs active at once on gateway `g<i>` (held by its worker, BullMQ's `pb`). */
  perGateway: number[];
  /**
   * Most runs executing at once on gateway `g<i>`, as its registry entry publishes them (a turn forwarded
   * to it runs there while another gateway's worker holds the job).
   */
  executingMax: number[];
  errors: string[];
}

/** Samples the running counts every 50 ms until the returned function is called (it resolves the maxima). */
export function sampleCaps(rig: ClusterRig, gateways: number): () => Promise<CapSamples> {
  const samples: CapSamples = {
    count: 0,
    clusterMax: 0,
    perGateway: Array.from({ length: gateways }, () => 0),
    executingMax: Array.from({ length: gateways }, () => 0),
    errors: [],
  };
  let sampling = true;
  const loop = (async () => {
    while (sampling) {
      try {
        const holders = (await rig.client.eval(
          ACTIVE_BY_WORKER,
          1,
          `crew:${rig.name}:active`,
          `crew:${rig.name}:`,
        )) as string[];
        samples.clusterMax = Math.max(samples.clusterMax, holders.length);
        for (let i = 0; i < gateways; i++) {
          samples.perGateway[i] = Math.max(
            samples.perGateway[i]!,
            holders.filter((h) => h === `g${i}`).length,
          );
        }
        const entries = await rig.client.hgetall(`crew:${rig.name}:gateways`);
        for (let i = 0; i < gateways; i++) {
          const entry = entries[`g${i}`];
          const running = entry ? ((JSON.parse(entry) as { running?: number }).running ?? 0) : 0;
          samples.executingMax[i] = Math.max(samples.executingMax[i]!, running);
        }
        samples.count++;
      } catch (error) {
        samples.errors.push(String(error));
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  return async () => {
    sampling = false;
    await loop;
    return samples;
  };
}

/** The gateway (`g<i>`) holding each active job now, from BullMQ's `pb` field. */
export async function holders(rig: ClusterRig): Promise<Map<string, string>> {
  const ids = await rig.client.lrange(`crew:${rig.name}:active`, 0, -1);
  const out = new Map<string, string>();
  for (const id of ids) out.set(id, (await rig.client.hget(`crew:${rig.name}:${id}`, 'pb')) ?? '?');
  return out;
}

/** Reads `parent`'s events on `g` until `done` holds or the deadline passes. */
export async function collect(
  rig: ClusterRig,
  i: number,
  parent: string,
  done: (events: EventSeen[]) => boolean,
  timeoutMs = 60_000,
): Promise<EventSeen[]> {
  const events: EventSeen[] = [];
  const deadline = Date.now() + timeoutMs;
  while (!done(events) && Date.now() < deadline)
    events.push(...(await eventsOf(rig.gateways[i]!, parent, 2)));
  return events;
}
