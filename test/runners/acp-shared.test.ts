import { describe, expect, it } from 'vitest';
import { realClock } from '../../src/clock/real-clock.js';
import { AcpRunner } from '../../src/runners/acp-runner.js';
import type { RunnerEvent } from '../../src/runners/runner.js';
import { DEFAULT_ANSWER } from '../../src/sim/answer.js';
import { isAlive, simAgent, waitUntil } from '../helpers/sim.js';
import { useRunner } from './runner-conformance.js';

type Started = Extract<RunnerEvent, { type: 'started' }>;
const isStarted = (e: RunnerEvent): e is Started => e.type === 'started';

describe('ACP runner: shared runtime', () => {
  const fixture = useRunner(() => new AcpRunner({ clock: realClock, killGraceMs: 2000 }));
  const agent = simAgent({ shared: true });

  it('hosts 20 sessions in one process at once; cancelling one stops only that one', async () => {
    const runs = Array.from({ length: 20 }, () => fixture.start(agent, '#sim hang', { shared: true }));
    const started = (await Promise.all(runs.map((r) => r.until(isStarted, 'started')))) as Started[];
    expect(new Set(started.map((s) => s.pid)).size).toBe(1);
    expect(started.every((s) => s.shared)).toBe(true);
    await Promise.all(runs.map((r) => r.until((e) => e.type === 'output', 'first output')));
    const [cancelled] = runs.splice(7, 1);
    cancelled!.handle.stop('cancel');
    expect(await cancelled!.ended).toEqual({ type: 'ended', status: 'cancelled', stop: 'cancelled' });
    expect(runs.filter((r) => r.ends().length > 0)).toHaveLength(0);
    // The other 19 are still mid-turn: steer each to a normal end.
    await Promise.all(runs.map((r) => r.handle.steer('finish', 'interrupt')));
    const ends = await Promise.all(runs.map((r) => r.ended));
    expect(ends.map((e) => e.status)).toEqual(runs.map(() => 'completed'));
    expect(runs.map((r) => r.output())).toEqual(runs.map(() => `${DEFAULT_ANSWER}${DEFAULT_ANSWER}`));
    expect(isAlive(started[0]!.pid!)).toBe(true);
  });

  it('fails the live runs of a runtime that dies, with the reason; the next start gets a fresh runtime', async () => {
    const runs = [
      fixture.start(agent, '#sim hang', { shared: true }),
      fixture.start(agent, '#sim hang', { shared: true }),
    ];
    const [first] = (await Promise.all(runs.map((r) => r.until(isStarted, 'started')))) as Started[];
    const pid = first!.pid!;
    process.kill(pid, 'SIGKILL');
    for (const r of runs) {
      const ended = await r.ended;
      expect(ended.status).toBe('failed');
      expect(ended.error).toMatch(
        new RegExp(`shared runtime of agent "sim" \\(pid ${pid}\\) was killed by SIGKILL`),
      );
    }
    const next = fixture.start(agent, 'after the crash', { shared: true });
    expect(await next.ended).toMatchObject({ status: 'completed' });
    const restarted = next.events.find(isStarted);
    expect(restarted?.pid).not.toBe(pid);
    await waitUntil(() => !isAlive(pid), 5000, 'the killed runtime gone');
  });

  it('fails every live session when one turn crashes the runtime, with its exit code', async () => {
    const bystander = fixture.start(agent, '#sim hang', { shared: true });
    await bystander.until(isStarted, 'started');
    const crasher = fixture.start(agent, '#sim fail=crash chunks=2 sleep=100ms', { shared: true });
    for (const r of [crasher, bystander]) {
      const ended = await r.ended;
      expect(ended.status).toBe('failed');
      expect(ended.error).toMatch(/exited with code 134; stderr: sim: exiting with code 134/);
    }
  });

  it('keeps the runtime between runs and stops sessions with session/cancel, never by killing it', async () => {
    const a = fixture.start(agent, '#sim hang', { shared: true });
    const startedA = (await a.until(isStarted, 'started')) as Started;
    a.handle.stop('timeout');
    expect(await a.ended).toMatchObject({ status: 'cancelled', stop: 'cancelled' });
    const b = fixture.start(agent, 'next', { shared: true });
    expect(await b.ended).toMatchObject({ status: 'completed' });
    expect(b.events.find(isStarted)?.pid).toBe(startedA.pid);
  });

  it('runs a shared agent in a dedicated process when the gateway did not allow sharing, or a model is set', async () => {
    const plain = fixture.start(agent, 'x', { shared: false });
    const withModel = fixture.start(agent, 'x', { shared: true, model: 'm' });
    const kept = fixture.start(agent, 'x', { shared: true, keep: true });
    for (const r of [plain, withModel, kept]) {
      expect(((await r.until(isStarted, 'started')) as Started).shared).toBe(false);
      await r.ended;
    }
  });

  it('ends a shared run whose agent ignores session/cancel once the kill grace runs out', async () => {
    const r = fixture.start(agent, '#sim hang', { shared: true });
    await r.until((e) => e.type === 'output', 'output');
    const pid = ((await r.until(isStarted, 'started')) as Started).pid!;
    // The simulator honours session/cancel; a frozen one plays an agent that does not.
    process.kill(pid, 'SIGSTOP');
    try {
      const before = Date.now();
      r.handle.stop('cancel');
      expect(await r.ended).toEqual({ type: 'ended', status: 'cancelled', stop: 'cancelled' });
      expect(Date.now() - before).toBeGreaterThanOrEqual(1900);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
  });
});
