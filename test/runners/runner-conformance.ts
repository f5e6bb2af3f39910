import { tmpdir } from 'node:os';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentDef } from '../../src/core/agent-def.js';
import type { RunHandle, Runner, RunnerEvent, RunRequest } from '../../src/runners/runner.js';
import { grandchildPids, isAlive, waitUntil } from '../helpers/sim.js';

/**
 * The contract every Runner keeps (DESIGN practice 4: one conformance suite, every adapter), written
 * against the simulator's `#sim` directives so the same tests run on the ACP runner (dedicated and
 * shared runtimes), the command runner (`crew-sim-agent --once`) and the fake runner.
 */

export interface ConformanceSubject {
  runner: Runner;
  /** An agent that obeys `#sim` directives. */
  agent: AgentDef;
  /** Ask for a shared runtime in every request. @default false */
  shared?: boolean;
  /**
   * Whether runs are real processes that obey `#sim child=sleep` (a fake runner's are not): then the
   * suite also checks that close() leaves none of them, grandchildren included. @default true
   */
  spawnsProcesses?: boolean;
  /** Extra teardown after `runner.close()`. */
  close?: () => Promise<void>;
}

type Ended = Extract<RunnerEvent, { type: 'ended' }>;

/** One run's events, with waits that settle on the events themselves (bounded). */
export interface Recorded {
  events: RunnerEvent[];
  output(): string;
  ends(): Ended[];
  /** Resolves with the first `ended`. */
  ended: Promise<Ended>;
  /** Resolves once an event satisfies `test`. */
  until(test: (event: RunnerEvent) => boolean, what: string, timeoutMs?: number): Promise<RunnerEvent>;
}

let runCounter = 0;

/** A request for `task` with defaults a test can override. */
export function requestFor(agent: AgentDef, task: string, extra: Partial<RunRequest> = {}): RunRequest {
  runCounter += 1;
  return {
    runId: `run-${process.pid}-${runCounter}`,
    agent,
    prompt: task,
    cwd: tmpdir(),
    mcpServers: [],
    keep: false,
    shared: false,
    ...extra,
  };
}

/** Starts a run and records its events. */
export function record(
  runner: Runner,
  request: RunRequest,
): Recorded & { handle: RunHandle; request: RunRequest } {
  const events: RunnerEvent[] = [];
  const waiters = new Set<{ test: (e: RunnerEvent) => boolean; resolve: (e: RunnerEvent) => void }>();
  const handle = runner.start(request, (event) => {
    events.push(event);
    for (const waiter of [...waiters]) {
      if (waiter.test(event)) {
        waiters.delete(waiter);
        waiter.resolve(event);
      }
    }
  });
  const until = (test: (event: RunnerEvent) => boolean, what: string, timeoutMs = 20_000) => {
    const seen = events.find(test);
    if (seen) return Promise.resolve(seen);
    return new Promise<RunnerEvent>((resolve, reject) => {
      const waiter = {
        test,
        resolve: (e: RunnerEvent) => {
          clearTimeout(timer);
          resolve(e);
        },
      };
      const timer = setTimeout(() => {
        waiters.delete(waiter);
        reject(
          new Error(`timed out after ${timeoutMs} ms waiting for ${what}; events: ${JSON.stringify(events)}`),
        );
      }, timeoutMs);
      waiters.add(waiter);
    });
  };
  const output = () =>
    events
      .filter((e): e is Extract<RunnerEvent, { type: 'output' }> => e.type === 'output')
      .map((e) => e.text)
      .join('');
  const ends = () => events.filter((e): e is Ended => e.type === 'ended');
  const ended = until((e) => e.type === 'ended', 'ended') as Promise<Ended>;
  return { handle, request, events, output, ends, ended, until };
}

/**
 * The pids a run's events reveal: its process (from `started`; a shared runtime's only when asked, since
 * it outlives the run) and grandchildren (`child: pid=N`).
 */
export function pidsOf(recorded: Recorded, options: { shared?: boolean } = {}): number[] {
  const started = recorded.events.find((e) => e.type === 'started');
  const isOwn = started?.type === 'started' && (!started.shared || options.shared === true);
  const own = isOwn && started.pid !== undefined ? [started.pid] : [];
  return [...own, ...grandchildPids(recorded.output())];
}

/** A runner per test, closed after it, with every run's events recorded and checked. */
export interface RunnerFixture<R extends Runner> {
  runner(): R;
  /** Starts a run of `task` on `agent` and records it. */
  start(
    agent: AgentDef,
    task: string,
    extra?: Partial<RunRequest>,
  ): Recorded & { handle: RunHandle; request: RunRequest };
}

/**
 * Declares `beforeEach`/`afterEach` hooks: a fresh runner from `make` per test; afterwards the runner is
 * closed, every recorded run must have exactly one `ended`, and every process its events revealed
 * (shared runtimes included) must be gone.
 */
export function useRunner<R extends Runner>(make: () => R, teardown?: () => Promise<void>): RunnerFixture<R> {
  let runner: R;
  let recorded: Recorded[] = [];
  beforeEach(() => {
    runner = make();
    recorded = [];
  });
  afterEach(async () => {
    await runner.close();
    await teardown?.();
    for (const r of recorded) {
      expect(r.ends(), 'exactly one ended per start').toHaveLength(1);
      for (const pid of pidsOf(r, { shared: true }))
        await waitUntil(() => !isAlive(pid), 5000, `pid ${pid} gone`);
    }
  });
  return {
    runner: () => runner,
    start(agent, task, extra = {}) {
      const r = record(runner, requestFor(agent, task, extra));
      recorded.push(r);
      return r;
    },
  };
}

export function runnerConformance(name: string, make: () => ConformanceSubject): void {
  describe(`Runner conformance: ${name}`, () => {
    let subject: ConformanceSubject | undefined;
    const fixture = useRunner(
      () => {
        subject = make();
        return subject.runner;
      },
      () => subject?.close?.() ?? Promise.resolve(),
    );
    const start = (task: string) => fixture.start(subject!.agent, task, { shared: subject!.shared ?? false });

    it('completes a plain task, streaming its output, with exactly one ended', async () => {
      const r = start('#sim chunks=3 sleep=150ms');
      const ended = await r.ended;
      expect(ended).toMatchObject({ type: 'ended', status: 'completed' });
      expect(r.output()).toBe('sim: chunk 1/3\nsim: chunk 2/3\nsim: chunk 3/3\n');
      const types = r.events.map((e) => e.type);
      expect(types.filter((t) => t === 'started')).toHaveLength(1);
      expect(types.indexOf('started')).toBeLessThan(types.indexOf('output'));
      expect(types.at(-1)).toBe('ended');
    });

    it("ends a hanging task `cancelled`, exactly once, on stop('cancel')", async () => {
      const r = start('#sim hang');
      await r.until((e) => e.type === 'output', 'first output');
      r.handle.stop('cancel');
      r.handle.stop('cancel');
      expect(await r.ended).toMatchObject({ status: 'cancelled' });
    });

    it.each(['#sim fail=error', '#sim exit=3'])(
      'ends a failing task (%s) `failed` with a reason',
      async (task) => {
        const r = start(task);
        const ended = await r.ended;
        expect(ended.status).toBe('failed');
        expect(ended.error).toEqual(expect.any(String));
        expect(ended.error).not.toBe('');
      },
    );

    it('gives each of many concurrent runs its own output and exactly one ended', async () => {
      const runs = Array.from({ length: 8 }, (_, i) =>
        start(`task number ${i}\n#sim echo sleep=200ms chunks=4`),
      );
      const ends = await Promise.all(runs.map((r) => r.ended));
      expect(ends.map((e) => e.status)).toEqual(runs.map(() => 'completed'));
      runs.forEach((r, i) => {
        expect(r.output()).toBe(`task number ${i}\n#sim echo sleep=200ms chunks=4`);
      });
    });

    it('ends live runs on close() and leaves no process behind, grandchildren included', async () => {
      const processes = subject!.spawnsProcesses ?? true;
      const r = start(processes ? '#sim child=sleep hang' : '#sim hang');
      if (processes) {
        await r.until((e) => e.type === 'output' && /child: pid=\d+/.test(e.text), 'the grandchild pid');
      } else {
        await r.until((e) => e.type === 'started', 'started');
      }
      const pids = pidsOf(r, { shared: true });
      if (processes) expect(pids.length).toBeGreaterThan(1);
      await fixture.runner().close();
      expect(r.ends()).toHaveLength(1);
      expect(r.ends()[0]?.status).toBe('cancelled');
      for (const pid of pids) await waitUntil(() => !isAlive(pid), 5000, `pid ${pid} gone after close`);
    });
  });
}
