import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { realClock } from '../../src/clock/real-clock.js';
import type { AgentDef } from '../../src/core/agent-def.js';
import { CrewError } from '../../src/core/errors.js';
import { CommandRunner, expandCommand } from '../../src/runners/command-runner.js';
import { isAlive, isGroupAlive } from '../../src/runners/process-group.js';
import type { RunHandle, RunnerEvent, RunRequest } from '../../src/runners/runner.js';

type Ended = Extract<RunnerEvent, { type: 'ended' }>;

function agent(command: string[], extra: Partial<AgentDef> = {}): AgentDef {
  return { name: 'cmd', runner: 'command', command, shared: false, skills: [], ...extra };
}

/** An agent whose command is `node -e <script> <args…>`. */
function nodeAgent(script: string, args: string[] = []): AgentDef {
  return agent([process.execPath, '-e', script, ...args]);
}

let nextId = 0;
function request(agentDef: AgentDef, extra: Partial<RunRequest> = {}): RunRequest {
  nextId += 1;
  return {
    runId: `r${nextId}`,
    agent: agentDef,
    prompt: 'the task',
    cwd: process.cwd(),
    mcpServers: [],
    keep: false,
    shared: false,
    ...extra,
  };
}

interface Recorded {
  handle: RunHandle;
  events: RunnerEvent[];
  /** When each event arrived (ms, same index as `events`). */
  times: number[];
  ended: Promise<Ended>;
  /** Resolves at the first event of the given type. */
  next(type: RunnerEvent['type']): Promise<RunnerEvent>;
}

let runner: CommandRunner;
/** Every pid a run reported, so teardown can check none is left. */
let pids: number[];

function start(req: RunRequest): Recorded {
  const events: RunnerEvent[] = [];
  const times: number[] = [];
  const waiters: { type: RunnerEvent['type']; resolve: (event: RunnerEvent) => void }[] = [];
  const handle = runner.start(req, (event) => {
    events.push(event);
    times.push(Date.now());
    if (event.type === 'started' && event.pid !== undefined) pids.push(event.pid);
    for (const waiter of waiters.filter((w) => w.type === event.type)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve(event);
    }
  });
  const next = (type: RunnerEvent['type']): Promise<RunnerEvent> => {
    const seen = events.find((event) => event.type === type);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => waiters.push({ type, resolve }));
  };
  return { handle, events, times, ended: next('ended') as Promise<Ended>, next };
}

function outputOf(events: RunnerEvent[]): string {
  return events.map((event) => (event.type === 'output' ? event.text : '')).join('');
}

/** Lets late events (a second `ended`, say) arrive before counting. */
function settle(ms = 100): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

beforeEach(() => {
  runner = new CommandRunner({ clock: realClock, killGraceMs: 500 });
  pids = [];
});

afterEach(async () => {
  await runner.close();
  expect(pids.filter((pid) => isAlive(pid) || isGroupAlive(pid))).toEqual([]);
});

describe('expandCommand', () => {
  const values = { task: 'do it', cwd: '/w', agent: 'rev' };

  it('substitutes placeholders inside each argument', () => {
    expect(
      expandCommand(['x', '--prompt={task}', '{cwd}/out', '{agent}', '--model={model}', '--e={effort}'], {
        ...values,
        model: 'm1',
        effort: 'high',
      }),
    ).toEqual(['x', '--prompt=do it', '/w/out', 'rev', '--model=m1', '--e=high']);
  });

  it('drops an argument that is only {model} or {effort} with no value, and empties embedded ones', () => {
    expect(expandCommand(['x', '{model}', '{effort}', '--model={model}', '{task}'], values)).toEqual([
      'x',
      '--model=',
      'do it',
    ]);
  });

  it('inserts values literally, leaving unknown braces alone', () => {
    expect(expandCommand(['{task}', '{other}'], { ...values, task: "$& $' {cwd}" })).toEqual([
      "$& $' {cwd}",
      '{other}',
    ]);
  });
});

describe('CommandRunner', () => {
  it('reports started first, with the pid and start time', async () => {
    const run = start(request(nodeAgent('')));
    await run.ended;
    const first = run.events[0];
    expect(first).toMatchObject({ type: 'started', shared: false });
    expect(first?.type === 'started' && typeof first.pid).toBe('number');
    if (process.platform === 'linux')
      expect(first?.type === 'started' && typeof first.startTime).toBe('number');
  });

  it('streams stdout and stderr in order, as they arrive', async () => {
    const script = `
      process.stdout.write('one ');
      process.stderr.write('err ');
      setTimeout(() => { process.stdout.write('two '); process.stdout.write('three'); }, 700);
    `;
    const run = start(request(nodeAgent(script)));
    const ended = await run.ended;

    expect(ended).toEqual({ type: 'ended', status: 'completed' });
    const out = outputOf(run.events);
    expect(out.replace('err ', '')).toBe('one two three');
    expect(out).toContain('err ');
    // The first chunk was an event well before the process ended, not collected at exit.
    const firstOutput = run.events.findIndex((event) => event.type === 'output');
    expect(run.times.at(-1)! - run.times[firstOutput]!).toBeGreaterThanOrEqual(300);
  });

  it.each([
    ['process.exit(3)', { status: 'failed', exitCode: 3, error: 'exited with code 3' }],
    ['process.exit(0)', { status: 'completed' }],
    ["process.kill(process.pid, 'SIGKILL')", { status: 'failed', error: 'killed by SIGKILL' }],
  ])('maps the exit of `%s`', async (script, expected) => {
    const run = start(request(nodeAgent(script)));
    expect(await run.ended).toEqual({ type: 'ended', ...expected });
  });

  it('passes a task verbatim as one argument, never through a shell', async () => {
    const task = `x; rm -rf / $(touch /tmp/crew-pwned) \`id\` | cat > /tmp/crew-out "q" 'q' \\ *`;
    const argvDump = 'process.stdout.write(JSON.stringify(process.argv.slice(1)))';
    const cmd = nodeAgent(argvDump, ['{task}', '{agent}@{cwd}', '{model}', '--effort={effort}']);
    const run = start(request(cmd, { prompt: task, cwd: '/tmp', reasoningEffort: 'high' }));

    expect(await run.ended).toEqual({ type: 'ended', status: 'completed' });
    expect(JSON.parse(outputOf(run.events))).toEqual([task, 'cmd@/tmp', '--effort=high']);
  });

  it('uses the request model over the agent model', async () => {
    const cmd = agent([process.execPath, '-e', 'process.stdout.write(process.argv[1])', '{model}'], {
      model: 'agent-model',
    });
    const own = start(request(cmd));
    const overridden = start(request(cmd, { model: 'spawn-model' }));
    await Promise.all([own.ended, overridden.ended]);
    expect(outputOf(own.events)).toBe('agent-model');
    expect(outputOf(overridden.events)).toBe('spawn-model');
  });

  it('runs in the request cwd', async () => {
    const run = start(request(nodeAgent('process.stdout.write(process.cwd())'), { cwd: '/tmp' }));
    await run.ended;
    expect(outputOf(run.events)).toBe('/tmp');
  });

  it('keeps a multi-byte character whole when its bytes arrive in two writes', async () => {
    const script = `
      const bytes = Buffer.from('a€b', 'utf8');
      process.stdout.write(bytes.subarray(0, 2));
      setTimeout(() => process.stdout.write(bytes.subarray(2)), 200);
    `;
    const run = start(request(nodeAgent(script)));
    await run.ended;
    const texts = run.events.flatMap((event) => (event.type === 'output' ? [event.text] : []));
    expect(texts.join('')).toBe('a€b');
    expect(texts.length).toBeGreaterThanOrEqual(2);
    expect(texts.some((text) => text.includes('\uFFFD'))).toBe(false);
  });

  it('stops a run: cancelled exactly once, after the whole group is gone', async () => {
    const script = `
      const { spawn } = require('node:child_process');
      const sleeper = spawn('sleep', ['1000'], { stdio: 'ignore' });
      console.log(sleeper.pid);
      setInterval(() => {}, 1000);
    `;
    const run = start(request(nodeAgent(script)));
    await run.next('output');
    const grandchild = Number(outputOf(run.events).trim());
    const started = run.events[0];
    const pid = started?.type === 'started' ? started.pid! : -1;

    run.handle.stop('cancel');
    run.handle.stop('cancel');
    const ended = await run.ended;

    expect(ended).toEqual({ type: 'ended', status: 'cancelled', stop: 'cancelled' });
    expect(isGroupAlive(pid)).toBe(false);
    expect(isAlive(grandchild)).toBe(false);
    run.handle.stop('timeout');
    await settle();
    expect(run.events.filter((event) => event.type === 'ended')).toHaveLength(1);
  });

  it('can be stopped at once, before its first event', async () => {
    const run = start(request(nodeAgent('setInterval(() => {}, 1000)')));
    run.handle.stop('cancel');
    await run.ended;
    expect(run.events.map((event) => event.type)).toEqual(['started', 'ended']);
    expect(run.events[1]).toMatchObject({ status: 'cancelled' });
  });

  it('kills a run that ignores SIGTERM after the grace, and still ends it cancelled', async () => {
    const run = start(
      request(
        nodeAgent(`process.on('SIGTERM', () => {}); console.log('ready'); setInterval(() => {}, 1000);`),
      ),
    );
    await run.next('output');
    const before = Date.now();
    run.handle.stop('timeout');
    expect(await run.ended).toMatchObject({ status: 'cancelled' });
    expect(Date.now() - before).toBeGreaterThanOrEqual(500);
  });

  it('cleans up what a finished command left running in its group', async () => {
    const script = `
      const { spawn } = require('node:child_process');
      const sleeper = spawn('sleep', ['1000'], { stdio: 'ignore', detached: false });
      sleeper.unref();
      process.stdout.write(String(sleeper.pid));
    `;
    const run = start(request(nodeAgent(script)));
    expect(await run.ended).toEqual({ type: 'ended', status: 'completed' });
    expect(isAlive(Number(outputOf(run.events)))).toBe(false);
  });

  it('ends 20 concurrent runs exactly once each, with their own output', async () => {
    const script = `setTimeout(() => { process.stdout.write(process.argv[1]); process.exit(Number(process.argv[1]) % 2); }, 50)`;
    const runs = Array.from({ length: 20 }, (_, i) =>
      start(request(nodeAgent(script, ['{task}']), { prompt: String(i) })),
    );
    const ended = await Promise.all(runs.map((run) => run.ended));
    await settle();

    ended.forEach((event, i) => {
      expect(event.status).toBe(i % 2 === 0 ? 'completed' : 'failed');
    });
    runs.forEach((run, i) => {
      expect(run.events.filter((event) => event.type === 'ended')).toHaveLength(1);
      expect(run.events.at(-1)?.type).toBe('ended');
      expect(outputOf(run.events)).toBe(String(i));
    });
  });

  it('fails a run whose executable does not exist, without throwing from start', async () => {
    const run = start(request(agent(['crew-no-such-binary-x', '{task}'])));
    expect(await run.ended).toEqual({
      type: 'ended',
      status: 'failed',
      error: 'cannot start "crew-no-such-binary-x": not found on PATH or not executable',
    });
    expect(run.events).toHaveLength(1);
  });

  it('cannot continue a conversation: the run fails with a clear error and starts nothing', async () => {
    const run = start(request(nodeAgent(''), { continueFrom: 'conv-1' }));
    const ended = await run.ended;
    expect(ended.status).toBe('failed');
    expect(ended.error).toMatch(/command agent.*keeps no conversation/);
    expect(run.events).toHaveLength(1);
  });

  it('rejects steering with invalid_argument', async () => {
    const run = start(request(nodeAgent('setTimeout(() => {}, 5000)')));
    await run.next('started');
    const error = await run.handle.steer('change course', 'interrupt').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CrewError);
    expect((error as CrewError).code).toBe('invalid_argument');
    expect((error as CrewError).message).toMatch(/cannot be steered/);
    run.handle.stop('cancel');
    await run.ended;
  });

  it('has nothing to release', async () => {
    await expect(runner.release('conv-1')).resolves.toBeUndefined();
  });

  it('close() stops every run and resolves once no process remains; later starts fail', async () => {
    const runs = Array.from({ length: 3 }, () => start(request(nodeAgent('setInterval(() => {}, 1000)'))));
    await Promise.all(runs.map((run) => run.next('started')));

    await runner.close();

    for (const run of runs) {
      expect(run.events.filter((event) => event.type === 'ended')).toEqual([
        { type: 'ended', status: 'cancelled', stop: 'cancelled' },
      ]);
    }
    expect(pids.filter((pid) => isGroupAlive(pid))).toEqual([]);
    const late = start(request(nodeAgent('')));
    expect((await late.ended).error).toMatch(/closed/);
  });
});
