import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, type DaemonProcess, pollFor, startDaemonProcess } from '../helpers/daemon-process.js';

/**
 * `agent.acp_request_timeout_secs` reaches the daemon's ACP runner: an agent that never answers
 * `initialize` fails its run after the configured time (here 1 s), not the 30 s default. A cold CLI start
 * (opencode in a fresh home, under load) needed the opposite: more than the default.
 */

type Run = { id: string; status: string; error?: string };

describe('the ACP request timeout from config', () => {
  let d: DaemonProcess;

  beforeAll(async () => {
    d = await startDaemonProcess({
      config: {
        'agent.acp_request_timeout_secs': 1,
        'agents.mute': { command: ['sleep', '60'] },
      },
    });
  }, 60_000);
  afterAll(async () => {
    await d?.stop();
    d?.cleanup();
  });

  it('fails a run whose agent never answers initialize after the configured seconds', async () => {
    const spawned = await api(d, 'POST', '/api/spawn', { args: { task: 'hello', agent: 'mute' } });
    const id = (spawned.body.runs as Run[])[0]!.id;
    const run = await pollFor(
      `run ${id} to end`,
      async () => {
        const runs = (await api(d, 'GET', '/api/runs')).body.runs as Run[];
        const found = runs.find((r) => r.id === id);
        return found && !['queued', 'starting', 'running'].includes(found.status) ? found : undefined;
      },
      20_000,
    );
    expect(run.status).toBe('failed');
    expect(run.error).toContain('did not answer within 1000 ms');
  }, 30_000);
});
