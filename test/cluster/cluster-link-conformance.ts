import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type ClusterGateway,
  type ClusterJob,
  type ClusterJobKind,
  type ClusterLink,
  copyIdOf,
} from '../../src/cluster/cluster-link.js';
import { isCrewError } from '../../src/core/errors.js';
import type { SchedulerReply } from '../../src/core/scheduler-types.js';
import type { RunnerEvent } from '../../src/runners/runner.js';

/** A link as the daemon holds it: the port, plus joining (`bind`) and leaving (`close`). */
export interface TestLink extends ClusterLink {
  bind(gateway: ClusterGateway): void;
  close(): Promise<void>;
}

/** The bounds every link of the suite's clusters has (host cap 1 each). */
export const BOUNDS = { providerCap: 2, maxQueued: 2, maxQueuedWaveMembers: 3 } as const;

/** One fresh cluster per case. */
export interface ClusterUnderTest {
  /** The link of a gateway named `gatewayName` (host cap 1 unless given), connected and ready to admit. */
  link(gatewayName: string, hostCap?: number): Promise<TestLink>;
  /**
   * Whether bound gateway `gatewayName` has asked the cluster for a job and is waiting for one: the Redis
   * link's worker is blocked on the queue's marker; an in-memory link is bound with room.
   */
  asking(gatewayName: string): Promise<boolean>;
  /** Resolves once `probe` answers (the Redis link polls; the in-memory one lets pending work run). */
  eventually<T>(what: string, probe: () => T | undefined | Promise<T | undefined>): Promise<T>;
  /** The cluster's time now (ms), as `providerHoldUntil` counts it. */
  now(): number;
  close(): Promise<void>;
}

/** A gateway that runs each job at once: its end goes to the origin through the sink the link attached. */
export class HandGateway implements ClusterGateway {
  readonly executed: string[] = [];
  readonly releasedHere: string[] = [];
  readonly releasedThere: string[] = [];
  private readonly sinks = new Map<string, { deliver(event: { run_ids: string[] }): Promise<void> }>();

  constructor(readonly name: string) {}

  async executeForCluster(job: ClusterJob): Promise<SchedulerReply> {
    this.executed.push(job.runId);
    await this.sinks.get(`cluster:${job.origin}`)?.deliver({ run_ids: [copyIdOf(job.runId)] });
    return {
      kind: 'admitted',
      ok: true,
      runs: [{ id: copyIdOf(job.runId), status: 'starting' }],
      existing: false,
    };
  }
  attachSink(parent: string, sink: { deliver(event: { run_ids: string[] }): Promise<void> }): () => void {
    this.sinks.set(parent, sink);
    return () => this.sinks.delete(parent);
  }
  cancel(): { ok: boolean } {
    return { ok: true };
  }
  steer(): { ok: boolean } {
    return { ok: true };
  }
  statusOf(): string | undefined {
    return 'completed';
  }
  async outcomeOf(id: string): Promise<{ status: string; text: string }> {
    return { status: 'completed', text: `done ${id} on ${this.name}` };
  }
  async pageOf(id: string): Promise<{ text: string }> {
    return { text: `page of ${id} on ${this.name}` };
  }
  releaseForCluster(conversationId: string): void {
    this.releasedHere.push(conversationId);
  }
  releasedElsewhere(conversationId: string, reason: string): void {
    this.releasedThere.push(`${conversationId} ${reason}`);
  }
}

/** A gateway whose runs end only when the test says: the provider slots they hold stay held until then. */
export class HeldGateway extends HandGateway {
  /** The runs it took, in order (`executed` lists them as they end). */
  readonly taken: string[] = [];
  private readonly ends: Array<() => void> = [];

  override async executeForCluster(job: ClusterJob): Promise<SchedulerReply> {
    this.taken.push(job.runId);
    await new Promise<void>((resolve) => this.ends.push(resolve));
    return super.executeForCluster(job);
  }
  /** How many of its runs are executing (taken, not ended). */
  get holding(): number {
    return this.ends.length;
  }
  /** Ends the oldest run it holds. */
  endOne(): void {
    this.ends.shift()?.();
  }
  endAll(): void {
    for (const end of this.ends.splice(0)) end();
  }
}

/**
 * The {@link ClusterLink} contract (src/cluster/cluster-link.ts), one suite the Redis link and the
 * in-memory one both pass: the cluster-wide queue bounds at admission, a dispatched run started and ended
 * once on some gateway with its output, a queued run stopped and refused a steer, pages and releases
 * across gateways, the provider's hold and which gateways are in the cluster.
 */
export function clusterLinkConformance(name: string, make: () => Promise<ClusterUnderTest>): void {
  describe(`${name} keeps the ClusterLink contract`, () => {
    let cluster: ClusterUnderTest;
    let n = 0;
    beforeEach(async () => {
      cluster = await make();
    });
    afterEach(async () => {
      await cluster.close();
    });

    const job = (kind: ClusterJobKind, origin: string): ClusterJob => ({
      runId: `r${n++}`,
      kind,
      origin,
      spec: { task: 'x', agent: 'sim' },
    });
    /** An admission that dispatches `count` jobs, as the gateway's step does; `calls` counts its runs. */
    const admitting = (link: TestLink, kind: ClusterJobKind, count: number, calls = { n: 0 }) =>
      link.admit(kind, count, () => {
        calls.n++;
        for (let k = 0; k < count; k++) link.dispatch(job(kind, link.gatewayName), () => undefined);
        return { ok: true as const };
      });

    it('counts the queue bounds across gateways; a refused admission never runs', async () => {
      const [a, b] = [await cluster.link('a'), await cluster.link('b')];
      // No gateway takes jobs, so every one stays queued.
      expect(await admitting(a, 'single', 1)).toEqual({ ok: true });
      expect(await admitting(b, 'single', 1)).toEqual({ ok: true });
      const calls = { n: 0 };
      expect(await admitting(a, 'single', 1, calls)).toMatchObject({
        refusal: { code: 'queue_full', limit: 2, current: 2 },
      });
      expect(await admitting(b, 'wave', 4, calls)).toMatchObject({
        refusal: { code: 'queue_full', limit: 3, current: 0 },
      });
      expect(calls.n).toBe(0);
      expect(await admitting(a, 'wave', 3)).toEqual({ ok: true });
      expect(await admitting(b, 'wave', 1)).toMatchObject({ refusal: { code: 'queue_full', current: 3 } });
    });

    it('a dispatched run starts once on a gateway of the cluster and ends once there, with its output', async () => {
      const [o, x] = [await cluster.link('o'), await cluster.link('x')];
      const gateways = { o: new HandGateway('o'), x: new HandGateway('x') };
      o.bind(gateways.o);
      x.bind(gateways.x);
      const events: RunnerEvent[] = [];
      const run = job('single', 'o');
      expect(await o.admit('single', 1, () => o.dispatch(run, (e) => events.push(e)) && 'admitted')).toBe(
        'admitted',
      );
      const ended = await cluster.eventually('the run ended', () => events.find((e) => e.type === 'ended'));
      const started = events.find((e) => e.type === 'started');
      const host = started?.type === 'started' ? (started.host as 'o' | 'x') : undefined;
      expect(['o', 'x']).toContain(host);
      expect(events).toEqual([
        { type: 'started', shared: false, host },
        { type: 'output', text: `done ${copyIdOf(run.runId)} on ${host}` },
        ended,
      ]);
      expect(ended).toEqual({ type: 'ended', status: 'completed' });
      expect([...gateways.o.executed, ...gateways.x.executed]).toEqual([run.runId]);
    });

    it('a queued run refuses a steer, and a stop ends it cancelled, once, before any gateway takes it', async () => {
      const o = await cluster.link('o');
      const events: RunnerEvent[] = [];
      const handle = await o.admit('single', 1, () => o.dispatch(job('single', 'o'), (e) => events.push(e)));
      if ('refusal' in handle) throw new Error(`refused: ${handle.refusal.message}`);
      const steer = await handle.steer('go left', 'interrupt').then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(isCrewError(steer) && steer.refusal.code).toBe('not_running');
      handle.stop('cancel');
      handle.stop('cancel');
      await cluster.eventually('the stop', () => (events.length > 0 ? true : undefined));
      const x = await cluster.link('x');
      const gateways = [new HandGateway('o'), new HandGateway('x')];
      o.bind(gateways[0] as HandGateway);
      x.bind(gateways[1] as HandGateway);
      // A job taken after its stop would run somewhere: a later run taken shows the queue moved on without it.
      const later: RunnerEvent[] = [];
      const laterJob = job('single', 'o');
      await o.admit('single', 1, () => o.dispatch(laterJob, (e) => later.push(e)));
      await cluster.eventually('the later run ended', () => later.find((e) => e.type === 'ended'));
      expect(events).toEqual([{ type: 'ended', status: 'cancelled', stop: 'cancelled' }]);
      expect(gateways.flatMap((g) => g.executed)).toEqual([laterJob.runId]);
    });

    it('pages a run from the gateway that executes it; a gateway not in the cluster is not_here', async () => {
      const [o, x] = [await cluster.link('o'), await cluster.link('x')];
      o.bind(new HandGateway('o'));
      x.bind(new HandGateway('x'));
      await cluster.eventually('x in the cluster', () => (o.hasGateway('x') ? true : undefined));
      expect(await o.page('x', 'r1', { maxChars: 1000 })).toEqual({ text: `page of ${copyIdOf('r1')} on x` });
      const missing = await o.page('nobody', 'r1', { maxChars: 1000 }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(isCrewError(missing) && missing.refusal.code).toBe('not_here');
      expect(await cluster.eventually('a verdict on nobody', () => o.hasGateway('nobody'))).toBe(false);
    });

    it('a release reaches the gateway holding the session, and a released one the origin', async () => {
      const [o, x] = [await cluster.link('o'), await cluster.link('x')];
      const gateways = { o: new HandGateway('o'), x: new HandGateway('x') };
      o.bind(gateways.o);
      x.bind(gateways.x);
      o.release('x', 'c1');
      x.released('o', 'c2', 'expired');
      await cluster.eventually('the release', () => (gateways.x.releasedHere.length > 0 ? true : undefined));
      await cluster.eventually('the released', () =>
        gateways.o.releasedThere.length > 0 ? true : undefined,
      );
      expect(gateways.x.releasedHere).toEqual(['c1']);
      expect(gateways.o.releasedThere).toEqual(['c2 expired']);
    });

    it('a freed provider slot goes to the gateway that has been waiting for one, not back to the one that freed it', async () => {
      // a holds both provider slots and has a deep queue; b asks for a job while a holds them.
      const [a, b] = [await cluster.link('a', 2), await cluster.link('b')];
      const held = { a: new HeldGateway('a'), b: new HeldGateway('b') };
      try {
        a.bind(held.a);
        const ended: RunnerEvent[] = [];
        const jobs = Array.from({ length: 5 }, () => job('wave', 'a'));
        const admitted = await a.admit('wave', jobs.length, () => {
          for (const j of jobs) a.dispatch(j, (e) => e.type === 'ended' && ended.push(e));
          return 'admitted';
        });
        expect(admitted).toBe('admitted');
        await cluster.eventually('a holds both slots', () => (held.a.holding === 2 ? true : undefined));
        b.bind(held.b);
        await cluster.eventually('b asks for a job', async () =>
          (await cluster.asking('b')) ? true : undefined,
        );
        // a frees a slot: its own queue has more work, but b has been waiting, so b takes the slot.
        held.a.endOne();
        await cluster.eventually('the freed slot taken', () =>
          held.a.taken.length + held.b.taken.length === 3 ? true : undefined,
        );
        expect(held.b.taken).toEqual([jobs[2]!.runId]);
        expect(held.a.taken).toEqual([jobs[0]!.runId, jobs[1]!.runId]);
        // b is full (host cap 1): the next slot a frees is a's again; a, with room left, asks for more.
        held.a.endOne();
        await cluster.eventually('a takes the next', () => (held.a.taken.length === 3 ? true : undefined));
        await cluster.eventually('a asks for a job', async () =>
          (await cluster.asking('a')) ? true : undefined,
        );
        // Now b frees its slot: a has been waiting, so the last job goes to a, not back to b.
        held.b.endOne();
        await cluster.eventually('the last job taken', () =>
          held.a.taken.length + held.b.taken.length === 5 ? true : undefined,
        );
        expect(held.a.taken).toEqual([jobs[0]!.runId, jobs[1]!.runId, jobs[3]!.runId, jobs[4]!.runId]);
        expect(held.b.taken).toEqual([jobs[2]!.runId]);
        held.a.endAll();
        held.b.endAll();
        await cluster.eventually('all ended', () => (ended.length === jobs.length ? true : undefined));
        expect(ended.every((e) => e.type === 'ended' && e.status === 'completed')).toBe(true);
      } finally {
        held.a.endAll();
        held.b.endAll();
      }
    });

    it("the provider's 429 holds the cluster's starts until its retry-after", async () => {
      const o = await cluster.link('o');
      o.bind(new HandGateway('o'));
      expect(o.providerHoldUntil()).toBeUndefined();
      o.providerLimited('r1', 60_000);
      const until = await cluster.eventually('the hold', () => o.providerHoldUntil());
      expect(until).toBeGreaterThan(cluster.now() + 50_000);
      expect(until).toBeLessThanOrEqual(cluster.now() + 60_000);
    });
  });
}
