import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import { realClock } from '../../src/clock/real-clock.js';
import type { ClusterJob } from '../../src/cluster/cluster-link.js';
import { luaScript } from '../../src/cluster/redis/lua-scripts.js';
import {
  type ClusterGateway,
  RedisCluster,
  type RedisClusterOptions,
} from '../../src/cluster/redis/redis-cluster.js';
import type { SchedulerReply } from '../../src/core/scheduler-types.js';
import { pollFor } from '../helpers/daemon-process.js';
import { type RedisServer, redisSkipReason, startRedisServer } from '../helpers/redis-server.js';

const skip = redisSkipReason();
/** Each step's own limit, well inside the case's, so a step that never comes names itself. */
const STEP_MS = 20_000;

/** A gateway that executes nothing (these links are never bound, or bound only to be closed). */
const idleGateway: ClusterGateway = {
  executeForCluster: () => new Promise(() => undefined),
  attachSink: () => () => undefined,
  cancel: () => ({ ok: true }),
  steer: () => ({ ok: true }),
  statusOf: () => undefined,
  outcomeOf: async () => undefined,
  pageOf: async () => ({ text: '' }),
  releaseForCluster: () => undefined,
  releasedElsewhere: () => undefined,
};

describe.skipIf(skip !== undefined)(`the Redis cluster link${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await redis?.close();
  });

  const link = (gatewayName: string, name: string, options: Partial<RedisClusterOptions> = {}) =>
    new RedisCluster({
      url: redis.url,
      name,
      gatewayName,
      hostCap: 2,
      providerCap: 2,
      stalledIntervalMs: 30_000,
      maxQueued: 3,
      maxQueuedWaveMembers: 5,
      clock: realClock,
      log: () => undefined,
      ...options,
    });
  /** The `ended` messages on origin `o`'s stream of cluster `name`. */
  const endedMessages = async (client: Redis, name: string) =>
    (await client.xrange(`crew:${name}:gw:o:out`, '-', '+'))
      .map(([, fields]) => Object.fromEntries(fields.flatMap((f, i) => (i % 2 ? [] : [[f, fields[i + 1]]]))))
      .filter((m) => m.type === 'ended') as Record<string, string>[];
  /** Bounds roomy enough that they never refuse. */
  const roomy = { providerCap: 4, maxQueued: 10, maxQueuedWaveMembers: 10 };
  let n = 0;
  const job = (kind: ClusterJob['kind'], origin: string): ClusterJob => ({
    runId: `r${n++}`,
    kind,
    origin,
    spec: { task: 'x', agent: 'sim' },
  });
  /** An admission that dispatches `count` jobs of `kind`, as the gateway's step does. */
  const admitting = (l: RedisCluster, kind: ClusterJob['kind'], count: number) =>
    l.admit(kind, count, () => {
      for (let k = 0; k < count; k++) l.dispatch(job(kind, l.gatewayName), () => undefined);
      return { ok: true as const };
    });

  it.sequential('close() leaves no socket or timer of its own behind', async () => {
    const count = () => {
      const info = process.getActiveResourcesInfo();
      return {
        sockets: info.filter((r) => r === 'TCPWrap' || r === 'TCPSocketWrap').length,
        timers: info.filter((r) => r === 'Timeout').length,
      };
    };
    // First and alone (the cases after it run at once, each on its own cluster name), so no other case's
    // link opens or closes sockets meanwhile; the Redis start's PING probe finishes closing first.
    await new Promise((r) => setTimeout(r, 500));
    const before = count();
    const l = link('closer', 'closing');
    l.bind(idleGateway);
    await pollFor('connected', () => (l.status().available ? true : undefined));
    expect(count().sockets).toBeGreaterThan(before.sockets);
    await l.close();
    await pollFor(
      'sockets and timers released',
      () => {
        const after = count();
        return after.sockets <= before.sockets && after.timers <= before.timers ? true : undefined;
      },
      5000,
    );
  });

  it.sequential('admissions waiting on one gateway share one turn of the admission lock; the bounds hold within it, in order', async () => {
    const a = link('a', 'batched');
    const probe = new Redis(redis.url);
    // Alone, before the cases that run at once: MONITOR streams every client's commands, and ioredis
    // misreads its reply queue when others' commands stream in as it enters monitor mode.
    // The admission lock's SETs, seen through MONITOR: a count of every SET would also count what the link
    // and BullMQ set on their own timers (one landed inside the window on a loaded machine).
    await probe.ping(); // MONITOR asked before the connection is ready confuses ioredis's reply queue
    const monitor = await probe.monitor();
    let lockSets = 0;
    let marked: (() => void) | undefined;
    monitor.on('monitor', (_time: string, args: string[]) => {
      const [command, key] = [String(args[0]).toLowerCase(), args[1]];
      if (command === 'set' && key === 'crew:batched:admit') lockSets++;
      if (command === 'echo' && key === 'batched-mark') marked?.();
    });
    try {
      await pollFor('connected', () => (a.status().available ? true : undefined));
      // Five singles and a wave arrive together: three singles fill the bound of 3, the next two are
      // refused, the wave (3 members, no provider room free) fits the wave bound of 5.
      const answers = await Promise.all([
        ...Array.from({ length: 5 }, () => admitting(a, 'single', 1)),
        admitting(a, 'wave', 3),
      ]);
      expect(answers.map((x) => ('refusal' in x ? x.refusal.code : 'ok'))).toEqual([
        'ok',
        'ok',
        'ok',
        'queue_full',
        'queue_full',
        'ok',
      ]);
      expect(answers[3]).toMatchObject({ refusal: { limit: 3, current: 3 } });
      // One lock for all six (each took one before, a round trip and a wait each). The monitor has seen
      // every command before the mark sent after them.
      await new Promise<void>((resolve) => {
        marked = resolve;
        void probe.echo('batched-mark');
      });
      expect(lockSets).toBe(1);
      // And every admitted job is in the queue when its admission answers.
      expect(await probe.llen('crew:batched:wait')).toBe(6);
    } finally {
      monitor.disconnect();
      probe.disconnect();
      await a.close();
    }
  });

  it.concurrent('counts the queue bounds across gateways: single spawns, and waves fitted whole or refused whole', async () => {
    const a = link('a', 'bounds');
    const b = link('b', 'bounds');
    try {
      await pollFor('both links connected', () =>
        a.status().available && b.status().available ? true : undefined,
      );
      // No worker runs here, so every job stays queued: 3 singles fill the bound of 3, from two gateways.
      expect(await admitting(a, 'single', 1)).toEqual({ ok: true });
      expect(await admitting(b, 'single', 1)).toEqual({ ok: true });
      expect(await admitting(a, 'single', 1)).toEqual({ ok: true });
      const full = await admitting(b, 'single', 1);
      expect(full).toMatchObject({ refusal: { code: 'queue_full', limit: 3, current: 3 } });
      // Waves: 6 members cannot fit 5 queued places → refused whole; 5 fit; then not one more.
      expect(await admitting(a, 'wave', 6)).toMatchObject({
        refusal: { code: 'queue_full', limit: 5, current: 0 },
      });
      expect(await admitting(b, 'wave', 5)).toEqual({ ok: true });
      expect(await admitting(a, 'wave', 1)).toMatchObject({
        refusal: { code: 'queue_full', limit: 5, current: 5 },
      });
      expect(await admitting(a, 'single', 1)).toMatchObject({ refusal: { code: 'queue_full' } });
    } finally {
      await a.close();
      await b.close();
    }
  });

  it.concurrent('a page request reaches a gateway that joined after the asker last read the registry', async () => {
    const name = 'joined';
    // The asker's timers fire only when the test moves its clock: its view of the registry stays as read.
    const clock = new FakeClock(Date.now());
    const a = link('a', name, { hostCap: 1, clock });
    const b = link('b', name);
    const client = new Redis(redis.url);
    try {
      a.bind(idleGateway);
      await pollFor('a connected', () => (a.status().available ? true : undefined));
      await clock.advance(1000); // one refresh: a publishes itself and reads the registry
      await pollFor('a read the registry', () => (a.status().gateways.length > 0 ? true : undefined));
      b.bind({ ...idleGateway, pageOf: async (id) => ({ text: `page of ${id} on b` }) } as ClusterGateway);
      await pollFor('b published itself', async () =>
        (await client.hget(`crew:${name}:gateways`, 'b')) ? true : undefined,
      );
      expect(a.status().gateways.map((g) => g.name)).toEqual(['a']);
      expect((await a.page('b', 'r-joined', { maxChars: 1000 })).text).toBe('page of xr-joined on b'); // its copy there;
      // A gateway that never published is still not_here, at once.
      await expect(a.page('nobody', 'r-joined', { maxChars: 1000 })).rejects.toMatchObject({
        refusal: { code: 'not_here' },
      });
    } finally {
      await client.quit();
      await a.close();
      await b.close();
    }
  });

  it.concurrent('a gateway heard from counts as in the cluster before the next registry read lists it, and for three stalled intervals after', async () => {
    const name = 'heard';
    const interval = 300;
    // a's timers fire only when the test moves its clock: its view of the registry stays as read.
    const clock = new FakeClock(Date.now());
    const a = new RedisCluster({
      url: redis.url,
      name,
      gatewayName: 'a',
      hostCap: 1,
      providerCap: 2,
      stalledIntervalMs: interval,
      maxQueued: 3,
      maxQueuedWaveMembers: 5,
      clock,
      log: () => undefined,
    });
    const client = new Redis(redis.url);
    const from = (host: string) =>
      client.xadd(`crew:${name}:gw:a:out`, '*', 'type', 'started', 'runId', `r-${host}`, 'host', host);
    try {
      a.bind(idleGateway);
      await pollFor('a connected', () => (a.status().available ? true : undefined));
      await clock.advance(100); // one refresh: a publishes itself and reads the registry
      await pollFor('a read the registry', () => (a.status().gateways.length > 0 ? true : undefined));
      expect(a.hasGateway('a')).toBe(true);
      // 'late' joined after that read (it never publishes here): a hears from it, as from a gateway that
      // took one of its runs, and counts it in (a kept conversation there is not released as gone).
      expect(a.hasGateway('late')).toBe(false);
      await from('late');
      await pollFor('a heard from late', () => (a.hasGateway('late') ? true : undefined));
      expect(a.hasGateway('nobody')).toBe(false);
      // Three stalled intervals later, with no entry of its own in the registry, it is gone again.
      await new Promise((r) => setTimeout(r, 3 * interval + 100));
      await clock.advance(100);
      await pollFor('late dropped', () => (a.hasGateway('late') === false ? true : undefined));
    } finally {
      await client.quit();
      await a.close();
    }
  });

  it.concurrent('a run executing on a gateway that another reported lost (its loop stalled past the interval) is cancelled there, once', async () => {
    const name = 'zombie';
    const origin = link('o', name, roomy); // never bound: it only adds the job
    const z = link('z', name, { ...roomy, stalledIntervalMs: 2000 });
    const cancels: string[] = [];
    const ends = new Map<string, () => void>();
    z.bind({
      ...idleGateway,
      executeForCluster: (j) =>
        new Promise<SchedulerReply>((resolve) =>
          ends.set(j.runId, () => resolve({ kind: 'admitted', ok: true, runs: [], existing: false })),
        ),
      cancel: (id) => {
        cancels.push(id);
        return { ok: true };
      },
    });
    const client = new Redis(redis.url);
    try {
      await pollFor('the origin connected', () => (origin.status().available ? true : undefined));
      await origin.admit('single', 1, () => {
        origin.dispatch(
          { runId: 'rz', kind: 'single', origin: 'o', spec: { task: 'x', agent: 'sim' } },
          () => undefined,
        );
        return { ok: true as const };
      });
      await pollFor('z running rz', () => (ends.has('rz') ? true : undefined));
      expect(cancels).toEqual([]);
      // Another gateway found z silent and reported rz lost (the claim REPORT_LOST_SCRIPT leaves).
      await client.set(`crew:${name}:lost:rz`, 'a silent', 'PX', 60_000);
      await pollFor('z cancelled its copy', () => (cancels.length > 0 ? true : undefined));
      expect(cancels).toEqual(['xrz']);
      // Later refreshes (every half second here) do not cancel it again while it ends.
      await new Promise((r) => setTimeout(r, 1500));
      expect(cancels).toEqual(['xrz']);
      ends.get('rz')!();
    } finally {
      await client.quit();
      await z.close();
      await origin.close();
    }
  });

  it.concurrent('a gateway whose host memory is critical takes no cluster job (another does) until its memory recovers', async () => {
    const name = 'short';
    const origin = link('o', name, roomy); // never bound: it only adds the jobs
    let critical = true;
    const said: string[] = [];
    const short = link('s', name, {
      ...roomy,
      stalledIntervalMs: 2000,
      memoryCritical: () => critical,
      log: (line) => said.push(line),
    });
    const roomyHost = link('r', name, { ...roomy, hostCap: 1 });
    const ran = new Map<string, string>();
    const ends: (() => void)[] = [];
    const executing = (gateway: string): ClusterGateway => ({
      ...idleGateway,
      executeForCluster: (j) =>
        new Promise<SchedulerReply>((resolve) => {
          ran.set(j.runId, gateway);
          ends.push(() => resolve({ kind: 'admitted', ok: true, runs: [], existing: false }));
        }),
    });
    short.bind(executing('s'));
    try {
      await pollFor('s paused for its memory', () =>
        said.some((l) => /takes no cluster job/.test(l)) ? true : undefined,
      );
      roomyHost.bind(executing('r'));
      await pollFor('the origin connected', () => (origin.status().available ? true : undefined));
      await admitting(origin, 'single', 2);
      // r (host cap 1) takes one; the other waits, though s has room: s is short of memory.
      await pollFor('r running one', () => (ran.size === 1 ? true : undefined), STEP_MS);
      await new Promise((r) => setTimeout(r, 1500));
      expect([...ran.values()]).toEqual(['r']);
      // resource_status says why: s is short of memory.
      const shortOnes = () =>
        roomyHost
          .status()
          .gateways.filter((g) => g.memory_short)
          .map((g) => g.name);
      await pollFor(
        's marked short of memory',
        () => (shortOnes().includes('s') ? true : undefined),
        STEP_MS,
      );
      expect(roomyHost.status().gateways.map((g) => g.name)).toEqual(['r', 's']);
      expect([...ran.values()]).toEqual(['r']);
      critical = false;
      await pollFor('s taking the other', () => (ran.size === 2 ? true : undefined), STEP_MS);
      expect([...ran.values()].sort()).toEqual(['r', 's']);
      expect(said.some((l) => /takes cluster jobs again/.test(l))).toBe(true);
      await pollFor('s no longer marked short', () => (shortOnes().length === 0 ? true : undefined), STEP_MS);
      for (const end of ends) end();
    } finally {
      await roomyHost.close();
      await short.close();
      await origin.close();
    }
  });

  it.concurrent("the failure detector's script finds active jobs of holders silent or never heard, locks lapsed, not claimed", async () => {
    const c = new Redis(redis.url);
    const ns = 'crew:lapsed:';
    const claims = 'crew:lapsed:lost:';
    const job = async (id: string, holder: string, extra: { lock?: boolean; claimed?: boolean } = {}) => {
      await c.rpush(`${ns}active`, id);
      await c.hset(`${ns}${id}`, 'pb', holder, 'data', `{"runId":"${id}"}`);
      if (extra.lock) await c.set(`${ns}${id}:lock`, 'token');
      if (extra.claimed) await c.set(`${claims}${id}`, 'g0 stalled');
    };
    try {
      await job('j1', 'ghost'); // died before its first registry entry: found
      await job('j2', 'stale'); // its entry is older than the interval: found
      await job('j3', 'live'); // alive by the registry: its lapsed lock is not enough
      await job('j4', 'ghost', { lock: true }); // a held lock is a live holder
      await job('j5', 'ghost', { claimed: true }); // reported already
      await job('j6', 'me'); // the reader's own
      const found = await c.eval(luaScript('lapsed-jobs'), 1, `${ns}active`, ns, claims, 'me', 'live');
      expect(found).toEqual(['j1', 'ghost', '{"runId":"j1"}', 'j2', 'stale', '{"runId":"j2"}']);
    } finally {
      c.disconnect();
    }
  });

  it.concurrent('a continuation taken by a gateway that does not keep its session is run there, under its host cap, while the taker holds its slot; a session gateway gone or dying ends it at its origin', async () => {
    const name = 'turns';
    // Long enough that a loaded machine's late registry refresh (every quarter interval) does not read as
    // a gateway gone: that would end a turn lost mid-case. At 2 s the case failed once in a soak of 8 tier
    // runs, b never holding the turns; a late refresh is the likely cause, and the poll below names an early end.
    const interval = 3000;
    const at = (gatewayName: string, hostCap: number) =>
      link(gatewayName, name, { ...roomy, hostCap, stalledIntervalMs: interval });
    /** Executes what the test lets end; records what it was asked to run. */
    const handGateway = () => {
      const ends = new Map<string, () => void>();
      const ran: ClusterJob[] = [];
      const gateway: ClusterGateway = {
        ...idleGateway,
        executeForCluster: (j) => {
          ran.push(j);
          return new Promise<SchedulerReply>((resolve) =>
            ends.set(j.runId, () => resolve({ kind: 'admitted', ok: true, runs: [], existing: false })),
          );
        },
      };
      return { gateway, ends, ran };
    };
    const client = new Redis(redis.url);
    const origin = at('o', 1); // never bound: it only adds jobs; its outcome stream is read here
    const b = at('b', 1);
    const w = at('w', 2);
    const onB = handGateway();
    const onW = handGateway();
    const active = () => client.lrange(`crew:${name}:active`, 0, -1);
    const outcomes = async () =>
      (await client.xrange(`crew:${name}:gw:o:out`, '-', '+')).map(([, fields]) => {
        const m = new Map<string, string>();
        for (let i = 0; i + 1 < fields.length; i += 2) m.set(fields[i]!, fields[i + 1]!);
        return Object.fromEntries(m) as Record<string, string>;
      });
    const add = (j: ClusterJob) =>
      origin.admit('single', 1, () => {
        origin.dispatch(j, () => undefined);
        return { ok: true as const };
      });
    try {
      await pollFor('the origin connected', () => (origin.status().available ? true : undefined), STEP_MS);
      // b's one place is taken by a run of its own, so only w can take the continuations.
      b.bind(onB.gateway);
      await add({ runId: 'blocker', kind: 'single', origin: 'o', spec: { task: 'x', agent: 'sim' } });
      await pollFor('b running the blocker', () => (onB.ran.length === 1 ? true : undefined), STEP_MS);
      w.bind(onW.gateway);
      const turn: ClusterJob = {
        runId: 'turn1',
        kind: 'single',
        origin: 'o',
        spec: { task: 'again', agent: 'sim', keep: true },
        continues: 'conv',
        host: 'b',
      };
      const listedByB = async (runId: string) => {
        const entry = await client.hget(`crew:${name}:gateways`, 'b');
        return entry !== null && (JSON.parse(entry) as { runs: string[] }).runs.includes(runId);
      };
      await add(turn);
      await add({ ...turn, runId: 'turn3' });
      await pollFor(
        'b holding both forwarded turns',
        async () => {
          // A turn ended before it reached b (w judged b gone: a refresh late past the interval) says so.
          const early = (await outcomes()).filter((m) => m.runId?.startsWith('turn') && m.type === 'ended');
          if (early.length > 0) throw new Error(`a turn ended before b held it: ${JSON.stringify(early)}`);
          return (await listedByB('turn1')) && (await listedByB('turn3')) ? true : undefined;
        },
        STEP_MS,
      );
      expect(await client.hget(`crew:${name}:turn1`, 'pb')).toBe('w');
      expect(await client.hget(`crew:${name}:turn3`, 'pb')).toBe('w');
      // b runs at its host cap of 1: the turns wait there for a slot (listed, so w holds them across
      // several looks at b) and do not start beside the blocker.
      await new Promise((r) => setTimeout(r, interval + 500));
      expect(onB.ran.map((j) => j.runId)).toEqual(['blocker']);
      expect(onW.ran).toEqual([]);
      expect(await active()).toEqual(expect.arrayContaining(['blocker', 'turn1', 'turn3']));
      expect((await outcomes()).filter((m) => m.runId?.startsWith('turn'))).toEqual([]);
      // The blocker ends: the first turn takes its slot, the second still waits.
      onB.ends.get('blocker')!();
      await pollFor('b running turn1', () => (onB.ran.length === 2 ? true : undefined), STEP_MS);
      expect(onB.ran[1]).toMatchObject({ runId: 'turn1', continues: 'conv', host: 'b' });
      expect((await outcomes()).filter((m) => m.runId === 'turn1').map((m) => m.type)).toEqual(['started']);
      await new Promise((r) => setTimeout(r, 500));
      expect(onB.ran.map((j) => j.runId)).toEqual(['blocker', 'turn1']);
      onB.ends.get('turn1')!();
      await pollFor(
        'the slot released once the turn ended',
        async () => ((await active()).includes('turn1') ? undefined : true),
        STEP_MS,
      );
      expect(await client.get(`crew:${name}:turn:turn1`)).toBe('ended');
      expect(await client.pttl(`crew:${name}:turn:turn1`)).toBeGreaterThan(0);
      await pollFor(
        'b running turn3',
        () => (onB.ran.some((j) => j.runId === 'turn3') ? true : undefined),
        STEP_MS,
      );

      // A session gateway that is not in the cluster: the turn fails at once, naming it.
      await add({ ...turn, runId: 'turn2', host: 'nobody' });
      const failed = await pollFor(
        'turn2 ended at its origin',
        async () => (await outcomes()).find((m) => m.runId === 'turn2' && m.type === 'ended'),
        STEP_MS,
      );
      expect(failed).toMatchObject({ status: 'failed' });
      expect(failed.error).toMatch(/gateway nobody/);

      // b dies while running a forwarded turn: w ends it lost and lets the slot go.
      await b.close();
      const lost = await pollFor(
        'turn3 ended lost at its origin',
        async () => (await outcomes()).find((m) => m.runId === 'turn3' && m.type === 'ended'),
        STEP_MS,
      );
      expect(lost).toMatchObject({ status: 'lost', host: 'w' });
      expect(lost.error).toMatch(/gateway b/);
      await pollFor(
        'w let turn3 go',
        async () => ((await active()).includes('turn3') ? undefined : true),
        STEP_MS,
      );
      // Each ended once at the origin.
      const ends = (await outcomes()).filter((m) => m.type === 'ended' && m.runId?.startsWith('turn'));
      expect(ends.map((m) => m.runId).sort()).toEqual(['turn2', 'turn3']);
    } finally {
      for (const end of onB.ends.values()) end();
      await w.close();
      await b.close();
      await origin.close();
      client.disconnect();
    }
  }, 90_000);

  it.concurrent("while every live gateway is short of memory (workers paused, so BullMQ's stalled check stops) the failure detector still reports a silent gateway's run lost, once; after memory recovers the stalled check adds no second report", async () => {
    const name = 'paused-ghost';
    const interval = 2000;
    let critical = true;
    const at = (gatewayName: string) =>
      link(gatewayName, name, {
        ...roomy,
        hostCap: 1,
        stalledIntervalMs: interval,
        memoryCritical: () => critical,
      });
    const client = new Redis(redis.url);
    const a = at('a');
    const b = at('b');
    const runId = 'lapsed-while-paused';
    const ended = () => endedMessages(client, name);
    try {
      a.bind(idleGateway);
      b.bind(idleGateway);
      await pollFor('both links connected and short of memory', () =>
        a.status().available &&
        b.status().available &&
        a.status().gateways.filter((g) => g.memory_short).length === 2
          ? true
          : undefined,
      );
      await new Promise((r) => setTimeout(r, interval));
      // `ghost` died holding a job: its entry is 10 intervals old and nothing renews the job's lock.
      await client.hset(`crew:${name}:gateways`, {
        ghost: JSON.stringify({ cap: 1, running: 1, runs: [], at: Date.now() - 10 * interval }),
      });
      const data: ClusterJob = { runId, kind: 'single', origin: 'o', spec: { task: 'x', agent: 'sim' } };
      await client.hset(`crew:${name}:${runId}`, {
        name: 'single',
        data: JSON.stringify(data),
        opts: '{}',
        timestamp: Date.now(),
        pb: 'ghost',
      });
      await client.lpush(`crew:${name}:active`, runId);
      const lost = await pollFor(
        'the run reported lost while both gateways are paused',
        async () => (await ended()).find((m) => m.runId === runId),
        STEP_MS,
      );
      expect(lost).toMatchObject({ status: 'lost' });
      expect(await client.get(`crew:${name}:lost:${runId}`)).toMatch(/^[ab] silent$/);
      // BullMQ's stalled check is off on paused workers: the job is still in the active list.
      expect(await client.lrange(`crew:${name}:active`, 0, -1)).toContain(runId);
      // Memory recovers: the stalled check runs again and takes the job; the report stays single.
      critical = false;
      await pollFor(
        'the stalled check took the job once the workers resumed',
        async () => ((await client.lrange(`crew:${name}:active`, 0, -1)).includes(runId) ? undefined : true),
        STEP_MS,
      );
      await new Promise((r) => setTimeout(r, 3 * interval));
      expect((await ended()).filter((m) => m.runId === runId)).toHaveLength(1);
    } finally {
      await a.close();
      await b.close();
      client.disconnect();
    }
  }, 60_000);

  it.concurrent("the failure detector reports a silent gateway's unlocked runs lost to their origin once (one of two finders), before BullMQ's stalled check; a locked run and a fresh gateway's run are left alone", async () => {
    const name = 'ghosts';
    const interval = 2000;
    const at = (gatewayName: string) =>
      link(gatewayName, name, { ...roomy, hostCap: 1, stalledIntervalMs: interval });
    const client = new Redis(redis.url);
    const a = at('a');
    const b = at('b');
    const jobKey = (id: string) => `crew:${name}:${id}`;
    const active = () => client.lrange(`crew:${name}:active`, 0, -1);
    /** A job active on `holder` as BullMQ leaves it when that gateway's process dies (no lock renewed). */
    const activeOn = async (runId: string, holder: string) => {
      const data: ClusterJob = { runId, kind: 'single', origin: 'o', spec: { task: 'x', agent: 'sim' } };
      await client.hset(jobKey(runId), {
        name: 'single',
        data: JSON.stringify(data),
        opts: '{}',
        timestamp: Date.now(),
        pb: holder,
      });
      await client.lpush(`crew:${name}:active`, runId);
    };
    const ended = () => endedMessages(client, name);
    try {
      a.bind(idleGateway);
      b.bind(idleGateway);
      await pollFor('both links connected', () =>
        a.status().available && b.status().available ? true : undefined,
      );
      // Both have watched the registry for longer than they wait before judging (half an interval).
      await new Promise((r) => setTimeout(r, interval));
      // `ghost` last published 10 intervals ago; `alive` publishes (its entry stays fresh for the test).
      await client.hset(`crew:${name}:gateways`, {
        // It took `lapsed` after it last published (an entry lags by up to a refresh): found in the active list.
        ghost: JSON.stringify({
          cap: 2,
          running: 1,
          runs: ['locked'],
          at: Date.now() - 10 * interval,
        }),
        alive: JSON.stringify({ cap: 1, running: 1, runs: ['busy'], at: Date.now() + 600_000 }),
      });
      await activeOn('lapsed', 'ghost');
      // Still renewed (a gateway whose entry is late but whose worker lives): not the detector's to end.
      await activeOn('locked', 'ghost');
      await client.set(`${jobKey('locked')}:lock`, 'token', 'PX', 600_000);
      // Its lock lapsed, but its gateway publishes that it runs it: alive.
      await activeOn('busy', 'alive');
      const lost = await pollFor('the lapsed run reported lost', async () =>
        (await ended()).find((m) => m.runId === 'lapsed'),
      );
      expect(lost).toMatchObject({ status: 'lost' });
      expect(lost.error).toMatch(/gateway ghost/);
      // Found by the detector (one of the two live gateways), not by BullMQ's check (two passes, ≥ 1 interval).
      expect(await client.get(`crew:${name}:lost:lapsed`)).toMatch(/^[ab] silent$/);
      // BullMQ's check finds it too later (the backstop); the claim keeps the report single.
      await pollFor('the stalled check took the lapsed and the busy job', async () => {
        const now = await active();
        return now.includes('lapsed') || now.includes('busy') ? undefined : true;
      });
      // The stalled check's report looks at the registry for two intervals before it judges.
      await new Promise((r) => setTimeout(r, 3 * interval));
      expect((await ended()).map((m) => m.runId)).toEqual(['lapsed']);
      expect(await active()).toEqual(expect.arrayContaining(['locked']));
    } finally {
      await a.close();
      await b.close();
      client.disconnect();
    }
  }, 60_000);
});
