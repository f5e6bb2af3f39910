import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../helpers/daemon-process.js';
import { ensureCli, INSTALL_TIMEOUT_MS, type Rig, spawnRun, startRig, waitEnded } from './real-agent-rig.js';

/**
 * claude-agent-acp through Crew's provider gateway (issue 17): the agent is defined with
 * `provider: anthropic`, so the daemon sets its ANTHROPIC_BASE_URL to the gateway (with the run's token)
 * and the gateway forwards to the scripted provider. The calls arrive with the agent's own key, and the
 * daemon counts them and reacts to a 429.
 */
describe('claude-agent-acp through the provider gateway (real CLI, scripted provider)', () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig('claude', await ensureCli('claude'), {}, { viaGateway: 'anthropic' });
  }, INSTALL_TIMEOUT_MS + 30_000);
  afterAll(async () => {
    await rig?.close();
  });

  const anthropic = async () =>
    (
      (await api(rig.daemon, 'GET', '/api/resources')).body as {
        providers?: Record<string, Record<string, unknown>>;
      }
    ).providers?.anthropic;

  it('completes a turn with every model call through the gateway, counted with its tokens', async () => {
    const id = await spawnRun(rig, 'Say hello.');
    const { run, text } = await waitEnded(rig, id);
    expect(run.status, `${run.error} / ${text}`).toBe('completed');
    expect(text).toContain('Hello from the fake provider.');
    const calls = rig.provider.requests.filter((r) => r.api === 'anthropic');
    expect(calls.length).toBeGreaterThan(0);
    // The agent's own key passed through untouched.
    expect(calls.every((r) => r.headers['x-api-key'] === 'crew-test-dummy-key')).toBe(true);
    const traffic = await anthropic();
    expect(traffic?.requests as number).toBeGreaterThanOrEqual(calls.length);
    expect(traffic?.tokens_per_minute as number).toBeGreaterThan(0);
  }, 180_000);

  it('a 429 the CLI meets lowers the provider cap and records its retry-after', async () => {
    const before = (await anthropic())?.cap as number;
    const id = await spawnRun(rig, '#fake status=429 retry_after=2');
    const { run } = await waitEnded(rig, id);
    expect(run.status).toBe('failed');
    const after = await anthropic();
    expect(after?.rate_limited as number).toBeGreaterThan(0);
    expect(after?.cap as number).toBeLessThan(before);
    expect(after?.last_retry_after_secs).toBe(2);
  }, 180_000);
});
