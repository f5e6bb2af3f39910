import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { realClock } from '../../src/clock/real-clock.js';
import type { AgentDef } from '../../src/core/agent-def.js';
import { CgroupV2Containment, probeCgroupV2 } from '../../src/runners/cgroup-cell.js';
import { CommandRunner } from '../../src/runners/command-runner.js';
import { createContainment } from '../../src/runners/create-containment.js';
import { isAlive } from '../../src/runners/process-group.js';
import type { Containment, RunCell } from '../../src/runners/run-cell.js';
import type { RunnerEvent } from '../../src/runners/runner.js';
import { Spawner } from '../../src/runners/spawner.js';

/**
 * Issue 32 §4: with a cgroup per run, the spawner forks a run's leader inside its cell by itself (it
 * joins the cell, forks, and goes back to its own cgroup), so no `/bin/sh` runs between the spawner and
 * the agent (a shell cost about a millisecond of CPU and an exec per run). What must hold: the leader is
 * in its cell from its first instruction, the agent gets exactly its configured environment (a shell
 * adds `PWD`), the spawner never stays in a run's cell (a stop would kill it), and where joining fails
 * the run still starts contained, through the shell.
 */

const probed = probeCgroupV2(`crew-test-${process.pid}`);
const available = probed instanceof CgroupV2Containment;
if (probed instanceof CgroupV2Containment) probed.close();
if (!available && process.env.CI === 'true')
  throw new Error(`the spawner cgroup test cannot run on CI: ${(probed as { reason: string }).reason}`);

/** The cgroup v2 path of `pid` (`0::/path`), undefined once it is gone. */
function cgroupOf(pid: number): string | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/cgroup`, 'utf8');
    return text
      .split('\n')
      .find((line) => line.startsWith('0::'))
      ?.slice(3)
      .trim();
  } catch {
    return undefined;
  }
}

function agent(command: string[], env?: Record<string, string>): AgentDef {
  return { name: 'joined', runner: 'command', command, shared: false, skills: [], ...(env ? { env } : {}) };
}

/** A containment whose cells offer `forkInto` targets changed by `change` (to make joining fail). */
function altered(
  inner: Containment,
  change: (target: { join: string; home: string }) => { join: string; home: string },
): Containment {
  return {
    kind: inner.kind,
    reason: inner.reason,
    close: () => inner.close(),
    open(key: string): RunCell {
      const cell = inner.open(key);
      return {
        kind: cell.kind,
        wrap: (argv) => cell.wrap(argv),
        adopt: (pid, startTime) => cell.adopt(pid, startTime),
        leaderExited: () => cell.leaderExited?.(),
        members: () => cell.members(),
        signal: (signal) => cell.signal(signal),
        pause: (isPaused) => cell.pause(isPaused),
        release: () => cell.release(),
        forkInto: () => {
          const target = cell.forkInto?.();
          return target === undefined ? undefined : change(target);
        },
      };
    },
  };
}

let seq = 0;
function start(
  runner: CommandRunner,
  def: AgentDef,
): { ended: Promise<Extract<RunnerEvent, { type: 'ended' }>>; events: RunnerEvent[]; runId: string } {
  const events: RunnerEvent[] = [];
  seq += 1;
  const runId = `fork-into-${process.pid}-${seq}`;
  const ended = new Promise<Extract<RunnerEvent, { type: 'ended' }>>((resolve) => {
    runner.start(
      {
        runId,
        agent: def,
        prompt: 'the task',
        cwd: process.cwd(),
        mcpServers: [],
        keep: false,
        shared: false,
      },
      (event) => {
        events.push(event);
        if (event.type === 'ended') resolve(event);
      },
    );
  });
  return { ended, events, runId };
}

const output = (events: RunnerEvent[]) => events.map((e) => (e.type === 'output' ? e.text : '')).join('');
const startedPid = (events: RunnerEvent[]) => {
  const started = events.find((e) => e.type === 'started');
  return started?.type === 'started' ? (started.pid as number) : undefined;
};

describe.runIf(available).each(['native', 'node'] as const)(
  'the spawner forks a run inside its cgroup (%s helper)',
  (helper) => {
    const home = mkdtempSync(join(tmpdir(), 'crew-fork-into-'));
    let containment: CgroupV2Containment;
    const cleanups: (() => Promise<void>)[] = [];
    beforeAll(async () => {
      containment = (await createContainment({ crewHome: home })) as CgroupV2Containment;
    });
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });
    afterAll(() => {
      containment.close();
      expect(existsSync(containment.dir)).toBe(false);
      rmSync(home, { recursive: true, force: true });
    });

    async function world(
      used: Containment = containment,
    ): Promise<{ spawner: Spawner; runner: CommandRunner }> {
      const spawner = new Spawner({ helper });
      if (helper === 'native') expect(await spawner.prepare()).toBe(true);
      const runner = new CommandRunner({ clock: realClock, killGraceMs: 300, containment: used, spawner });
      cleanups.push(
        () => spawner.close(),
        () => runner.close(),
      );
      return { spawner, runner };
    }

    it('forks the leader in its cell, with no shell between, and goes back to its own cgroup', async () => {
      const { spawner, runner } = await world();
      const run = start(runner, agent(['cat', '/proc/self/cgroup']));
      expect((await run.ended).status).toBe('completed');
      // `cat` read its own cgroup: it was in its cell before its first instruction.
      expect(output(run.events)).toMatch(new RegExp(`^0::.*/run-${run.runId}$`, 'm'));
      // The spawner is back where it started (this process's cgroup), not in the run's cell.
      expect(cgroupOf(spawner.pid as number)).toBe(cgroupOf(process.pid));
      expect(containment.cells()).toEqual([]);
    });

    it('the agent gets exactly its configured environment: no shell rewrote PWD', async () => {
      const { runner } = await world();
      // A shell between would have reset PWD to the working directory (it checks an inherited one).
      const run = start(runner, agent(['env'], { PWD: '/crew-configured-pwd' }));
      expect((await run.ended).status).toBe('completed');
      expect(output(run.events)).toMatch(/^PWD=\/crew-configured-pwd$/m);
    });

    it('a cell that cannot be joined is started through the shell wrapper, still inside', async () => {
      const { runner } = await world(
        altered(containment, (target) => ({
          ...target,
          join: join(containment.dir, 'no-such-cell', 'cgroup.procs'),
        })),
      );
      const run = start(runner, agent(['cat', '/proc/self/cgroup']));
      expect((await run.ended).status).toBe('completed');
      expect(output(run.events)).toMatch(new RegExp(`^0::.*/run-${run.runId}$`, 'm'));
      expect(containment.cells()).toEqual([]);
    });

    // Where the helpers differ: the Node one moves itself into a cell and back; the native one's child joins.
    if (helper === 'native') {
      it('the native helper never moves itself: a home it could not go back to changes nothing', async () => {
        const { spawner, runner } = await world(
          altered(containment, (target) => ({
            ...target,
            home: join(containment.dir, 'no-such-home', 'cgroup.procs'),
          })),
        );
        const run = start(runner, agent(['cat', '/proc/self/cgroup']));
        expect((await run.ended).status).toBe('completed');
        expect(output(run.events)).toMatch(new RegExp(`^0::.*/run-${run.runId}$`, 'm'));
        expect(cgroupOf(spawner.pid as number)).toBe(cgroupOf(process.pid));
        expect(containment.cells()).toEqual([]);
      });
    } else {
      it('a spawner that cannot go back ends itself (its runs end failed, their processes killed); later runs use the shell', async () => {
        const { spawner, runner } = await world(
          altered(containment, (target) => ({
            ...target,
            home: join(containment.dir, 'no-such-home', 'cgroup.procs'),
          })),
        );
        const stuck = start(runner, agent(['sleep', '30']));
        const ended = await stuck.ended;
        expect(ended.status).toBe('failed');
        // It had started (inside its cell) before the helper found it could not go back; it is gone now.
        const pid = startedPid(stuck.events);
        expect(pid).toBeDefined();
        expect(isAlive(pid as number)).toBe(false);
        expect(containment.cells()).toEqual([]);
        // A new helper, which no longer joins: the next run goes through the shell and is contained.
        const next = start(runner, agent(['cat', '/proc/self/cgroup']));
        expect((await next.ended).status).toBe('completed');
        expect(output(next.events)).toMatch(new RegExp(`^0::.*/run-${next.runId}$`, 'm'));
        expect(cgroupOf(spawner.pid as number)).toBe(cgroupOf(process.pid));
        expect(containment.cells()).toEqual([]);
      }, 20_000);
    }
  },
);
