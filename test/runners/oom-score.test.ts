import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { realClock } from '../../src/clock/real-clock.js';
import { AcpRunner } from '../../src/runners/acp-runner.js';
import { CommandRunner } from '../../src/runners/command-runner.js';
import { raiseOomScoreAdj } from '../../src/runners/oom-score.js';
import type { RunnerEvent } from '../../src/runners/runner.js';
import { grandchildPids, simAgent, simCommand } from '../helpers/sim.js';
import { useRunner } from './runner-conformance.js';

/**
 * `host.oom_score_adj`: every process Crew starts for a run, and what that process starts afterwards, is
 * the kernel's first choice when the host runs out of memory; a hosted chat's parent is not. Read back from
 * `/proc/<pid>/oom_score_adj` of real processes (Linux, as the machines Crew is tested on).
 */

type Started = Extract<RunnerEvent, { type: 'started' }>;
const isStarted = (e: RunnerEvent): e is Started => e.type === 'started';
const adjOf = (pid: number) => Number(readFileSync(`/proc/${pid}/oom_score_adj`, 'utf8').trim());
/** What this test process has, so what Crew leaves alone inherits it. */
const OWN = adjOf(process.pid);
const RAISED = 700;

describe('raiseOomScoreAdj', () => {
  it('raises a live process, never lowers it, and says nothing of a process that is gone', async () => {
    expect(OWN).toBeLessThan(RAISED);
    const sleeper = spawn('sleep', ['30'], { stdio: 'ignore' });
    const pid = sleeper.pid as number;
    try {
      expect(adjOf(pid)).toBe(OWN);
      expect(raiseOomScoreAdj(pid, RAISED)).toBe(RAISED);
      expect(adjOf(pid)).toBe(RAISED);
      // Lower asks leave it where it is.
      expect(raiseOomScoreAdj(pid, 100)).toBe(RAISED);
      expect(adjOf(pid)).toBe(RAISED);
    } finally {
      sleeper.kill('SIGKILL');
      await new Promise((resolve) => sleeper.once('exit', resolve));
    }
    expect(raiseOomScoreAdj(pid, RAISED)).toBeUndefined();
  });
});

describe('the ACP runner raises its runs’ processes, not a hosted parent', () => {
  const fixture = useRunner(
    () => new AcpRunner({ clock: realClock, killGraceMs: 1000, requestTimeoutMs: 5000, oomScoreAdj: RAISED }),
  );

  it('a dedicated runtime and the child it starts afterwards carry the raised score', async () => {
    const run = fixture.start(simAgent(), '#sim child=sleep hang');
    const started = (await run.until(isStarted, 'started')) as Started;
    const withChild = await run.until((e) => e.type === 'output' && /child: pid=/.test(e.text), 'child');
    const [grandchild] = grandchildPids(withChild.type === 'output' ? withChild.text : '');
    expect(adjOf(started.pid!)).toBe(RAISED);
    expect(adjOf(grandchild!)).toBe(RAISED);
    run.handle.stop('cancel');
    await run.ended;
  });

  it('a shared runtime carries it too; a hosted chat parent keeps what Crew has', async () => {
    const shared = fixture.start(simAgent({ shared: true }), '#sim hang', { shared: true });
    const sharedPid = ((await shared.until(isStarted, 'started')) as Started).pid!;
    expect(adjOf(sharedPid)).toBe(RAISED);
    const parent = await fixture.runner().openHosted('chat:oom', simAgent(), tmpdir(), 'parent of chat oom');
    expect(adjOf(parent.pid)).toBe(OWN);
    shared.handle.stop('cancel');
    await shared.ended;
  });
});

describe('the command runner raises its runs’ processes', () => {
  const fixture = useRunner(
    () => new CommandRunner({ clock: realClock, killGraceMs: 1000, oomScoreAdj: RAISED }),
  );

  it('the command’s process carries the raised score', async () => {
    const agent = {
      name: 'sim-once',
      runner: 'command' as const,
      command: [...simCommand(), '--once', '{task}'],
      shared: false,
      skills: [],
    };
    const run = fixture.start(agent, '#sim hang');
    const started = (await run.until(isStarted, 'started')) as Started;
    expect(adjOf(started.pid!)).toBe(RAISED);
    run.handle.stop('cancel');
    await run.ended;
  });
});

describe('left as inherited by default', () => {
  const fixture = useRunner(() => new AcpRunner({ clock: realClock, killGraceMs: 1000 }));

  it('a runner given no oomScoreAdj leaves its runs’ processes as they inherit', async () => {
    const run = fixture.start(simAgent(), '#sim hang');
    const started = (await run.until(isStarted, 'started')) as Started;
    expect(adjOf(started.pid!)).toBe(OWN);
    run.handle.stop('cancel');
    await run.ended;
  });
});
