import { describe, expect, it } from 'vitest';
import { realClock } from '../../src/clock/real-clock.js';
import { defaultConfig } from '../../src/core/config-schema.js';
import { createGateway } from '../../src/gateway/create-gateway.js';
import { FakeRunner } from '../../src/runners/fake-runner.js';
import { fakeAgent } from '../helpers/fake-gateway.js';

const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('clean teardown on the real clock', () => {
  it('after close() every API promise has settled and no timer the gateway opened remains', async () => {
    const before = timers();
    const config = {
      ...defaultConfig(),
      'agent.subagent_spawn_stagger_secs': 0.05,
      'agent.spawn_min_memory_gb': 0,
    };
    const runner = new FakeRunner({
      clock: realClock,
      plan: (r) => (r.prompt.includes('hang') ? { hang: true } : { durationMs: 20 }),
    });
    const gateway = createGateway(config, {
      clock: realClock,
      runner,
      cap: 3,
      agents: new Map([['sim', fakeAgent('sim')]]),
    });
    gateway.spawn('cli:t', { tasks: ['a', 'b', 'hang c', 'd', 'e'] });
    gateway.spawn('cli:t', { task: 'hang f' });
    const waits = [gateway.waitForEvents('cli:t', 30_000), gateway.waitForEvents('cli:other', 30_000)];
    expect(timers()).toBeGreaterThan(before);
    await gateway.close();
    const settled = await Promise.allSettled(waits);
    expect(settled.every((s) => s.status === 'fulfilled')).toBe(true);
    expect(timers()).toBe(before);
    expect(runner.live.size).toBe(0);
  });
});
