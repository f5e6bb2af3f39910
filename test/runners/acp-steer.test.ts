import { describe, expect, it } from 'vitest';
import { realClock } from '../../src/clock/real-clock.js';
import { CrewError } from '../../src/core/errors.js';
import { AcpRunner } from '../../src/runners/acp-runner.js';
import { DEFAULT_ANSWER } from '../../src/sim/answer.js';
import { simAgent } from '../helpers/sim.js';
import { useRunner } from './runner-conformance.js';

describe.each([false, true])('ACP runner: steering (shared runtime: %s)', (shared) => {
  const fixture = useRunner(() => new AcpRunner({ clock: realClock, killGraceMs: 2000 }));
  const agent = simAgent({ shared });

  it('interrupt cancels the turn and prompts with the message; the run continues and ends once', async () => {
    const r = fixture.start(agent, 'first\n#sim chunks=3 hang', { shared });
    await r.until((e) => e.type === 'output' && e.text.includes('3/3'), 'the first turn’s output');
    await r.handle.steer('second\n#sim echo', 'interrupt');
    expect(await r.ended).toEqual({ type: 'ended', status: 'completed' });
    expect(r.output()).toBe('sim: chunk 1/3\nsim: chunk 2/3\nsim: chunk 3/3\nsecond\n#sim echo');
    expect(r.events.filter((e) => e.type === 'started')).toHaveLength(1);
  });

  it('follow_up waits for the turn to end, then is prompted', async () => {
    // Long enough that the follow-ups surely arrive while the first turn runs.
    const r = fixture.start(agent, '#sim chunks=3 sleep=1500ms', { shared });
    await r.until((e) => e.type === 'output', 'first output');
    await r.handle.steer('then this\n#sim echo', 'follow_up');
    await r.handle.steer('and this', 'follow_up');
    expect(await r.ended).toMatchObject({ status: 'completed' });
    expect(r.output()).toBe(
      `sim: chunk 1/3\nsim: chunk 2/3\nsim: chunk 3/3\nthen this\n#sim echo${DEFAULT_ANSWER}`,
    );
  });

  it('sends an interrupt before queued follow-ups', async () => {
    const r = fixture.start(agent, '#sim hang', { shared });
    await r.until((e) => e.type === 'output', 'first output');
    await r.handle.steer('later\n#sim echo', 'follow_up');
    await r.handle.steer('now\n#sim echo', 'interrupt');
    await r.ended;
    expect(r.output()).toBe(`${DEFAULT_ANSWER}now\n#sim echolater\n#sim echo`);
  });

  it('refuses to steer a run that has ended', async () => {
    const r = fixture.start(agent, 'quick', { shared });
    await r.ended;
    await expect(r.handle.steer('too late', 'interrupt')).rejects.toSatisfy(
      (e: unknown) => e instanceof CrewError && e.code === 'not_running',
    );
  });
});
