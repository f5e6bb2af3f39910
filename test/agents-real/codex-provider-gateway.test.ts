import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../helpers/daemon-process.js';
import { ensureCli, INSTALL_TIMEOUT_MS, type Rig, spawnRun, startRig, waitEnded } from './real-agent-rig.js';

/**
 * codex-acp through Crew's provider gateway (issue 17): Codex reads no base-URL variable, so the agent's
 * command carries `--config=openai_base_url="{provider_base_url}"` (as the codex preset does) and the
 * daemon fills in the gateway's URL with the run's token. Its Responses calls reach the scripted provider
 * with the agent's own key, and the run's usage is recorded.
 */
describe('codex-acp through the provider gateway (real CLI, scripted provider)', () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig('codex', await ensureCli('codex'), {}, { viaGateway: 'openai' });
  }, INSTALL_TIMEOUT_MS + 30_000);
  afterAll(async () => {
    await rig?.close();
  });

  it('completes a turn with every model call through the gateway, its usage on the run', async () => {
    const id = await spawnRun(rig, 'Say hello.');
    const { run, text } = await waitEnded(rig, id);
    expect(run.status, `${run.error} / ${text}`).toBe('completed');
    expect(text).toContain('Hello from the fake provider.');
    const calls = rig.provider.requests.filter((r) => r.api === 'openai-responses');
    expect(calls.length).toBeGreaterThan(0);
    // The agent's own key passed through untouched.
    expect(calls.every((r) => r.headers.authorization === 'Bearer crew-test-dummy-key')).toBe(true);
    const usage = (run as { usage?: Record<string, number> }).usage;
    expect(usage?.requests).toBeGreaterThanOrEqual(calls.length);
    expect(usage?.input_tokens).toBeGreaterThan(0);
    expect(usage?.output_tokens).toBeGreaterThan(0);
    const resources = (await api(rig.daemon, 'GET', '/api/resources')).body as {
      providers?: Record<string, Record<string, unknown>>;
    };
    expect(resources.providers?.openai?.requests as number).toBeGreaterThanOrEqual(calls.length);
  }, 180_000);
});
