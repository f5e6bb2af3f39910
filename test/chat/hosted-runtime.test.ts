import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { realClock } from '../../src/clock/real-clock.js';
import { AcpRunner } from '../../src/runners/acp-runner.js';
import type { RunnerEvent } from '../../src/runners/runner.js';
import { isAlive, simAgent, waitUntil } from '../helpers/sim.js';
import { useRunner } from '../runners/runner-conformance.js';

type Started = Extract<RunnerEvent, { type: 'started' }>;
const isStarted = (e: RunnerEvent): e is Started => e.type === 'started';
const KEY = 'chat:test';
const LABEL = 'parent runtime of chat test (agent "sim")';

describe('ACP runner: a hosted runtime (a chat parent) takes eligible runs as sessions', () => {
  const fixture = useRunner(() => new AcpRunner({ clock: realClock, killGraceMs: 2000 }));
  const agent = simAgent();

  it('places a run with its runtimeKey in it; session/cancel stops the run, never the runtime', async () => {
    const runtime = await fixture.runner().openHosted(KEY, agent, tmpdir(), LABEL);
    const run = fixture.start(agent, '#sim hang', { runtimeKey: KEY });
    const started = (await run.until(isStarted, 'started')) as Started;
    expect(started).toMatchObject({ pid: runtime.pid, shared: true });
    await run.until((e) => e.type === 'output', 'output');
    run.handle.stop('cancel');
    expect(await run.ended).toEqual({ type: 'ended', status: 'cancelled', stop: 'cancelled' });
    expect(isAlive(runtime.pid)).toBe(true);
    const next = fixture.start(agent, 'again', { runtimeKey: KEY });
    expect(await next.ended).toMatchObject({ status: 'completed' });
    expect(next.events.find(isStarted)?.pid).toBe(runtime.pid);
  });

  it('runs a request with another command, keep, an effort, or a model in a dedicated process', async () => {
    const runtime = await fixture.runner().openHosted(KEY, agent, tmpdir(), LABEL);
    const runs = [
      fixture.start(simAgent({ args: ['--no-close'] }), 'x', { runtimeKey: KEY }),
      fixture.start(agent, 'x', { runtimeKey: KEY, keep: true }),
      fixture.start(agent, 'x', { runtimeKey: KEY, reasoningEffort: 'high' }),
      fixture.start(agent, 'x', { runtimeKey: KEY, model: 'sim-large' }),
    ];
    for (const r of runs) {
      const started = (await r.until(isStarted, 'started')) as Started;
      expect(started.shared).toBe(false);
      expect(started.pid).not.toBe(runtime.pid);
      await r.ended;
    }
    await fixture.runner().release(runs[1]!.request.runId);
  });

  it("fails the runtime's sessions with the reason when it dies; the key then names nothing", async () => {
    const runtime = await fixture.runner().openHosted(KEY, agent, tmpdir(), LABEL);
    const run = fixture.start(agent, '#sim hang', { runtimeKey: KEY });
    await run.until((e) => e.type === 'output', 'output');
    process.kill(runtime.pid, 'SIGKILL');
    const ended = await run.ended;
    expect(ended.status).toBe('failed');
    expect(ended.error).toBe(`${LABEL} (pid ${runtime.pid}) was killed by SIGKILL`);
    expect(ended.exitCode).toBeUndefined();
    const after = fixture.start(agent, 'x', { runtimeKey: KEY });
    expect(((await after.until(isStarted, 'started')) as Started).shared).toBe(false);
    await after.ended;
  });

  it('ends the runtime on closeHosted and on close', async () => {
    const runner = fixture.runner();
    const a = await runner.openHosted(KEY, agent, tmpdir(), LABEL);
    const b = await runner.openHosted('chat:other', agent, tmpdir(), LABEL);
    await runner.closeHosted(KEY);
    expect(isAlive(a.pid)).toBe(false);
    await runner.close();
    await waitUntil(() => !isAlive(b.pid), 5000, 'the other hosted runtime gone');
    await expect(runner.openHosted(KEY, agent, tmpdir(), LABEL)).rejects.toThrow(/closed/);
  });

  it('rejects with the reason when the agent cannot start', async () => {
    const broken = simAgent({ args: ['--protocol', '999'] });
    await expect(fixture.runner().openHosted(KEY, broken, tmpdir(), LABEL)).rejects.toThrow(
      /speaks ACP protocol version 999/,
    );
  });
});
