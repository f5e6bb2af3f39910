import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listClaudeInFlight } from '../../src/hooks/claude-hook-cli.js';
import { CREW_HOOK_COMMAND } from '../../src/hooks/claude-settings-install.js';
import {
  decisionOf,
  fixture,
  hookEvent,
  type Payload,
  runHookInProcess,
  type TempDir,
  tempDir,
  writeConfig,
} from './hook-harness.js';

const T0 = 1_700_000_000_000;
const SESSION_DENIAL =
  'cap 5/5 sub-agents in flight in this session; wait for one to finish before spawning more';

let home: TempDir;

beforeEach(() => {
  home = tempDir();
});

afterEach(() => {
  home.cleanup();
});

function pre(toolUseId: string, sessionId = 'S', extra: Payload = {}): Payload {
  return fixture('pre-tool-use-foreground', { tool_use_id: toolUseId, session_id: sessionId, ...extra });
}

/** Fills `sessionId` to the default cap of 5 with foreground calls f1..f5. */
async function fillToCap(sessionId = 'S', nowMs = T0): Promise<void> {
  for (let i = 1; i <= 5; i++) {
    const run = await hookEvent(home.dir, pre(`${sessionId}-f${i}`, sessionId), nowMs);
    expect(decisionOf(run)).toBeUndefined();
  }
}

async function inFlight(nowMs = T0): Promise<string[]> {
  const list = await listClaudeInFlight(home.dir, nowMs);
  return list.sessions.flatMap((s) => s.agents.map((a) => a.tool_use_id));
}

describe('crew hook claude: the cap', () => {
  it('allows silently under the cap and denies the sixth with the documented JSON and exit 0', async () => {
    await fillToCap();
    const run = await hookEvent(home.dir, pre('sixth'), T0);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: SESSION_DENIAL,
      },
    });
    expect(await inFlight()).toHaveLength(5);
  });

  it('session scope isolates sessions', async () => {
    await fillToCap('A');
    expect(decisionOf(await hookEvent(home.dir, pre('b1', 'B'), T0))).toBeUndefined();
    expect(decisionOf(await hookEvent(home.dir, pre('a6', 'A'), T0))?.decision).toBe('deny');
  });

  it('host scope counts every session on the machine and says so', async () => {
    writeConfig(home.dir, { 'hooks.claude.scope': 'host', 'hooks.claude.max_in_flight': 3 });
    for (const [id, session] of [
      ['a1', 'A'],
      ['a2', 'A'],
      ['b1', 'B'],
    ] as const) {
      expect(decisionOf(await hookEvent(home.dir, pre(id, session), T0))).toBeUndefined();
    }
    expect(decisionOf(await hookEvent(home.dir, pre('b2', 'B'), T0))).toEqual({
      decision: 'deny',
      reason: 'cap 3/3 sub-agents in flight on this host; wait for one to finish before spawning more',
    });
    expect(decisionOf(await hookEvent(home.dir, pre('c1', 'C'), T0))?.decision).toBe('deny');
  });

  it('counts calls made inside a sub-agent in the parent session', async () => {
    await fillToCap();
    const nested = fixture('pre-tool-use-in-subagent', { session_id: 'S' });
    expect(decisionOf(await hookEvent(home.dir, nested, T0))?.decision).toBe('deny');
  });

  it('does nothing for other tools, even at the cap', async () => {
    await fillToCap();
    const run = await hookEvent(home.dir, fixture('pre-tool-use-other-tool', { session_id: 'S' }), T0);
    expect(run).toEqual({ code: 0, stdout: '', stderr: '' });
  });
});

describe('crew hook claude: every release path', () => {
  it('foreground: PostToolUse releases by tool_use_id', async () => {
    await fillToCap();
    const post = fixture('post-tool-use-foreground', { session_id: 'S', tool_use_id: 'S-f3' });
    expect(await hookEvent(home.dir, post, T0 + 1000)).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(await inFlight(T0 + 1000)).toEqual(['S-f1', 'S-f2', 'S-f4', 'S-f5']);
    expect(decisionOf(await hookEvent(home.dir, pre('next'), T0 + 2000))).toBeUndefined();
  });

  it('foreground: PostToolUseFailure (interrupted) releases too', async () => {
    await fillToCap();
    await hookEvent(home.dir, fixture('post-tool-use-failure', { session_id: 'S', tool_use_id: 'S-f1' }), T0);
    expect(await inFlight()).not.toContain('S-f1');
  });

  it('background: PostToolUse maps the agent, which stays counted until its SubagentStop', async () => {
    await fillToCap();
    const bgPre = fixture('pre-tool-use-background', { session_id: 'S' });
    expect(decisionOf(await hookEvent(home.dir, bgPre, T0))?.decision).toBe('deny');
    // Free a place, launch in the background, and check the launch keeps it.
    await hookEvent(
      home.dir,
      fixture('post-tool-use-foreground', { session_id: 'S', tool_use_id: 'S-f1' }),
      T0,
    );
    expect(decisionOf(await hookEvent(home.dir, bgPre, T0))).toBeUndefined();
    await hookEvent(home.dir, fixture('post-tool-use-background', { session_id: 'S' }), T0 + 100);
    const list = await listClaudeInFlight(home.dir, T0 + 100);
    expect(list.sessions[0]?.agents).toContainEqual(
      expect.objectContaining({
        tool_use_id: 'toolu_01BgUvWxYzAbCdEfGhIjKlMn',
        agent_id: 'c92e5b8',
        mode: 'background',
      }),
    );
    expect(decisionOf(await hookEvent(home.dir, pre('blocked'), T0 + 200))?.decision).toBe('deny');

    const stop = fixture('subagent-stop', { session_id: 'S' });
    await hookEvent(home.dir, stop, T0 + 60_000);
    expect(await inFlight(T0 + 60_000)).toEqual(['S-f2', 'S-f3', 'S-f4', 'S-f5']);
    expect(decisionOf(await hookEvent(home.dir, pre('now-ok'), T0 + 60_001))).toBeUndefined();
  });

  it('a killed background agent (no SubagentStop) is released when Stop no longer lists it', async () => {
    const launch = async (toolUseId: string, agentId: string) => {
      await hookEvent(
        home.dir,
        fixture('pre-tool-use-background', { session_id: 'S', tool_use_id: toolUseId }),
        T0,
      );
      await hookEvent(
        home.dir,
        fixture('post-tool-use-background', {
          session_id: 'S',
          tool_use_id: toolUseId,
          tool_response: { isAsync: true, status: 'async_launched', agentId },
        }),
        T0,
      );
    };
    await launch('t-live', 'd05a7f3');
    await launch('t-killed', 'e11dead');
    // stop.json lists only d05a7f3 as running.
    await hookEvent(home.dir, fixture('stop', { session_id: 'S' }), T0 + 30_000);
    expect(await inFlight(T0 + 30_000)).toEqual(['t-live']);
  });

  it('SubagentStop reconciles against its background_tasks as well', async () => {
    await hookEvent(home.dir, fixture('pre-tool-use-background', { session_id: 'S', tool_use_id: 'k' }), T0);
    await hookEvent(
      home.dir,
      fixture('post-tool-use-background', {
        session_id: 'S',
        tool_use_id: 'k',
        tool_response: { status: 'async_launched', agentId: 'gone' },
      }),
      T0,
    );
    // A different agent stops; its list does not hold `gone`.
    await hookEvent(home.dir, fixture('subagent-stop', { session_id: 'S', agent_id: 'x1' }), T0 + 30_000);
    expect(await inFlight(T0 + 30_000)).toEqual([]);
  });

  it('a Stop without background_tasks (older Claude Code) releases no background agent', async () => {
    await hookEvent(home.dir, fixture('pre-tool-use-background', { session_id: 'S' }), T0);
    await hookEvent(home.dir, fixture('post-tool-use-background', { session_id: 'S' }), T0);
    const { background_tasks: _omit, ...older } = fixture('stop', { session_id: 'S' });
    await hookEvent(home.dir, older, T0 + 30_000);
    expect(await inFlight(T0 + 30_000)).toEqual(['toolu_01BgUvWxYzAbCdEfGhIjKlMn']);
  });

  it("Stop releases the main thread's foreground calls that never got a PostToolUse", async () => {
    await fillToCap();
    await hookEvent(home.dir, fixture('stop', { session_id: 'S', background_tasks: [] }), T0 + 1000);
    expect(await inFlight(T0 + 1000)).toEqual([]);
  });

  it('TTL: a reservation nobody releases expires after agent.subagent_timeout_secs', async () => {
    writeConfig(home.dir, { 'agent.subagent_timeout_secs': 600 });
    await fillToCap('S', T0);
    expect(decisionOf(await hookEvent(home.dir, pre('late'), T0 + 599_999))?.decision).toBe('deny');
    expect(decisionOf(await hookEvent(home.dir, pre('late'), T0 + 600_000))).toBeUndefined();
    expect(await inFlight(T0 + 600_000)).toEqual(['late']);
  });
});

describe('crew hook claude: config', () => {
  it('reads hooks.claude.max_in_flight from $CREW_HOME/config.json', async () => {
    writeConfig(home.dir, { 'hooks.claude.max_in_flight': 2, 'agent.max_subagents': 8 });
    await hookEvent(home.dir, pre('a'), T0);
    await hookEvent(home.dir, pre('b'), T0);
    expect(decisionOf(await hookEvent(home.dir, pre('c'), T0))?.reason).toMatch(/^cap 2\/2 /);
  });

  it('follows an edit of config.json on the next call', async () => {
    writeConfig(home.dir, { 'hooks.claude.max_in_flight': 1 });
    await hookEvent(home.dir, pre('a'), T0);
    expect(decisionOf(await hookEvent(home.dir, pre('b'), T0))?.decision).toBe('deny');
    writeConfig(home.dir, { 'hooks.claude.max_in_flight': 2 });
    expect(decisionOf(await hookEvent(home.dir, pre('b'), T0))).toBeUndefined();
  });

  it('warns about a bad value on every call and keeps the default', async () => {
    writeConfig(home.dir, { 'hooks.claude.max_in_flight': 0, 'hooks.claude.scope': 'galaxy' });
    for (let i = 0; i < 2; i++) {
      const run = await hookEvent(home.dir, pre(`t${i}`), T0);
      expect(run.code).toBe(0);
      expect(run.stderr).toMatch(/hooks\.claude\.max_in_flight.*using 5/);
      expect(run.stderr).toMatch(/hooks\.claude\.scope.*using "session"/);
    }
    const list = await listClaudeInFlight(home.dir, T0);
    expect([list.max_in_flight, list.scope]).toEqual([5, 'session']);
  });

  it('an unreadable config.json still caps at the defaults, with a warning', async () => {
    writeFileSync(join(home.dir, 'config.json'), '{ not json');
    await fillToCap();
    const run = await hookEvent(home.dir, pre('sixth'), T0);
    expect(decisionOf(run)?.decision).toBe('deny');
    expect(run.stderr).toMatch(/config\.json is not valid JSON/);
  });
});

describe('crew hook claude: broken input never blocks', () => {
  it.each([
    ['empty stdin', ''],
    ['invalid JSON', '{"hook_event_name": "PreToolUse", '],
    [
      'no session_id',
      JSON.stringify({ hook_event_name: 'PreToolUse', tool_name: 'Agent', tool_use_id: 't' }),
    ],
    [
      'no tool_use_id',
      JSON.stringify({ session_id: 'S', hook_event_name: 'PreToolUse', tool_name: 'Agent' }),
    ],
    ['no hook_event_name', JSON.stringify({ session_id: 'S', tool_name: 'Agent', tool_use_id: 't' })],
  ])('%s: allowed, warned on stderr, exit 0, nothing counted', async (_name, text) => {
    await fillToCap();
    const run = await hookEvent(home.dir, text, T0);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^crew hook: warning: .*allowing without counting\n$/);
    expect(await inFlight()).toHaveLength(5);
  });

  it('an unusable CREW_HOME allows with a warning', async () => {
    const notADir = join(home.dir, 'file');
    writeFileSync(notADir, 'x');
    const run = await hookEvent(notADir, pre('t'), T0);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/width ledger unavailable .*allowing without counting/);
  });

  it('does not create crew.db for an event it ignores', async () => {
    await hookEvent(home.dir, fixture('pre-tool-use-other-tool'), T0);
    expect(existsSync(join(home.dir, 'crew.db'))).toBe(false);
  });
});

describe('crew hook: arguments', () => {
  it.each([[[]], [['claude', 'extra']], [['install']], [['install', 'codex']], [['bogus']]])(
    '%j is a usage error (exit 2)',
    async (args) => {
      const run = await runHookInProcess(args, '', { env: { CREW_HOME: home.dir } });
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/usage:/);
    },
  );

  it('--help prints usage and exits 0', async () => {
    const run = await runHookInProcess(['--help'], '', { env: {} });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/crew hook install claude \[--project \| --user\]/);
    expect(run.stdout).toContain(`default "${CREW_HOOK_COMMAND}"`);
  });
});
