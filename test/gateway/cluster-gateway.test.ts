import { describe, expect, it } from 'vitest';
import type { ClusterJob, ClusterLink } from '../../src/cluster/cluster-link.js';
import { CrewError } from '../../src/core/errors.js';
import { clusterUnavailable, notHere } from '../../src/core/refusals.js';
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

  it('keep=true is refused in cluster mode; a nested spawn never asks the cluster', async () => {
    const link = new RecordingLink();
    const world = fakeWorld({ cluster: link, 'agent.subagent_max_depth': 2 });
    expect(await world.gateway.admit('cli:p', { task: 'x', keep: true })).toMatchObject({
      ok: false,
      refusal: { code: 'invalid_argument', path: 'keep' },
    });
    expect(link.admits).toBe(0);
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
    await world.clock.advance(0);

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
    void world.gateway.executeForCluster(db.job);
    await world.clock.advance(0);
    expect(world.store.run(`x${b}`)?.run.status).toBe('running');
    const here = await world.gateway.status(b, { kind: 'operator' });
    expect(here).toMatchObject({ ok: true, run: { host: 'g0' } });
    expect(here.ok && here.text).toMatch(/out:on g0/);
    expect(link.pages).toHaveLength(1);

    const down = await world.gateway.status(c, { kind: 'operator' });
    expect(down).toMatchObject({ ok: false, refusal: { code: 'not_here' } });
    expect(!down.ok && down.refusal.message).toMatch(/g2/);
    expect(world.sel.records.filter((r) => r.outcome === 'refused_not_here')).toHaveLength(1);
  });
});
