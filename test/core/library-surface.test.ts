import { describe, expect, it } from 'vitest';
import * as crew from '../../src/index.js';

describe('the library surface (src/index.ts)', () => {
  it('creates a gateway in-process and runs a wave to one digest on the fake runner', async () => {
    const clock = new crew.FakeClock();
    const gateway = crew.createGateway(
      { ...crew.defaultConfig(), 'agent.subagent_spawn_stagger_secs': 0 },
      {
        clock,
        runner: new crew.FakeRunner({ clock, plan: () => ({ durationMs: 10, output: ['ok'] }) }),
        agents: new Map([['sim', { name: 'sim', runner: 'acp', command: ['x'], shared: false, skills: [] }]]),
        defaultCwd: '/tmp',
      },
    );
    const wave = gateway.spawn('mcp:lib', { tasks: ['a', 'b'] });
    expect(wave.ok).toBe(true);
    await clock.advance(50);
    const events = await gateway.waitForEvents('mcp:lib', 0);
    expect(events.map((e) => e.kind)).toEqual(['digest']);
    await gateway.close();
  });

  it('exports the refusal codes and the error class', () => {
    expect(crew.REFUSAL_CODES).toContain('queue_full');
    expect(new crew.CrewError({ code: 'not_found', message: 'x' }).code).toBe('not_found');
  });
});
