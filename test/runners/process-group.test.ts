import { afterEach, describe, expect, it } from 'vitest';
import { realClock } from '../../src/clock/real-clock.js';
import { errorCodeOf } from '../../src/core/errors.js';
import { spawnAgentProcess } from '../../src/runners/acp-process.js';
import {
  type DetachedProcess,
  isAlive,
  isGroupAlive,
  killIfSame,
  killTree,
  readStartTime,
  spawnDetached,
} from '../../src/runners/process-group.js';

const onLinux = process.platform === 'linux';
const grace = { graceMs: 2000, clock: realClock };

/** Every process a test started, so teardown can check none is left. */
const started: number[] = [];

function startNode(script: string, args: string[] = []): DetachedProcess {
  const proc = spawnDetached([process.execPath, '-e', script, ...args], { cwd: process.cwd() });
  started.push(proc.pid);
  return proc;
}

/** Resolves with the first line the process writes to stdout (bounded by the test timeout). */
async function firstLine(proc: DetachedProcess): Promise<string> {
  let text = '';
  for await (const chunk of proc.child.stdout!) {
    text += String(chunk);
    const end = text.indexOf('\n');
    if (end >= 0) return text.slice(0, end);
  }
  throw new Error(`stdout ended before a line: ${JSON.stringify(text)}`);
}

/** A node process that starts `sleep 1000` (same group) and prints the grandchild's pid. */
const TREE = `
const { spawn } = require('node:child_process');
const sleeper = spawn('sleep', ['1000'], { stdio: 'ignore' });
console.log(sleeper.pid);
setInterval(() => {}, 1000);
`;

/** Installs a SIGTERM handler that does nothing, then says so. */
const STUBBORN = `process.on('SIGTERM', () => {}); console.log('ready'); setInterval(() => {}, 1000);`;

afterEach(async () => {
  const left = started.splice(0).filter((pid) => isGroupAlive(pid) || isAlive(pid));
  await Promise.all(left.map((pid) => killTree(pid, { graceMs: 0, clock: realClock })));
  expect(left, 'processes left running by the test').toEqual([]);
});

describe('spawnDetached', () => {
  it('starts the process as the leader of its own group, with a start time', async () => {
    const proc = startNode('setInterval(() => {}, 1000)');
    expect(isGroupAlive(proc.pid)).toBe(true);
    if (onLinux) expect(proc.startTime).toBe(readStartTime(proc.pid));
    await killTree(proc.pid, grace);
    expect(await proc.exited).toEqual({ code: null, signal: 'SIGTERM' });
  });

  it('passes arguments verbatim, without a shell', async () => {
    const proc = startNode('console.log(JSON.stringify(process.argv.slice(1)))', ['a b; echo x', '$(id)']);
    expect(JSON.parse(await firstLine(proc))).toEqual(['a b; echo x', '$(id)']);
    expect(await proc.exited).toEqual({ code: 0, signal: null });
  });

  it('throws, naming the command, when the executable does not exist', () => {
    expect(() => spawnDetached(['crew-no-such-binary-x'], { cwd: process.cwd() })).toThrow(
      /cannot start "crew-no-such-binary-x"/,
    );
  });

  it('throws, naming the directory, when the working directory does not exist', () => {
    expect(() => spawnDetached([process.execPath, '-e', ''], { cwd: '/nonexistent/crew-dir' })).toThrow(
      /working directory \/nonexistent\/crew-dir does not exist/,
    );
  });

  it('every start failure, of a command or an ACP agent, is an agent_unstartable fault saying what to fix', () => {
    const thrown = (start: () => unknown): unknown => {
      try {
        start();
      } catch (error) {
        return error;
      }
      return undefined;
    };
    const env = process.env;
    const failures = [
      thrown(() => spawnDetached([], { cwd: process.cwd() })),
      thrown(() => spawnDetached(['crew-no-such-binary-x'], { cwd: process.cwd() })),
      thrown(() => spawnDetached([process.execPath, '-e', ''], { cwd: '/nonexistent/crew-dir' })),
      thrown(() => spawnAgentProcess([], { cwd: process.cwd(), env })),
      thrown(() => spawnAgentProcess(['crew-no-such-binary-x'], { cwd: process.cwd(), env })),
    ];
    expect(failures.map(errorCodeOf)).toEqual(Array(failures.length).fill('agent_unstartable'));
    expect((failures[4] as Error).message).toMatch(/crew-no-such-binary-x.*fix the agent's command/);
  });
});

describe('killTree', () => {
  it('removes the whole group, grandchild included', async () => {
    const proc = startNode(TREE);
    const grandchild = Number(await firstLine(proc));
    expect(isAlive(grandchild)).toBe(true);

    expect(await killTree(proc.pid, grace)).toBe('terminated');

    expect(isGroupAlive(proc.pid)).toBe(false);
    expect(isAlive(proc.pid)).toBe(false);
    expect(isAlive(grandchild)).toBe(false);
  });

  it('sends SIGKILL after the grace to a process that ignores SIGTERM', async () => {
    const proc = startNode(STUBBORN);
    expect(await firstLine(proc)).toBe('ready');
    const graceMs = 300;
    const before = Date.now();

    expect(await killTree(proc.pid, { graceMs, clock: realClock })).toBe('killed');

    expect(Date.now() - before).toBeGreaterThanOrEqual(graceMs);
    expect(await proc.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(isGroupAlive(proc.pid)).toBe(false);
  });

  it('reports a group that is already gone', async () => {
    const proc = startNode('');
    await proc.exited;
    expect(await killTree(proc.pid, grace)).toBe('already_gone');
  });
});

describe('isAlive', () => {
  it('is true for a live process, with or without its start time', async () => {
    const proc = startNode('setInterval(() => {}, 1000)');
    expect(isAlive(proc.pid)).toBe(true);
    if (onLinux) expect(isAlive(proc.pid, proc.startTime)).toBe(true);
    await killTree(proc.pid, grace);
  });

  it('is false when the start time does not match (a reused pid)', async () => {
    const proc = startNode('setInterval(() => {}, 1000)');
    expect(isAlive(proc.pid, (proc.startTime ?? 0) + 1)).toBe(false);
    await killTree(proc.pid, grace);
  });

  it('is false once the process has exited', async () => {
    const proc = startNode('');
    await proc.exited;
    expect(isAlive(proc.pid)).toBe(false);
    expect(isAlive(proc.pid, proc.startTime)).toBe(false);
  });
});

describe('killIfSame', () => {
  it('kills nothing when the start time does not match', async () => {
    const proc = startNode(TREE);
    const grandchild = Number(await firstLine(proc));

    expect(await killIfSame(proc.pid, (proc.startTime ?? 0) + 1, grace)).toBeUndefined();

    expect(isAlive(proc.pid)).toBe(true);
    expect(isAlive(grandchild)).toBe(true);
    await killTree(proc.pid, grace);
    expect(isAlive(grandchild)).toBe(false);
  });

  it.runIf(onLinux)('kills the tree when the start time matches', async () => {
    const proc = startNode(TREE);
    const grandchild = Number(await firstLine(proc));

    expect(await killIfSame(proc.pid, proc.startTime!, grace)).toBe('terminated');

    expect(isAlive(grandchild)).toBe(false);
    expect(isGroupAlive(proc.pid)).toBe(false);
    expect(await proc.exited).toEqual({ code: null, signal: 'SIGTERM' });
  });
});
