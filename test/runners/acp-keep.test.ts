import { describe, expect, it } from 'vitest';
import { realClock } from '../../src/clock/real-clock.js';
import { AcpRunner } from '../../src/runners/acp-runner.js';
import type { RunnerEvent } from '../../src/runners/runner.js';
import { infoOf, isAlive, simAgent } from '../helpers/sim.js';
import { useRunner } from './runner-conformance.js';

type Started = Extract<RunnerEvent, { type: 'started' }>;
const isStarted = (e: RunnerEvent): e is Started => e.type === 'started';

describe('ACP runner: kept conversations', () => {
  const fixture = useRunner(() => new AcpRunner({ clock: realClock, killGraceMs: 2000 }));

  it.each([
    ['with session/close', []],
    ['without session/close', ['--no-close']],
  ])('keeps the session after the turn, continues it, and releases it (%s)', async (_, args) => {
    const agent = simAgent({ args });
    const first = fixture.start(agent, '#sim info', { keep: true });
    const conversationId = first.request.runId;
    expect(await first.ended).toMatchObject({ status: 'completed' });
    const pid = ((await first.until(isStarted, 'started')) as Started).pid!;
    expect(isAlive(pid)).toBe(true);
    const firstInfo = infoOf(first.output());

    const second = fixture.start(agent, '#sim info', { continueFrom: conversationId });
    expect(await second.ended).toMatchObject({ status: 'completed' });
    expect(((await second.until(isStarted, 'started')) as Started).pid).toBe(pid);
    expect(infoOf(second.output()).sessionId).toBe(firstInfo.sessionId);

    await fixture.runner().release(conversationId);
    expect(isAlive(pid)).toBe(false);
    const third = fixture.start(agent, 'again', { continueFrom: conversationId });
    expect(await third.ended).toEqual({
      type: 'ended',
      status: 'failed',
      error: `conversation ${conversationId} is not open: it was released, expired or never kept`,
    });
  });

  it('refuses to continue a conversation that is busy', async () => {
    const agent = simAgent();
    const first = fixture.start(agent, '#sim hang', { keep: true, runId: 'conv-busy' });
    await first.until((e) => e.type === 'output', 'output');
    const second = fixture.start(agent, 'me too', { continueFrom: 'conv-busy' });
    expect((await second.ended).error).toBe('conversation conv-busy is busy with run conv-busy');
    first.handle.stop('cancel');
    await first.ended;
  });

  it('release stops a run that is using the conversation', async () => {
    const agent = simAgent();
    const first = fixture.start(agent, '#sim hang', { keep: true, runId: 'conv-release-busy' });
    const pid = ((await first.until(isStarted, 'started')) as Started).pid!;
    await fixture.runner().release('conv-release-busy');
    expect(await first.ended).toMatchObject({ status: 'cancelled' });
    expect(isAlive(pid)).toBe(false);
  });

  it('applies a new model when continuing, through the config option', async () => {
    const agent = simAgent({ args: ['--config-options'] });
    const first = fixture.start(agent, 'hello', { keep: true, runId: 'conv-model' });
    await first.ended;
    const second = fixture.start(agent, '#sim info', { continueFrom: 'conv-model', model: 'sim-small' });
    await second.ended;
    expect(infoOf(second.output()).model).toBe('sim-small');
  });

  it('ends kept processes on close()', async () => {
    const first = fixture.start(simAgent(), 'keep me', { keep: true });
    await first.ended;
    const pid = ((await first.until(isStarted, 'started')) as Started).pid!;
    await fixture.runner().close();
    expect(isAlive(pid)).toBe(false);
  });
});
