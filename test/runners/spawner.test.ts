import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { realClock } from '../../src/clock/real-clock.js';
import type { AgentDef } from '../../src/core/agent-def.js';
import { CommandRunner } from '../../src/runners/command-runner.js';
import { isAlive } from '../../src/runners/process-group.js';
import { ProcessGroupContainment } from '../../src/runners/process-group-cell.js';
import type { RunnerEvent } from '../../src/runners/runner.js';
import { Spawner } from '../../src/runners/spawner.js';

/**
 * Issue 32 §4: the daemon starts command runs from a small helper process instead of forking itself. A run
 * started that way is the same run: its process is started (by the helper, not by this process), its
 * environment is what the agent config says, its output streams back, it is contained and killed, and
 * the helper itself ends at `close()`.
 */

const containment = new ProcessGroupContainment('test: spawner');

function agent(command: string[], env?: Record<string, string>): AgentDef {
  return { name: 'spawned', runner: 'command', command, shared: false, skills: [], ...(env ? { env } : {}) };
}

function ppidOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

let seq = 0;
function start(
  runner: CommandRunner,
  def: AgentDef,
  onEvent: (event: RunnerEvent) => void = () => {},
): { ended: Promise<Extract<RunnerEvent, { type: 'ended' }>>; events: RunnerEvent[]; stop: () => void } {
  const events: RunnerEvent[] = [];
  let stop = (): void => {};
  const ended = new Promise<Extract<RunnerEvent, { type: 'ended' }>>((resolve) => {
    seq += 1;
    const handle = runner.start(
      {
        runId: `spawner-${process.pid}-${seq}`,
        agent: def,
        prompt: 'the task',
        cwd: process.cwd(),
        mcpServers: [],
        keep: false,
        shared: false,
      },
      (event) => {
        events.push(event);
        onEvent(event);
        if (event.type === 'ended') resolve(event);
      },
    );
    stop = () => handle.stop('cancel');
  });
  return { ended, events, stop };
}

const output = (events: RunnerEvent[]) => events.map((e) => (e.type === 'output' ? e.text : '')).join('');

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type HelperKind = 'native' | 'node';

async function world(helper: HelperKind): Promise<{ spawner: Spawner; runner: CommandRunner }> {
  const spawner = new Spawner({ helper });
  // The native helper is built (once per machine, cached) before its first run; this host has a compiler.
  if (helper === 'native') expect(await spawner.prepare()).toBe(true);
  const runner = new CommandRunner({ clock: realClock, killGraceMs: 300, containment, spawner });
  cleanups.push(
    () => spawner.close(),
    () => runner.close(),
  );
  return { spawner, runner };
}

describe.each(['native', 'node'] as const)('the spawner (%s helper)', (helper) => {
  it("starts a run's process from the helper, with the agent's env, and streams its output", async () => {
    const { spawner, runner } = await world(helper);
    let parent: number | undefined;
    const run = start(
      runner,
      agent(['sh', '-c', 'echo "token=$CREW_SPAWNER_TEST home=$HOME task=$0"; sleep 0.3', '{task}'], {
        CREW_SPAWNER_TEST: 'from-the-config',
      }),
      (event) => {
        if (event.type === 'started') parent = ppidOf(event.pid as number);
      },
    );
    const ended = await run.ended;
    expect(ended.status).toBe('completed');
    // Started by the helper, not forked from this process.
    expect(spawner.pid).toBeDefined();
    expect(parent).toBe(spawner.pid);
    expect(parent).not.toBe(process.pid);
    expect(spawner.helperKind).toBe(helper);
    expect(output(run.events)).toBe(`token=from-the-config home=${process.env.HOME} task=the task\n`);
  });

  it('a changed agent config is a new environment; an agent without env gets the daemon’s', async () => {
    const { runner } = await world(helper);
    const script = ['sh', '-c', 'echo "$CREW_SPAWNER_TEST" | grep . || echo unset'];
    const a = start(runner, agent(script, { CREW_SPAWNER_TEST: 'one' }));
    await a.ended;
    const b = start(runner, agent(script, { CREW_SPAWNER_TEST: 'two' }));
    await b.ended;
    const c = start(runner, agent(script));
    await c.ended;
    expect([output(a.events), output(b.events), output(c.events)]).toEqual(['one\n', 'two\n', 'unset\n']);
  });

  it('reports a failed exit with its code, and a missing executable as a failed spawn', async () => {
    const { runner } = await world(helper);
    const failed = await start(runner, agent(['sh', '-c', 'exit 3'])).ended;
    expect(failed).toMatchObject({ status: 'failed', exitCode: 3 });
    const missing = await start(runner, agent(['no-such-binary-h32'])).ended;
    expect(missing).toMatchObject({ status: 'failed', error: expect.stringMatching(/not found on PATH/) });
  });

  it('a stop kills the run and what it started; a stop before the helper answered is not lost', async () => {
    const { runner } = await world(helper);
    let child: number | undefined;
    const run = start(runner, agent(['sh', '-c', 'sleep 30 & echo $!; wait']), (event) => {
      if (event.type === 'output' && child === undefined) {
        child = Number(event.text.trim());
        run.stop();
      }
    });
    const ended = await run.ended;
    expect(ended.status).toBe('cancelled');
    const started = run.events.find((e) => e.type === 'started');
    expect(started?.type === 'started' && isAlive(started.pid as number)).toBe(false);
    expect(child !== undefined && isAlive(child)).toBe(false);

    // Stopped in the same turn it was started: the helper has not answered yet.
    const early = start(runner, agent(['sleep', '30']));
    early.stop();
    const earlyEnd = await early.ended;
    expect(earlyEnd.status).toBe('cancelled');
    const earlyStarted = early.events.find((e) => e.type === 'started');
    expect(earlyStarted?.type === 'started' && isAlive(earlyStarted.pid as number)).toBe(false);
  });

  it('ends the helper process at close(), and starts none before the first spawn', async () => {
    const spawner = new Spawner({ helper });
    await spawner.prepare();
    expect(spawner.pid).toBeUndefined();
    const runner = new CommandRunner({ clock: realClock, killGraceMs: 300, containment, spawner });
    await start(runner, agent(['true'])).ended;
    const pid = spawner.pid as number;
    expect(isAlive(pid)).toBe(true);
    await runner.close();
    await spawner.close();
    expect(isAlive(pid)).toBe(false);
    // A closed spawner refuses: the run fails rather than starting a new helper.
    const late = await start(runner, agent(['true'])).ended;
    expect(late.status).toBe('failed');
    expect(spawner.pid).toBeUndefined();
  });
});
