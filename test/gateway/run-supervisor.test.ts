import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/clock/fake-clock.js';
import type { AgentDef } from '../../src/core/agent-def.js';
import type { SchedulerEvent } from '../../src/core/scheduler-types.js';
import { RunSupervisor } from '../../src/gateway/run-supervisor.js';
import { FakeRunner } from '../../src/runners/fake-runner.js';
import type { Runner, RunRequest } from '../../src/runners/runner.js';
import type { RunInfoUpdate } from '../../src/store/store.js';
import { MemoryTranscripts } from '../../src/transcripts/memory-transcripts.js';

const agent: AgentDef = { name: 'sim', runner: 'acp', command: ['x'], shared: false, skills: [] };
const request = (runId: string): RunRequest => ({
  runId,
  agent,
  prompt: `task ${runId}`,
  cwd: '/tmp',
  mcpServers: [],
  keep: false,
  shared: false,
});

function rig(runner: Runner) {
  const steps: { event: SchedulerEvent; runInfo?: RunInfoUpdate[] }[] = [];
  const logs: string[] = [];
  const transcripts = new MemoryTranscripts();
  const supervisor = new RunSupervisor({
    step: (event, facts) => steps.push({ event, ...(facts?.runInfo ? { runInfo: facts.runInfo } : {}) }),
    runnerFor: () => runner,
    transcripts,
    log: (line) => logs.push(line),
  });
  return { steps, logs, transcripts, supervisor };
}

describe('the run supervisor turns runner events into scheduler events and decides nothing', () => {
  it('forwards started, each tool call and the end with the facts of its transaction; output goes to the transcript', async () => {
    const clock = new FakeClock();
    const runner = new FakeRunner({
      clock,
      plan: () => ({ toolCalls: 2, output: ['hello'], durationMs: 10 }),
    });
    const r = rig(runner);
    r.supervisor.launch(agent, request('a'));
    await clock.advance(10);
    await r.supervisor.idle();
    expect(r.steps.map((s) => s.event.type)).toEqual(['started', 'tool_call', 'tool_call', 'ended']);
    const end = r.steps.at(-1);
    expect(end?.event).toEqual({ type: 'ended', runId: 'a', status: 'completed' });
    expect(end?.runInfo).toEqual([{ id: 'a', resultPath: 'memory://a/result.txt', resultChars: 5 }]);
    expect(r.transcripts.text('a')).toBe('hello');
    expect(r.supervisor.live()).toEqual([]);
  });

  it("records a failure's error_kind and the agent's last usage with the end", async () => {
    const clock = new FakeClock();
    const runner = new FakeRunner({
      clock,
      plan: () => ({
        usage: { used: 1500, size: 200000, costUsd: 0.02 },
        fail: 'session/prompt failed: rate limited (code -32603)',
        errorKind: 'provider_rate_limited',
        durationMs: 10,
      }),
    });
    const r = rig(runner);
    r.supervisor.launch(agent, request('a'));
    await clock.advance(10);
    await r.supervisor.idle();
    const end = r.steps.at(-1);
    expect(end?.event).toMatchObject({
      type: 'ended',
      status: 'failed',
      error: expect.stringMatching(/rate limited/),
    });
    expect(end?.runInfo?.[0]).toMatchObject({
      errorKind: 'provider_rate_limited',
      usageTokens: 1500,
      usageContextTokens: 200000,
      usageCostUsd: 0.02,
    });
  });

  it('records ends in the order the runner reported them, though each waits for its transcript to flush', async () => {
    const clock = new FakeClock();
    const runner = new FakeRunner({ clock, plan: (req) => ({ durationMs: req.runId === 'slow' ? 20 : 5 }) });
    const r = rig(runner);
    // A transcript whose close takes longer for the first run to end: its record must still come first.
    const delays: Record<string, number> = { fast: 3, slow: 0 };
    const open = r.transcripts.open.bind(r.transcripts);
    r.transcripts.open = (runId) => {
      const writer = open(runId);
      return {
        write: writer.write,
        close: async () => {
          for (let i = 0; i < (delays[runId] ?? 0); i++) await Promise.resolve();
          return writer.close();
        },
      };
    };
    r.supervisor.launch(agent, request('slow'));
    r.supervisor.launch(agent, request('fast'));
    await clock.advance(20);
    await r.supervisor.idle();
    const ends = r.steps
      .filter((s) => s.event.type === 'ended')
      .map((s) => (s.event as { runId: string }).runId);
    expect(ends).toEqual(['fast', 'slow']);
  });

  it('a runner that throws at start ends the run failed with the reason; a failed launch is stepped after the current step', async () => {
    const throwing: Runner = {
      start: () => {
        throw new Error('no such binary');
      },
      release: async () => undefined,
      close: async () => undefined,
    };
    const r = rig(throwing);
    r.supervisor.launch(agent, request('a'));
    r.supervisor.failLaunch('b', 'agent gone is no longer configured');
    // Nothing is stepped synchronously, inside the step that launched.
    expect(r.steps).toEqual([]);
    await r.supervisor.idle();
    expect(r.steps.map((s) => s.event)).toEqual([
      { type: 'ended', runId: 'a', status: 'failed', error: 'could not start: no such binary' },
      { type: 'start_failed', runId: 'b', error: 'agent gone is no longer configured' },
    ]);
  });

  it('a failing step is logged and never breaks the chain of later ends', async () => {
    const clock = new FakeClock();
    const runner = new FakeRunner({ clock, plan: () => ({ durationMs: 1 }) });
    const logs: string[] = [];
    const seen: string[] = [];
    const supervisor = new RunSupervisor({
      step: (event) => {
        if (event.type !== 'ended') return;
        seen.push(event.runId);
        if (event.runId === 'a') throw new Error('database or disk is full');
      },
      runnerFor: () => runner,
      transcripts: new MemoryTranscripts(),
      log: (line) => logs.push(line),
    });
    supervisor.launch(agent, request('a'));
    supervisor.launch(agent, request('b'));
    await clock.advance(1);
    await supervisor.idle();
    expect(seen).toEqual(['a', 'b']);
    expect(logs).toEqual(['crew: ending run a failed: database or disk is full']);
  });

  it('stop and steer reach the live run; idle() waits for a stopped run to end', async () => {
    const clock = new FakeClock();
    const runner = new FakeRunner({ clock, plan: () => ({ hang: true }) });
    const r = rig(runner);
    r.supervisor.launch(agent, request('a'));
    await Promise.resolve();
    r.supervisor.steer('a', 'focus', 'follow_up');
    await Promise.resolve();
    expect(runner.steered).toEqual([{ runId: 'a', message: 'focus', mode: 'follow_up' }]);
    let idle = false;
    const waiting = r.supervisor.idle().then(() => {
      idle = true;
    });
    await Promise.resolve();
    expect(idle).toBe(false);
    r.supervisor.stop('a', 'turn_limit');
    await waiting;
    expect(r.steps.at(-1)?.event).toEqual({
      type: 'ended',
      runId: 'a',
      status: 'cancelled',
      stop: 'turn_limit',
    });
  });
});
