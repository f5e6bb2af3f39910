/**
 * The memory pause with real processes (issue 28, item 7): a command agent that grows in steps is stopped
 * (SIGSTOP: state T in /proc/<pid>/stat) when a configured limit is near, resumed when the run ahead of it
 * ends, and completes; a paused run that is cancelled ends with nothing left behind.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { realClock } from '../../src/clock/real-clock.js';
import type { AgentDef } from '../../src/core/agent-def.js';
import { BYTES_PER_GIB } from '../../src/core/cap.js';
import { ProcessTreeSampler } from '../../src/host/sampler.js';
import { CommandRunner } from '../../src/runners/command-runner.js';
import { MemoryPauser } from '../../src/runners/memory-pauser.js';
import { PausableCells } from '../../src/runners/pausable-cells.js';
import { isAlive } from '../../src/runners/process-group.js';
import type { RunnerEvent } from '../../src/runners/runner.js';
import { procState } from '../helpers/sim.js';

type Ended = Extract<RunnerEvent, { type: 'ended' }>;

/** Grows by 16 MiB of touched memory every 100 ms to 160 MiB, then says so and exits. */
const GROWER = `
const held = [];
const step = () => {
  if (held.length === 10) { console.log('grown'); return; }
  held.push(Buffer.alloc(16 * 1024 * 1024, 1));
  setTimeout(step, 100);
};
step();
`;

/** The "host" the pause guards: this much for both runs together; it pauses under the margin. */
const LIMIT_GB = 200 / 1024;
const MARGIN_GB = 90 / 1024;

let runner: CommandRunner;
let sampler: ProcessTreeSampler;
let pauser: MemoryPauser;
/** Every /proc state the grower was seen in at a tick, and whether the pauser held it then. */
let seen: { state: string | undefined; paused: boolean }[];
let growerPid: number | undefined;
const pids: number[] = [];

function agent(name: string, command: string[]): AgentDef {
  return { name, runner: 'command', command, shared: false, skills: [] };
}

function start(runId: string, def: AgentDef) {
  const events: RunnerEvent[] = [];
  let resolveEnded: (event: Ended) => void = () => {};
  const ended = new Promise<Ended>((resolve) => {
    resolveEnded = resolve;
  });
  const handle = runner.start(
    { runId, agent: def, prompt: 'grow', cwd: process.cwd(), mcpServers: [], keep: false, shared: false },
    (event) => {
      events.push(event);
      if (event.type === 'started' && event.pid !== undefined) {
        pids.push(event.pid);
        if (def.name === 'grower') growerPid = event.pid;
        sampler.track(runId, event.pid, event.startTime);
      }
      if (event.type === 'ended') {
        sampler.untrack(runId);
        resolveEnded(event);
      }
    },
  );
  return { handle, events, ended };
}

async function until(check: () => boolean, timeoutMs: number): Promise<void> {
  const since = Date.now();
  while (!check()) {
    if (Date.now() - since > timeoutMs) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

beforeEach(() => {
  seen = [];
  growerPid = undefined;
  const cells = new PausableCells();
  runner = new CommandRunner({ clock: realClock, killGraceMs: 500, pausable: cells });
  pauser = new MemoryPauser({ cells, marginGb: MARGIN_GB, fallbackGb: 0 });
  sampler = new ProcessTreeSampler({
    hostRoot: '/',
    clock: realClock,
    intervalMs: 100,
    onTick: (currentGb, settledGb) => {
      const used = Object.values(currentGb).reduce((a, b) => a + b, 0);
      pauser.tick({ availableGb: Math.max(0, LIMIT_GB - used), currentGb, settledGb, expectedGb: {} });
      if (growerPid !== undefined)
        seen.push({ state: procState(growerPid), paused: pauser.pausedRuns().length > 0 });
    },
  });
});

afterEach(async () => {
  await runner.close();
  await sampler.close();
  for (const pid of pids.splice(0)) expect(isAlive(pid), `pid ${pid} is left`).toBe(false);
});

describe('the memory pause, real processes', () => {
  it('stops a growing run near the limit, resumes it when the run ahead ends, and it completes', async () => {
    const ahead = start('ahead', agent('sleeper', ['sleep', '60']));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const grower = start('grower', agent('grower', [process.execPath, '-e', GROWER]));
    await until(() => pauser.isPaused('grower'), 10_000);
    // Stopped for real, while the run ahead is still going.
    await until(() => growerPid !== undefined && procState(growerPid) === 'T', 2000);
    expect(ahead.events.some((e) => e.type === 'ended')).toBe(false);
    const rssWhenPaused = sampler.peek('grower')?.peakMemGb ?? 0;
    expect(rssWhenPaused * BYTES_PER_GIB).toBeGreaterThan((LIMIT_GB - MARGIN_GB) * BYTES_PER_GIB * 0.5);
    await new Promise((resolve) => setTimeout(resolve, 500));
    // Held: it grew no further while stopped.
    expect(procState(growerPid as number)).toBe('T');
    // The run ahead ends (cancelled here, so the test does not hang on the load's timing): memory returns.
    ahead.handle.stop('cancel');
    expect(await ahead.ended).toMatchObject({ status: 'cancelled' });
    const done = await grower.ended;
    expect(done).toMatchObject({ status: 'completed' });
    expect(grower.events.map((e) => (e.type === 'output' ? e.text : '')).join('')).toContain('grown');
    expect(pauser.isPaused('grower')).toBe(false);
    // Seen stopped at some ticks and running at others: paused, then resumed.
    expect(seen.some((s) => s.state === 'T' && s.paused)).toBe(true);
    expect(seen.filter((s) => s.state !== undefined && s.state !== 'T').length).toBeGreaterThan(0);
  }, 30_000);

  it('cancelling a paused run ends it and leaves no process', async () => {
    const ahead = start('ahead', agent('sleeper', ['sleep', '30']));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const grower = start('grower', agent('grower', [process.execPath, '-e', GROWER]));
    await until(() => growerPid !== undefined && procState(growerPid) === 'T', 10_000);
    const pid = growerPid as number;
    grower.handle.stop('cancel');
    expect(await grower.ended).toMatchObject({ status: 'cancelled' });
    expect(isAlive(pid)).toBe(false);
    // The pauser forgets the ended run (at the latest at the next tick).
    await until(() => !pauser.isPaused('grower'), 2000);
    ahead.handle.stop('cancel');
    expect(await ahead.ended).toMatchObject({ status: 'cancelled' });
  }, 30_000);
});
