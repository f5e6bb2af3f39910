import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listClaudeInFlight } from '../../src/hooks/claude-hook-cli.js';
import { bundledCommand } from '../helpers/test-bundle.js';
import {
  decisionOf,
  fixture,
  type HookRun,
  runHookProcess,
  startHookProcess,
  type TempDir,
  tempDir,
} from './hook-harness.js';

/**
 * The hook as Claude Code runs it: one real process per event, several at the same moment for the
 * `Agent` calls of one message, all on one SQLite file, with no daemon.
 */

let home: TempDir;

beforeEach(() => {
  home = tempDir();
});

afterEach(() => {
  home.cleanup();
});

/**
 * Starts `count` hook processes, lets them all load and block on stdin, then releases them together,
 * so they reach the database at the same moment.
 */
async function simultaneousPreToolUse(count: number, sessionId: string): Promise<HookRun[]> {
  const runs = Array.from({ length: count }, () => startHookProcess(home.dir));
  await Promise.all(runs.map((run) => new Promise((resolve) => run.child.once('spawn', resolve))));
  await sleep(1500);
  runs.forEach((run, i) => {
    run.send(fixture('pre-tool-use-foreground', { session_id: sessionId, tool_use_id: `${sessionId}-${i}` }));
  });
  return Promise.all(runs.map((run) => run.done));
}

function tally(runs: HookRun[]): { allowed: number; denied: number } {
  let allowed = 0;
  let denied = 0;
  for (const run of runs) {
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    const decision = decisionOf(run);
    if (decision === undefined) allowed++;
    else if (decision.decision === 'deny') denied++;
  }
  return { allowed, denied };
}

describe('the hook process under concurrency', () => {
  it('10 PreToolUse processes at once on a fresh crew.db at cap 5: exactly 5 allowed, 5 denied', async () => {
    const runs = await simultaneousPreToolUse(10, 'S');
    expect(tally(runs)).toEqual({ allowed: 5, denied: 5 });
    for (const run of runs.filter((r) => decisionOf(r) !== undefined)) {
      expect(decisionOf(run)?.reason).toBe(
        'cap 5/5 sub-agents in flight in this session; wait for one to finish before spawning more',
      );
    }
    const list = await listClaudeInFlight(home.dir);
    expect(list.in_flight).toBe(5);
  });

  it('again on an existing crew.db, with another session already in flight', async () => {
    expect(
      decisionOf(await runHookProcess(home.dir, fixture('pre-tool-use-foreground', { session_id: 'O' }))),
    ).toBeUndefined();
    const runs = await simultaneousPreToolUse(10, 'S');
    expect(tally(runs)).toEqual({ allowed: 5, denied: 5 });
    const list = await listClaudeInFlight(home.dir);
    expect(list.sessions.map((s) => [s.session_id, s.in_flight])).toEqual([
      ['O', 1],
      ['S', 5],
    ]);
  });
});

describe('the hook process on a crew.db another process is creating', () => {
  it('waits out a write lock held on a file still in rollback mode instead of failing open', async () => {
    // What several hook processes do to a fresh crew.db at once: one holds a write lock before the
    // file is in WAL mode, and SQLite answers another's switch to WAL with SQLITE_BUSY at once, busy
    // timeout or not.
    const [node, ...args] = bundledCommand(
      'test-fixtures/sqlite-child',
      'hold',
      join(home.dir, 'crew.db'),
      '500',
    );
    const holder = spawn(node as string, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    const released = new Promise((resolve) => holder.once('exit', resolve));
    await new Promise((resolve) => holder.stdout.once('data', resolve)); // `locked`
    const run = await runHookProcess(home.dir, fixture('pre-tool-use-foreground'));
    await released;
    expect(run).toEqual({ code: 0, stdout: '', stderr: '' });
    expect((await listClaudeInFlight(home.dir)).in_flight).toBe(1);
  });
});

describe('the hook process end to end', () => {
  it('reserves on PreToolUse and releases on the matching PostToolUse', async () => {
    const preRun = await runHookProcess(home.dir, fixture('pre-tool-use-foreground'));
    expect(preRun).toEqual({ code: 0, stdout: '', stderr: '' });
    expect((await listClaudeInFlight(home.dir)).in_flight).toBe(1);
    const postRun = await runHookProcess(home.dir, fixture('post-tool-use-foreground'));
    expect(postRun).toEqual({ code: 0, stdout: '', stderr: '' });
    expect((await listClaudeInFlight(home.dir)).in_flight).toBe(0);
  });

  it.each([
    ['empty stdin', ''],
    ['invalid JSON', 'not json at all'],
    ['missing fields', JSON.stringify({ hook_event_name: 'PreToolUse', tool_name: 'Agent' })],
  ])('%s: exit 0, no decision, a warning on stderr', async (_name, text) => {
    const run = await runHookProcess(home.dir, text);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^crew hook: warning: /);
  });
});
