import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, type DaemonProcess, pollFor, startDaemonProcess } from '../helpers/daemon-process.js';

type Run = { id: string; status: string };

const MAX_BYTES = 1024 * 1024;

/**
 * A real ACP agent (the simulator) answering with one `agent_message_chunk` of 34 MiB: one JSON-RPC line
 * past the ACP SDK's 32 MiB message limit. The run completes and its transcript keeps the first
 * `agent.transcript_max_bytes` with the cut marker, as when the same output comes in many chunks.
 */
describe('one huge ACP chunk (the real daemon and simulator)', () => {
  let d: DaemonProcess;
  beforeAll(async () => {
    d = await startDaemonProcess({ config: { 'agent.transcript_max_bytes': MAX_BYTES } });
  }, 30_000);
  afterAll(async () => {
    await d?.stop();
    d?.cleanup();
  });

  it('completes and cuts the transcript at the limit with the marker', async () => {
    const spawned = await api(d, 'POST', '/api/spawn', {
      parent: 'cli:big',
      args: { task: '#sim bytes=34mb chunks=1' },
    });
    expect(spawned.body.ok, JSON.stringify(spawned.body)).toBe(true);
    const id = (spawned.body.runs as { id: string }[])[0]!.id;
    const run = await pollFor(
      'the run to end',
      async () => {
        const r = (await api(d, 'GET', `/api/runs/${id}?limit=1`)).body.run as Run | undefined;
        return r && ['completed', 'failed', 'cancelled', 'timed_out'].includes(r.status) ? r : undefined;
      },
      60_000,
    );
    expect(run.status, JSON.stringify(run)).toBe('completed');
    const page = await api(d, 'GET', `/api/runs/${id}?grep=${encodeURIComponent('transcript cut at')}`);
    expect(JSON.stringify(page.body)).toContain(`[transcript cut at ${MAX_BYTES} bytes`);
    const head = await api(d, 'GET', `/api/runs/${id}?offset=0&limit=1`);
    expect(head.body.text).toContain('sim output line 000001');
    expect((run as Run & { result_chars: number }).result_chars).toBeGreaterThan(MAX_BYTES);
  }, 90_000);
});
