import { describe, expect, it } from 'vitest';
import { realClock } from '../../src/clock/real-clock.js';
import type { Clock, TimerHandle } from '../../src/core/clock.js';
import { AcpRunner } from '../../src/runners/acp-runner.js';
import { readStartTime } from '../../src/runners/process-group.js';
import type { RunnerEvent } from '../../src/runners/runner.js';
import { SIM_CONTEXT_TOKENS } from '../../src/sim/turn.js';
import { grandchildPids, isAlive, simAgent, waitUntil } from '../helpers/sim.js';
import { useRunner } from './runner-conformance.js';

type Started = Extract<RunnerEvent, { type: 'started' }>;

/** A leader that ignores SIGTERM: it runs its arguments as a child on its own stdio and stays after it. */
const IGNORES_SIGTERM = [
  "process.on('SIGTERM', () => {});",
  'const [command, ...args] = process.argv.slice(1);',
  "require('node:child_process').spawn(command, args, { stdio: 'inherit' });",
  'setInterval(() => {}, 60_000);',
].join(' ');
const isStarted = (e: RunnerEvent): e is Started => e.type === 'started';

describe('ACP runner: dedicated runtimes', () => {
  const fixture = useRunner(
    () => new AcpRunner({ clock: realClock, killGraceMs: 1000, requestTimeoutMs: 3000 }),
  );
  const agent = simAgent();

  it('reports the process pid and its start time in `started`, and ends only once the process is gone', async () => {
    const r = fixture.start(agent, '#sim sleep=200ms');
    const started = (await r.until(isStarted, 'started')) as Started;
    expect(started.shared).toBe(false);
    expect(started.pid).toEqual(expect.any(Number));
    expect(started.startTime).toBe(readStartTime(started.pid!));
    await r.ended;
    expect(isAlive(started.pid!)).toBe(false);
  });

  it('kills the whole process group of a hanging agent on stop(timeout), grandchild included', async () => {
    const r = fixture.start(agent, '#sim child=sleep hang');
    const withChild = await r.until((e) => e.type === 'output' && /child: pid=/.test(e.text), 'grandchild');
    const [grandchild] = grandchildPids(withChild.type === 'output' ? withChild.text : '');
    const pid = ((await r.until(isStarted, 'started')) as Started).pid!;
    expect(isAlive(grandchild!)).toBe(true);
    r.handle.stop('timeout');
    expect(await r.ended).toEqual({ type: 'ended', status: 'cancelled', stop: 'cancelled' });
    // Checked at once: `ended` comes only after the group is gone.
    expect(isAlive(pid)).toBe(false);
    expect(isAlive(grandchild!)).toBe(false);
  });

  it('kills with SIGKILL after the grace an agent that ignores SIGTERM', async () => {
    // The agent's leader ignores SIGTERM and outlives the simulator it runs (a stopped leader no longer
    // serves: the stop continues a paused run, the memory pause's, so it can act on SIGTERM).
    const stubborn = { ...agent, command: [process.execPath, '-e', IGNORES_SIGTERM, ...agent.command] };
    const r = fixture.start(stubborn, '#sim hang');
    const pid = ((await r.until(isStarted, 'started')) as Started).pid!;
    const before = Date.now();
    r.handle.stop('cancel');
    expect(await r.ended).toMatchObject({ status: 'cancelled' });
    expect(Date.now() - before).toBeGreaterThanOrEqual(950);
    expect(isAlive(pid)).toBe(false);
  });

  it('notes a turn-limit stop', async () => {
    const r = fixture.start(agent, '#sim hang tools=1');
    await r.until((e) => e.type === 'output', 'output');
    r.handle.stop('turn_limit');
    expect(await r.ended).toEqual({ type: 'ended', status: 'cancelled', stop: 'turn_limit' });
  });

  it('stops a run that is still starting', async () => {
    const r = fixture.start(agent, 'never prompted');
    r.handle.stop('cancel');
    expect(await r.ended).toMatchObject({ status: 'cancelled' });
    expect(r.events.map((e) => e.type)).toEqual(['ended']);
  });

  it('streams tool calls and usage, and loses no output at the end of a turn', async () => {
    const r = fixture.start(agent, '#sim tools=3 bytes=200000 chunks=1000');
    expect(await r.ended).toMatchObject({ status: 'completed' });
    // Each tool call and update is one line of its own in the transcript, beside the agent's text.
    const toolLines = r.output().match(/^\[tool_call(_update)?\] .*$/gm) ?? [];
    expect(toolLines.filter((l) => l.startsWith('[tool_call] '))).toEqual([
      expect.stringMatching(/^\[tool_call\] sim tool 1( \(.*\))?$/),
      expect.stringMatching(/^\[tool_call\] sim tool 2( \(.*\))?$/),
      expect.stringMatching(/^\[tool_call\] sim tool 3( \(.*\))?$/),
    ]);
    expect(r.output().replace(/\n?\[tool_call(_update)?\] .*\n/g, '')).toHaveLength(200_000);
    expect(r.events.filter((e) => e.type === 'tool_call')).toEqual([
      { type: 'tool_call', toolCallId: 'sim-tool-1-1', title: 'sim tool 1' },
      { type: 'tool_call', toolCallId: 'sim-tool-1-2', title: 'sim tool 2' },
      { type: 'tool_call', toolCallId: 'sim-tool-1-3', title: 'sim tool 3' },
    ]);
    expect(r.events.find((e) => e.type === 'usage')).toMatchObject({ size: SIM_CONTEXT_TOKENS });
  });

  it('fails on refusal, noting it', async () => {
    const r = fixture.start(agent, '#sim fail=refusal');
    expect(await r.ended).toMatchObject({ status: 'failed', stop: 'refusal', error: expect.any(String) });
  });

  it('fails with the agent’s error when the prompt request fails', async () => {
    const r = fixture.start(agent, '#sim fail=error');
    expect((await r.ended).error).toBe(
      'session/prompt failed: sim: simulated error (#sim fail=error) (code -32603)',
    );
  });

  it('fails with the exit code when the agent exits mid-turn', async () => {
    const r = fixture.start(agent, '#sim exit=3');
    const ended = await r.ended;
    expect(ended).toMatchObject({ status: 'failed', exitCode: 3 });
    expect(ended.error).toMatch(
      /^agent "sim" \(pid \d+\) exited with code 3; stderr: sim: exiting with code 3$/,
    );
  });

  it('fails when the command cannot be started', async () => {
    const r = fixture.start({ ...agent, command: ['/nonexistent/agent-cli', 'acp'] }, 'hello');
    const ended = await r.ended;
    expect(ended.status).toBe('failed');
    expect(ended.error).toMatch(/cannot start "\/nonexistent\/agent-cli"/);
  });

  it('fails when the agent exits before answering initialize', async () => {
    const r = fixture.start({ ...agent, command: ['true'] }, 'hello');
    expect((await r.ended).error).toMatch(/agent "sim" \(pid \d+\) exited with code 0/);
  });

  it('fails, and ends the process, when the agent never answers initialize', async () => {
    const r = fixture.start({ ...agent, command: ['sleep', '60'] }, 'hello');
    const ended = await r.ended;
    expect(ended.error).toBe('initialize: agent "sim" did not answer within 3000 ms');
  });

  it('fails when the agent speaks another protocol version', async () => {
    const r = fixture.start(simAgent({ args: ['--protocol', '2'] }), 'hello');
    expect((await r.ended).error).toBe('agent "sim" speaks ACP protocol version 2; Crew speaks 1');
  });

  it('fails with the reason when the agent requires authentication', async () => {
    const r = fixture.start(simAgent({ args: ['--auth-required'] }), 'hello');
    expect((await r.ended).error).toBe(
      'agent "sim" requires authentication (Authentication required: sim: not logged in); log in with the agent\'s own CLI first',
    );
  });

  it('refuses to start once closed', async () => {
    await fixture.runner().close();
    const r = fixture.start(agent, 'late');
    expect(await r.ended).toEqual({ type: 'ended', status: 'failed', error: 'the ACP runner is closed' });
  });
});

/** The real clock, counting the timers set through it that have neither fired nor been cleared. */
function countingClock(): { clock: Clock; pending: () => number } {
  const live = new Set<TimerHandle>();
  const clock: Clock = {
    now: () => realClock.now(),
    setTimer(fn, delayMs) {
      const handle = realClock.setTimer(() => {
        live.delete(handle);
        fn();
      }, delayMs);
      live.add(handle);
      return handle;
    },
    clearTimer(handle) {
      live.delete(handle);
      realClock.clearTimer(handle);
    },
  };
  return { clock, pending: () => live.size };
}

describe('ACP runner: timers', () => {
  const counting = countingClock();
  const fixture = useRunner(() => new AcpRunner({ clock: counting.clock, killGraceMs: 5000 }));

  it('leaves no timer once a run ended and its process exited, so a closed daemon exits at once', async () => {
    const r = fixture.start(simAgent(), '#sim echo done');
    const pid = ((await r.until(isStarted, 'started')) as Started).pid!;
    expect(await r.ended).toMatchObject({ status: 'completed' });
    await fixture.runner().close();
    await waitUntil(() => !isAlive(pid), 5000, 'the agent to exit');
    // The agent's stdout ends just before its exit is seen: the "closed its stdout but lives on" timer
    // must go with the exit, or it holds the event loop for the kill grace.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(counting.pending()).toBe(0);
  });
});
