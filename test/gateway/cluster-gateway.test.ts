import { describe, expect, it } from 'vitest';
import type { ClusterJob, ClusterLink } from '../../src/cluster/cluster-link.js';
import { CrewError } from '../../src/core/errors.js';
import { clusterUnavailable, notHere } from '../../src/core/refusals.js';
import type { MemorySample } from '../../src/core/scheduler-types.js';
import type { RunId } from '../../src/core/types.js';
import type { RunnerEvent } from '../../src/runners/runner.js';
import type { PageOptions, TranscriptPage } from '../../src/transcripts/transcript-store.js';
import { fakeWorld } from '../helpers/fake-gateway.js';

/** A cluster link that records what the gateway dispatched and lets the test answer for the cluster. */
class RecordingLink implements ClusterLink {
  readonly gatewayName = 'g0';
  readonly proxyRoom = 100;
  readonly dispatched: { job: ClusterJob; onEvent: (e: RunnerEvent) => void; stops: string[] }[] = [];
  admits = 0;
  refuse = false;
  readonly pages: { host: string; runId: RunId; options: PageOptions }[] = [];
  /** The gateways that answer a page request; others are down. */
  answering = new Set(['g1']);

  async admit<T>(_kind: ClusterJob['kind'], _members: number, admission: () => T) {
    this.admits++;
    if (this.refuse) return { refusal: clusterUnavailable('connect ECONNREFUSED') };
    return admission();
  }

  async page(host: string, runId: RunId, options: PageOptions): Promise<TranscriptPage> {
    this.pages.push({ host, runId, options });
    if (!this.answering.has(host)) throw new CrewError(notHere(runId, host, 'it does not answer'));
    return { text: `page of ${runId} from ${host}`, fromLine: 3, toLine: 4, totalLines: 9 };
  }

  readonly limited: { runId: string; retryAfterMs?: number }[] = [];
  providerLimited(runId: string, retryAfterMs?: number) {
    this.limited.push({ runId, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
  }

  holdUntil: number | undefined;
  providerHoldUntil() {
    return this.holdUntil;
  }

  /** Gateways gone from the registry. */
  readonly gone = new Set<string>();
  hasGateway(host: string) {
    return !this.gone.has(host);
  }

  readonly releases: { host: string; conversationId: RunId }[] = [];
  release(host: string, conversationId: RunId) {
    this.releases.push({ host, conversationId });
  }

  readonly releasedSent: { origin: string; conversationId: RunId; reason: string }[] = [];
  released(origin: string, conversationId: RunId, reason: 'expired' | 'evicted') {
    this.releasedSent.push({ origin, conversationId, reason });
  }

  dispatch(job: ClusterJob, onEvent: (e: RunnerEvent) => void) {
    const entry = { job, onEvent, stops: [] as string[] };
    this.dispatched.push(entry);
    return {
      stop: (reason: string) => {
        entry.stops.push(reason);
      },
      steer: async () => undefined,
    };
  }
}

/** Jobs of gateway g1 that this gateway executes: each a top-level copy (id `x<runId>`) of a `sim` run that hangs. */
function executeCopies(
  gateway: { executeForCluster(job: ClusterJob): Promise<unknown> },
  runIds: string[],
): void {
  for (const runId of runIds)
    void gateway.executeForCluster({
      runId,
      kind: 'single',
      origin: 'g1',
      spec: { task: 'hang', agent: 'sim' },
    });
}

describe('the gateway in cluster mode (a recording cluster link, fake clock)', () => {
  it('hands every top-level run of a wave to the cluster at once, stagger or not, and ends each as the cluster reports', async () => {
    const link = new RecordingLink();
    const world = fakeWorld({ cluster: link, 'agent.subagent_spawn_stagger_secs': 2 });
    const answer = await world.gateway.admit('cli:p', { tasks: ['a', 'b', 'c'] });
    expect(answer.ok).toBe(true);
    expect(link.admits).toBe(1);
    expect(link.dispatched.map((d) => d.job.kind)).toEqual(['wave', 'wave', 'wave']);
    expect(link.dispatched.map((d) => d.job.origin)).toEqual(['g0', 'g0', 'g0']);
    expect(world.runner.started).toHaveLength(0); // nothing executes here: the cluster does

    const [a, b, c] = link.dispatched as [
      (typeof link.dispatched)[0],
      (typeof link.dispatched)[0],
      (typeof link.dispatched)[0],
    ];
    for (const d of [a, b, c]) d.onEvent({ type: 'started', shared: false });
    a.onEvent({ type: 'output', text: 'result of a' });
    a.onEvent({ type: 'ended', status: 'completed' });
    b.onEvent({ type: 'ended', status: 'lost', error: 'gateway g2 died' });
    c.onEvent({ type: 'ended', status: 'failed', error: 'boom' });
    c.onEvent({ type: 'ended', status: 'completed' }); // a duplicate report changes nothing
    await world.clock.advance(0);
    const events = await world.gateway.waitForEvents('cli:p', 0);
    expect(events).toHaveLength(1);
    expect(events[0]!.kind).toBe('digest');
    expect(events[0]!.text).toMatch(/completed=1/);
    expect(events[0]!.text).toMatch(/failed=1/);
    expect(events[0]!.text).toMatch(/lost=1/);
    expect(events[0]!.text).toMatch(/result of a/);
  });

  it('a cancel of a cluster run goes to the cluster; a refusal from the cluster is answered and audited once', async () => {
    const link = new RecordingLink();
    const world = fakeWorld({ cluster: link });
    const answer = await world.gateway.admit('cli:p', { task: 'x' });
    const id = answer.ok ? answer.runs[0]!.id : '';
    expect(world.gateway.cancel(id, { kind: 'operator' })).toEqual({ ok: true });
    expect(link.dispatched[0]!.stops).toEqual(['cancel']);

    link.refuse = true;
    const refused = await world.gateway.admit('cli:p', { task: 'y' });
    expect(refused).toMatchObject({ ok: false, refusal: { code: 'cluster_unavailable' } });
    expect(world.sel.records.filter((r) => r.outcome === 'refused_cluster_unavailable')).toHaveLength(1);
    expect(link.dispatched).toHaveLength(1);
  });

  it('a nested spawn never asks the cluster', async () => {
    const link = new RecordingLink();
    const world = fakeWorld({ cluster: link, 'agent.subagent_max_depth': 2 });
    // A nested spawn names a running run as its parent: it is admitted here without the cluster.
    const parent = await world.gateway.admit('cli:p', { task: 'parent' });
    const parentId = parent.ok ? parent.runs[0]!.id : '';
    link.dispatched[0]!.onEvent({ type: 'started', shared: false });
    const admitsBefore = link.admits;
    const nested = await world.gateway.admit(`run:${parentId}`, { task: 'child' });
    expect(nested.ok).toBe(true);
    expect(link.admits).toBe(admitsBefore);
    expect(link.dispatched).toHaveLength(1);
  });

  it('a kept run is a cluster job; spawn_continue is a cluster job for the gateway keeping its session, busy while it runs, its result delivered once; release goes to that gateway', async () => {
    const link = new RecordingLink();
    const world = fakeWorld({ cluster: link });
    const kept = await world.gateway.admit('cli:p', { task: 'first', keep: true });
    expect(kept.ok).toBe(true);
    const conversation = kept.ok ? kept.runs[0]!.id : '';
    const first = link.dispatched[0]!;
    expect(first.job).toMatchObject({ runId: conversation, spec: { keep: true } });
    expect(first.job.continues).toBeUndefined();
    first.onEvent({ type: 'started', shared: false, host: 'g1' });
    first.onEvent({ type: 'ended', status: 'completed' });
    await world.clock.advance(0);
    expect(await world.gateway.waitForEvents('cli:p', 0)).toHaveLength(1);

    const admitsBefore = link.admits;
    const next = await world.gateway.admitContinue('cli:p', { conversation, task: 'second' });
    expect(next.ok, JSON.stringify(next)).toBe(true);
    const nextId = next.ok ? next.runs[0]!.id : '';
    // Counted against the cluster's bounds like any top-level run, and sent to where the session is.
    expect(link.admits).toBe(admitsBefore + 1);
    const second = link.dispatched[1]!;
    expect(second.job).toMatchObject({
      runId: nextId,
      kind: 'single',
      origin: 'g0',
      continues: conversation,
      host: 'g1',
      spec: { task: 'second', keep: true },
    });
    expect(world.runner.started).toHaveLength(0);

    // The cluster's own refusal (Redis away) is answered and audited once, as a spawn's is.
    link.refuse = true;
    expect(await world.gateway.admitContinue('cli:p', { conversation, task: 'third' })).toMatchObject({
      ok: false,
      refusal: { code: 'cluster_unavailable' },
    });
    expect(world.sel.records.filter((r) => r.outcome === 'refused_cluster_unavailable')).toHaveLength(1);
    link.refuse = false;
    const busy = await world.gateway.admitContinue('cli:p', { conversation, task: 'third' });
    expect(busy).toMatchObject({ ok: false, refusal: { code: 'conversation_busy' } });
    expect(link.dispatched).toHaveLength(2);

    second.onEvent({ type: 'started', shared: false, host: 'g1' });
    second.onEvent({ type: 'output', text: 'the second turn' });
    second.onEvent({ type: 'ended', status: 'completed' });
    second.onEvent({ type: 'ended', status: 'completed' }); // a second report is ignored
    await world.clock.advance(0);
    const events = await world.gateway.waitForEvents('cli:p', 0);
    expect(events.map((e) => e.run_ids)).toEqual([[nextId]]);
    expect(events[0]!.text).toMatch(/the second turn/);

    expect(world.gateway.release(conversation, { kind: 'parent', parent: 'cli:p' })).toEqual({ ok: true });
    expect(link.releases).toEqual([{ host: 'g1', conversationId: conversation }]);
    expect(world.runner.released).toEqual([]); // no session here to release
    const released = await world.gateway.admitContinue('cli:p', { conversation, task: 'fourth' });
    expect(released).toMatchObject({ ok: false, refusal: { code: 'conversation_released' } });
    expect(link.dispatched).toHaveLength(2);
  });

  it('a conversation whose gateway left the cluster answers conversation_released naming it; one that gateway released itself is released here with a notice', async () => {
    const link = new RecordingLink();
    const world = fakeWorld({ cluster: link });
    const conversations: RunId[] = [];
    for (const task of ['one', 'two']) {
      const kept = await world.gateway.admit('cli:p', { task, keep: true });
      conversations.push(kept.ok ? kept.runs[0]!.id : '');
      const d = link.dispatched.at(-1)!;
      d.onEvent({ type: 'started', shared: false, host: 'g1' });
      d.onEvent({ type: 'ended', status: 'completed' });
    }
    await world.clock.advance(0);
    expect(await world.gateway.waitForEvents('cli:p', 0)).toHaveLength(2);
    const [gone, expired] = conversations as [RunId, RunId];

    // g1's reaper released the second one: released here, and the parent hears of it once.
    world.executor.releasedElsewhere(expired, 'expired');
    world.executor.releasedElsewhere(expired, 'expired');
    await world.clock.advance(0);
    const notices = await world.gateway.waitForEvents('cli:p', 0);
    expect(notices.map((e) => e.kind)).toEqual(['notice']);
    const afterExpiry = await world.gateway.admitContinue('cli:p', { conversation: expired, task: 'x' });
    expect(afterExpiry).toMatchObject({ ok: false, refusal: { code: 'conversation_released' } });
    expect(!afterExpiry.ok && afterExpiry.refusal.message).toMatch(/expired/);

    link.gone.add('g1');
    const afterGone = await world.gateway.admitContinue('cli:p', { conversation: gone, task: 'x' });
    expect(afterGone).toMatchObject({ ok: false, refusal: { code: 'conversation_released' } });
    expect(!afterGone.ok && afterGone.refusal.message).toMatch(/gateway g1 left the cluster/);
    expect(link.dispatched).toHaveLength(2);
  });

  it("the executing gateway keeps a kept copy's session: a continuation job runs in it once, the origin's release ends it, its own reaper tells the origin", async () => {
    const link = new RecordingLink();
    const world = fakeWorld({
      cluster: link,
      'agent.keep_ttl_secs': 3600,
      'agent.max_kept_conversations': 8,
    });
    const job = (runId: string, task: string, continues?: string): ClusterJob => ({
      runId,
      kind: 'single',
      origin: 'g1',
      spec: { task: `sleep=10 ${task}`, agent: 'sim', keep: true },
      ...(continues !== undefined ? { continues, host: 'g0' } : {}),
    });
    const first = world.executor.executeForCluster(job('r1', 'first'));
    await world.clock.advance(100);
    expect(await first).toMatchObject({ kind: 'admitted' });
    expect(world.runner.started[0]).toMatchObject({ runId: 'xr1', keep: true });
    expect(world.gateway.statusOf('xr1')).toBe('completed');

    const second = world.executor.executeForCluster(job('r2', 'second', 'r1'));
    await world.clock.advance(100);
    expect(await second).toMatchObject({ kind: 'admitted', existing: false });
    expect(world.runner.started[1]).toMatchObject({ runId: 'xr2', keep: true, continueFrom: 'xr1' });
    expect(world.gateway.statusOf('xr2')).toBe('completed');
    // The same job delivered again (a stream read twice) does not run a second turn.
    expect(await world.executor.executeForCluster(job('r2', 'second', 'r1'))).toMatchObject({
      existing: true,
    });
    expect(world.runner.started).toHaveLength(2);

    world.executor.releaseForCluster('r1');
    await world.clock.advance(100);
    expect(world.runner.released).toEqual(['xr1']);
    expect(await world.executor.executeForCluster(job('r3', 'third', 'r1'))).toMatchObject({
      kind: 'refused',
      refusal: { code: 'conversation_released' },
    });

    // Its own reaper releases another kept copy: the origin is told, no notice goes to the cluster parent.
    const other = world.executor.executeForCluster(job('r4', 'kept'));
    await world.clock.advance(100);
    await other;
    const outboxBefore = world.store.outbox({}).length;
    await world.clock.advance(3_700_000);
    expect(world.runner.released).toEqual(['xr1', 'xr4']);
    expect(link.releasedSent).toEqual([{ origin: 'g1', conversationId: 'r4', reason: 'expired' }]);
    expect(world.store.outbox({}).filter((e) => e.kind === 'notice')).toHaveLength(0);
    expect(world.store.outbox({}).length).toBeLessThanOrEqual(outboxBefore);
  });

  it("spawn_status reads a cluster run's transcript where it executes: through its gateway, here for a copy run here, not_here when the gateway does not answer", async () => {
    const link = new RecordingLink();
    const world = fakeWorld({ cluster: link, 'agent.status_max_chars': 5000 });
    const answer = await world.gateway.admit('cli:p', { tasks: ['on g1', 'on g0', 'on g2'] });
    const [a, b, c] = (answer.ok ? answer.runs : []).map((r) => r.id) as [RunId, RunId, RunId];
    const [da, db, dc] = link.dispatched as [
      (typeof link.dispatched)[0],
      (typeof link.dispatched)[0],
      (typeof link.dispatched)[0],
    ];
    da.onEvent({ type: 'started', shared: false, host: 'g1' });
    db.onEvent({ type: 'started', shared: false, host: 'g0' });
    dc.onEvent({ type: 'started', shared: false, host: 'g2' });
    await world.clock.advance(100);

    const fromG1 = await world.gateway.status(a, { kind: 'operator' }, { offset: 2, limit: 2, grep: 'x' });
    expect(fromG1).toMatchObject({
      ok: true,
      text: `page of ${a} from g1`,
      from_line: 3,
      to_line: 4,
      total_lines: 9,
      run: { id: a, status: 'running', host: 'g1' },
    });
    expect(link.pages).toEqual([
      { host: 'g1', runId: a, options: { offset: 2, limit: 2, grep: 'x', maxChars: 5000 } },
    ]);

    // g0 is this gateway: the copy it executes (x<id>) is read from its own transcripts.
    void world.executor.executeForCluster(db.job);
    await world.clock.advance(100);
    expect(world.store.run(`x${b}`)?.run.status).toBe('running');
    const here = await world.gateway.status(b, { kind: 'operator' });
    expect(here).toMatchObject({ ok: true, run: { host: 'g0' } });
    expect(here.ok && here.text).toMatch(/out:on g0/);
    expect(link.pages).toHaveLength(1);

    const down = await world.gateway.status(c, { kind: 'operator' });
    expect(down).toMatchObject({ ok: false, refusal: { code: 'not_here' } });
    expect(!down.ok && down.refusal.message).toMatch(/g2/);
    expect(world.sel.records.filter((r) => r.outcome === 'refused_not_here')).toHaveLength(1);

    // Once it ended, its status and the first page its outcome brought are answered here; paging or
    // grep still needs g2.
    dc.onEvent({ type: 'output', text: 'the result g2 sent along' });
    dc.onEvent({ type: 'ended', status: 'completed' });
    await world.clock.advance(100);
    const ended = await world.gateway.status(c, { kind: 'operator' });
    expect(ended).toMatchObject({ ok: true, run: { status: 'completed', host: 'g2' } });
    expect(ended.ok && ended.text).toMatch(/the result g2 sent along/);
    expect(await world.gateway.status(c, { kind: 'operator' }, { grep: 'result' })).toMatchObject({
      ok: false,
      refusal: { code: 'not_here' },
    });
  });

  it('a 429 to a run executed here for the cluster, or nested under one, reaches the cluster cap; no per-host provider cap binds', async () => {
    const link = new RecordingLink();
    const world = fakeWorld({
      cluster: link,
      'agent.subagent_max_depth': 2,
      sim: { provider: 'anthropic' },
      cap: 1,
    });
    const executing = world.executor.executeForCluster({
      runId: 'r1',
      kind: 'single',
      origin: 'g1',
      spec: { task: 'hang', agent: 'sim' },
    });
    await world.clock.advance(100);
    const copy = 'xr1';
    expect(world.gateway.statusOf(copy)).toBe('running');
    world.gateway.observeProviderCall({
      provider: 'anthropic',
      runId: copy,
      status: 429,
      retryAfterMs: 2000,
      tokens: 0,
    });
    const nested = await world.gateway.admit(`run:${copy}`, { task: 'hang', agent: 'sim' });
    const nestedId = nested.ok ? nested.runs[0]!.id : '';
    await world.clock.advance(100);
    world.gateway.observeProviderCall({ provider: 'anthropic', runId: nestedId, status: 529, tokens: 0 });
    // A 200 and a run this gateway only proxies (admitted here, executing elsewhere) say nothing to the cap.
    world.gateway.observeProviderCall({ provider: 'anthropic', runId: copy, status: 200, tokens: 5 });
    const proxied = await world.gateway.admit('cli:p', { task: 'x', agent: 'sim' });
    const proxyId = proxied.ok ? proxied.runs[0]!.id : '';
    world.gateway.observeProviderCall({ provider: 'anthropic', runId: proxyId, status: 429, tokens: 0 });
    expect(link.limited).toEqual([{ runId: 'r1', retryAfterMs: 2000 }, { runId: 'r1' }]);
    // The host's own provider cap is off in cluster mode: the cluster's shared one is the cap.
    expect(world.gateway.providerCaps()).toEqual({});
    world.gateway.cancel(copy, { kind: 'operator' });
    await world.clock.advance(100);
    await executing;
    expect(world.gateway.statusOf(copy)).toBe('cancelled');
    // An answer reported just after its run ended still counts (from the stored record).
    world.gateway.observeProviderCall({ provider: 'anthropic', runId: copy, status: 429, tokens: 0 });
    expect(link.limited).toHaveLength(3);
  });

  it('a run still waiting in the cluster queue during the provider hold shows waiting_for provider; a started one does not', async () => {
    const link = new RecordingLink();
    const world = fakeWorld({ cluster: link });
    const answer = await world.gateway.admit('cli:p', { tasks: ['a', 'b'] });
    const [waiting, started] = answer.ok ? answer.runs.map((r) => r.id) : [];
    link.dispatched[1]!.onEvent({ type: 'started', shared: false });
    await world.clock.advance(100);
    const viewOf = (id: string) => world.gateway.viewOf(world.store.run(id)!);
    expect(viewOf(waiting!).waiting_for).toBeUndefined();
    link.holdUntil = world.clock.now() + 3000;
    expect(viewOf(waiting!)).toMatchObject({
      status: 'queued',
      waiting_for: 'provider',
      hold_until: new Date(world.clock.now() + 3000).toISOString(),
    });
    expect(viewOf(started!).waiting_for).toBeUndefined();
    await world.clock.advance(3000);
    expect(viewOf(waiting!).waiting_for).toBeUndefined();
  });
});

describe('what the gateway counts in cluster mode (resource_status, spawn_list, the dashboard header)', () => {
  it('a run waiting in the cluster queue shows queued on its origin, and the header counts it queued; once a gateway takes it, it runs (issue 30)', async () => {
    const link = new RecordingLink();
    const world = fakeWorld({ cluster: link });
    const answer = await world.gateway.admit('cli:p', { tasks: ['waits', 'taken'] });
    expect(answer).toMatchObject({ ok: true });
    const [waiting, taken] = (answer.ok ? answer.runs : []).map((r) => r.id) as [RunId, RunId];
    link.dispatched[1]!.onEvent({ type: 'started', shared: false, host: 'g1' });
    await world.clock.advance(0);

    const list = world.gateway.list({ kind: 'operator' });
    expect(list.queued).toBe(1);
    expect(list.runs.find((r) => r.id === waiting)?.status).toBe('queued');
    expect(list.runs.find((r) => r.id === taken)?.status).toBe('running');
    expect(await world.gateway.status(waiting, { kind: 'operator' })).toMatchObject({
      ok: true,
      run: { status: 'queued' },
    });
    expect(world.gateway.counts()).toMatchObject({ queued: 1, proxies: 2 });

    link.dispatched[0]!.onEvent({ type: 'started', shared: false, host: 'g2' });
    await world.clock.advance(0);
    expect(world.gateway.list({ kind: 'operator' }).queued).toBe(0);
    expect(world.gateway.viewOf(world.store.run(waiting)!).status).toBe('running');
  });

  it('runs executing here (copies and their nested runs) count against the host cap; proxies of runs admitted here do not, and are counted apart', async () => {
    const link = new RecordingLink();
    const world = fakeWorld({ cluster: link, cap: 2, 'agent.subagent_max_depth': 2 });
    // Three runs admitted here: one waits in the cluster queue, one executes on g1, one on g0 (this one).
    const answer = await world.gateway.admit('cli:p', { tasks: ['waits', 'on g1', 'on g0'] });
    expect(answer.ok).toBe(true);
    const [, onG1, onG0] = link.dispatched as [
      (typeof link.dispatched)[0],
      (typeof link.dispatched)[0],
      (typeof link.dispatched)[0],
    ];
    onG1.onEvent({ type: 'started', shared: false, host: 'g1' });
    onG0.onEvent({ type: 'started', shared: false, host: 'g0' });
    void world.executor.executeForCluster(onG0.job);
    // And one g1 admitted, executing here, with a nested run under it.
    executeCopies(world.executor, ['r9']);
    await world.clock.advance(0);
    const nested = await world.gateway.admit('run:xr9', { task: 'hang' });
    expect(nested.ok, JSON.stringify(nested)).toBe(true);
    await world.clock.advance(0);

    // Executing here: two copies (top-level) and one nested run; the three proxies are apart.
    expect(world.gateway.counts()).toMatchObject({
      cap: 2,
      running: 3,
      starting: 0,
      topLevel: 2,
      proxies: 3,
    });
    expect(world.gateway.list({ kind: 'operator' })).toMatchObject({
      cap: 2,
      running: 3,
      running_top_level: 2,
      running_nested: 1,
    });
  });

  it('on one host nothing is a proxy', async () => {
    const world = fakeWorld({ cap: 2 });
    await world.gateway.admit('cli:p', { tasks: ['hang', 'hang', 'hang'] });
    await world.clock.advance(0);
    expect(world.gateway.counts()).toMatchObject({ running: 2, topLevel: 2, queued: 1, proxies: 0 });
  });
});

describe('the reservation gate in cluster mode (fake clock)', () => {
  /** A host with 3 GiB available where each run of `sim` is expected to peak at 1 GiB (buffer 2.5 GiB). */
  const tightMemory = (gateway: { observeMemory(sample: MemorySample): void }, currentGb = {}) =>
    gateway.observeMemory({ availableGb: 3, currentGb, expectedGb: { sim: 1 }, spreadGb: { sim: 0 } });

  it('judges what executes here: the origin hands all its runs to the cluster, whose gateways gate their own copies', async () => {
    const link = new RecordingLink();
    const world = fakeWorld({ cluster: link, cap: 8, 'agent.reservation_buffer_gb': 2.5 });
    tightMemory(world.gateway);
    // A proxy starts no process here, so this host's memory does not hold it back.
    const answer = await world.gateway.admit('cli:p', { tasks: ['a', 'b', 'c', 'd'], agent: 'sim' });
    expect(answer.ok).toBe(true);
    await world.clock.advance(0);
    expect(link.dispatched.map((d) => d.job.spec.task)).toEqual(['a', 'b', 'c', 'd']);
    for (const d of link.dispatched) d.onEvent({ type: 'started', shared: false, host: 'g1' });
    tightMemory(world.gateway);
    // Nor do proxies running elsewhere hold back a copy executed here: one starts (nothing live here), the
    // second waits, since 1 + 1 GiB expected does not fit 3 − 2.5 GiB.
    executeCopies(world.executor, ['x1', 'x2']);
    await world.clock.advance(0);
    expect(world.gateway.counts()).toMatchObject({ running: 1, topLevel: 1, queued: 1, proxies: 4 });
  });

  it('a copy the gate holds back does not hold back the runs admitted here behind it; copies keep their order', async () => {
    const link = new RecordingLink();
    const world = fakeWorld({ cluster: link, cap: 8, 'agent.reservation_buffer_gb': 2.5 });
    tightMemory(world.gateway);
    executeCopies(world.executor, ['x1', 'x2', 'x3']);
    await world.clock.advance(0);
    // x1 runs, x2 and x3 wait for memory here.
    expect(world.gateway.counts()).toMatchObject({ running: 1, queued: 2 });
    const answer = await world.gateway.admit('cli:p', { tasks: ['a', 'b'], agent: 'sim' });
    expect(answer.ok).toBe(true);
    await world.clock.advance(0);
    expect(link.dispatched.map((d) => d.job.spec.task)).toEqual(['a', 'b']);
    const single = await world.gateway.admit('cli:p', { task: 'c', agent: 'sim' });
    expect(single.ok).toBe(true);
    await world.clock.advance(0);
    expect(link.dispatched.map((d) => d.job.spec.task)).toEqual(['a', 'b', 'c']);
    // Memory frees for one more: the copies start in their order.
    world.gateway.observeMemory({
      availableGb: 5,
      currentGb: {},
      expectedGb: { sim: 1 },
      spreadGb: { sim: 0 },
    });
    await world.clock.advance(0);
    // Queued: the copy waiting here for memory and the three runs waiting in the cluster queue.
    expect(world.gateway.counts()).toMatchObject({ running: 2, queued: 4, proxies: 3 });
    expect(['x1', 'x2', 'x3'].map((id) => world.store.run(`x${id}`)?.run.status)).toEqual([
      'running',
      'running',
      'queued',
    ]);
  });
});

describe('the per-spawn memory gate in cluster mode', () => {
  it("does not refuse a top-level spawn for this gateway's memory (it executes where its job is taken); a nested spawn here it does", async () => {
    const link = new RecordingLink();
    const world = fakeWorld({
      cluster: link,
      cap: 2,
      'agent.subagent_max_depth': 2,
      memoryGate: () => ({ critical: true, availableGb: 1.5, minGb: 4 }),
    });
    const answer = await world.gateway.admit('cli:p', { task: 'elsewhere' });
    expect(answer.ok, JSON.stringify(answer)).toBe(true);
    expect(link.dispatched.map((d) => d.job.spec.task)).toEqual(['elsewhere']);
    // A copy executing here spawns a nested run: that one would start here, so the gate refuses it.
    executeCopies(world.executor, ['r9']);
    await world.clock.advance(0);
    const nested = await world.gateway.admit('run:xr9', { task: 'child' });
    expect(nested.ok).toBe(false);
    expect(!nested.ok && nested.refusal.code).toBe('memory_critical');
  });
});

describe('the stagger in cluster mode (fake clock)', () => {
  it('the executing gateway starts one cluster job’s process per stagger interval; the origin adds its jobs at once, also while a copy waits for the stagger', async () => {
    const link = new RecordingLink();
    const world = fakeWorld({
      cluster: link,
      cap: 4,
      'agent.subagent_spawn_stagger_secs': 2,
      'agent.subagent_max_depth': 2,
    });
    const job = (runId: string) => ({
      runId,
      kind: 'single' as const,
      origin: 'g1',
      spec: { task: 'hang', agent: 'sim' },
    });
    for (const id of ['r1', 'r2', 'r3']) void world.executor.executeForCluster(job(id));
    await world.clock.advance(0);
    const started = () => world.runner.started.map((r) => r.runId);
    expect(started()).toEqual(['xr1']);
    expect(world.gateway.statusOf('xr2')).toBe('starting');

    // The origin side is not throttled: a wave admitted here is in the cluster queue at once.
    const wave = await world.gateway.admit('cli:p', { tasks: ['a', 'b', 'c'] });
    expect(wave.ok).toBe(true);
    expect(link.dispatched).toHaveLength(3);

    await world.clock.advance(1999);
    expect(started()).toEqual(['xr1']);
    await world.clock.advance(1);
    expect(started()).toEqual(['xr1', 'xr2']);
    await world.clock.advance(2000);
    expect(started()).toEqual(['xr1', 'xr2', 'xr3']);
    // Nested runs start at once under their ancestor's permit, as on one host.
    const nested = await world.gateway.admit('run:xr3', { task: 'hang', agent: 'sim' });
    expect(nested.ok).toBe(true);
    await world.clock.advance(0);
    expect(started()).toHaveLength(4);
  });
});
