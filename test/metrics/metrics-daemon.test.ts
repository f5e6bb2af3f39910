import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeProvider, startFakeProvider } from '../../src/fake-provider/fake-provider.js';
import { api, type DaemonProcess, pollFor, startDaemonProcess } from '../helpers/daemon-process.js';

/**
 * `GET /metrics` on a real daemon (issue 32 §2), scraped as Prometheus would: runs by status and error
 * kind, queue depths, the cap and its terms, the provider cap and 429s (a real agent process calling the
 * scripted provider through the provider gateway), delivery lag, transcript bytes, process trees and
 * event-loop delay. Only the operator token or `metrics.token` may scrape.
 */

const SCRAPE_TOKEN = 'metrics-scrape-token-0123456789abcdef';

/** One Anthropic call with the task as its prompt; exits 1 on a non-200 answer. */
const AGENT = `
const task = process.argv[2] ?? '';
const res = await fetch(process.env.ANTHROPIC_BASE_URL + '/v1/messages', {
  method: 'POST',
  headers: { 'content-type': 'application/json', 'x-api-key': 'sk-test', 'anthropic-version': '2023-06-01' },
  body: JSON.stringify({ model: 'claude-test', max_tokens: 64, messages: [{ role: 'user', content: task }] }),
});
console.log('provider answered ' + res.status + ': ' + (await res.text()).slice(0, 200));
process.exit(res.status === 200 ? 0 : 1);
`;

type Run = { id: string; status: string; error_kind?: string };

/** Prometheus text → `name{labels}` → value; labels in the order the exposition gives them. */
function parse(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}

describe('GET /metrics on a real daemon', () => {
  let provider: FakeProvider;
  let d: DaemonProcess;
  let dir: string;

  const scrape = async (token: string | undefined) => {
    const response = await fetch(`${d.url}/metrics`, {
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    });
    return {
      status: response.status,
      type: response.headers.get('content-type'),
      text: await response.text(),
    };
  };
  const spawn = async (task: string, agent = 'sim') =>
    (
      (await api(d, 'POST', '/api/spawn', { parent: 'cli:metrics', args: { task, agent } })).body
        .runs as Run[]
    )[0]!.id;
  const ended = (id: string) =>
    pollFor(`run ${id} to end`, async () => {
      const run = ((await api(d, 'GET', '/api/runs')).body.runs as Run[]).find((r) => r.id === id);
      return run && !['queued', 'starting', 'running'].includes(run.status) ? run : undefined;
    });

  beforeAll(async () => {
    provider = await startFakeProvider({ reply: 'Hello, metrics.' });
    dir = mkdtempSync(join(tmpdir(), 'crew-metrics-agent-'));
    writeFileSync(join(dir, 'agent.mjs'), AGENT);
    d = await startDaemonProcess({
      config: {
        'metrics.token': SCRAPE_TOKEN,
        'agent.max_subagents': 3,
        'providers.anthropic.upstream': provider.url,
        'agents.probe': {
          runner: 'command',
          command: [process.execPath, join(dir, 'agent.mjs'), '{task}'],
          provider: 'anthropic',
        },
      },
    });
  }, 60_000);
  afterAll(async () => {
    await d?.stop();
    d?.cleanup();
    await provider?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a scrape without the operator token or the scrape token', async () => {
    expect((await scrape(undefined)).status).toBe(401);
    expect((await scrape('not-the-token')).status).toBe(401);
    const ok = await scrape(SCRAPE_TOKEN);
    expect(ok.status).toBe(200);
    expect(ok.type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect((await scrape(d.token)).status).toBe(200);
  });

  it('counts ended runs by status and error kind, provider requests and 429s, transcript bytes and delivery lag', async () => {
    const ids = [
      await spawn('#sim bytes=5000 hello metrics'),
      await spawn('#sim fail=error'),
      await spawn('say hello', 'probe'),
      await spawn('#fake status=429 retry_after=1', 'probe'),
    ];
    const runs = await Promise.all(ids.map(ended));
    expect(runs.map((r) => r.status)).toEqual(['completed', 'failed', 'completed', 'failed']);
    const m = parse((await scrape(SCRAPE_TOKEN)).text);

    // By status and error kind, each count as the API reports the runs.
    const byLabel = new Map<string, number>();
    for (const run of runs) {
      const key = `crew_runs_ended_total{status="${run.status}",error_kind="${run.error_kind ?? 'none'}"}`;
      byLabel.set(key, (byLabel.get(key) ?? 0) + 1);
    }
    for (const [key, count] of byLabel) expect(m.get(key), key).toBe(count);

    expect(m.get('crew_runs{state="queued"}')).toBe(0);
    expect(m.get('crew_runs{state="running"}')).toBe(0);
    expect(m.get('crew_queue_depth{queue="single"}')).toBe(0);
    expect(m.get('crew_queue_limit{queue="single"}')).toBe(32);
    expect(m.get('crew_cap')).toBe(3);
    expect(m.get('crew_cap_info{source="pinned"}')).toBe(1);
    // The terms as resource_status gives them (a pinned cap computes none, so none is exported).
    const resources = (await api(d, 'GET', '/api/resources')).body as Record<string, unknown>;
    for (const [term, field] of [
      ['memory', 'mem_term'],
      ['cpu', 'cpu_term'],
    ] as const) {
      const value = resources[field];
      expect(m.get(`crew_cap_term{term="${term}"}`), term).toBe(value === null ? undefined : value);
    }
    expect(m.get('crew_host_cpus')).toBe(resources.cpu_count);
    expect(m.get('crew_host_memory_available_bytes')).toBeGreaterThan(0);

    expect(m.get('crew_provider_requests_total{provider="anthropic",status="200"}')).toBe(1);
    expect(m.get('crew_provider_requests_total{provider="anthropic",status="429"}')).toBe(1);
    expect(m.get('crew_provider_rate_limited_total{provider="anthropic"}')).toBe(1);
    expect(m.get('crew_provider_cap{provider="anthropic"}')).toBeGreaterThanOrEqual(1);
    expect(m.has('crew_provider_held{provider="anthropic"}')).toBe(true);

    // The 5000-byte answer alone, plus the others' output.
    expect(m.get('crew_transcript_bytes_total')).toBeGreaterThan(5000);

    // Nobody has waited for cli:metrics yet: four events pending, the oldest a few seconds old.
    expect(m.get('crew_delivery_pending_events')).toBe(4);
    expect(m.get('crew_delivery_oldest_pending_age_seconds')).toBeGreaterThan(0);
    const waited = await api(d, 'GET', '/api/events?parent=cli:metrics&timeout_secs=1');
    expect((waited.body.events as unknown[]).length).toBe(4);
    const after = parse((await scrape(SCRAPE_TOKEN)).text);
    expect(after.get('crew_delivery_pending_events')).toBe(0);
    expect(after.get('crew_delivery_oldest_pending_age_seconds')).toBe(0);

    // The event loop's delay since the previous scrape (the resolution taken off), sampled every 20 ms.
    expect(after.get('crew_event_loop_delay_samples')).toBeGreaterThan(0);
    const p99 = after.get('crew_event_loop_delay_seconds{quantile="0.99"}') ?? Number.NaN;
    expect(p99).toBeGreaterThanOrEqual(0);
    expect(p99).toBeLessThanOrEqual(after.get('crew_event_loop_delay_max_seconds') ?? Number.NaN);
    expect(p99).toBeLessThan(5);
  }, 90_000);

  it('shows the process trees of running runs and the queue as it fills', async () => {
    const held = [await spawn('#sim hang'), await spawn('#sim hang'), await spawn('#sim hang')];
    const queued = await spawn('#sim hang');
    const m = await pollFor('three trees sampled', async () => {
      const now = parse((await scrape(d.token)).text);
      return now.get('crew_process_trees') === 3 ? now : undefined;
    });
    expect(m.get('crew_runs{state="running"}')).toBe(3);
    expect(m.get('crew_runs{state="queued"}')).toBe(1);
    expect(m.get('crew_queue_depth{queue="single"}')).toBe(1);
    expect(m.get('crew_process_tree_rss_bytes')).toBeGreaterThan(10 * 1024 * 1024);
    for (const id of [queued, ...held]) await api(d, 'POST', `/api/runs/${id}/cancel`);
  }, 60_000);
});
