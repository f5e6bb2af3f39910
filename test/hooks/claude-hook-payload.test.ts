import { describe, expect, it } from 'vitest';
import { parseClaudeHookPayload } from '../../src/hooks/claude-hook-payload.js';
import { fixture, fixtureText } from './hook-harness.js';

const SESSION = '9f1c2a4e-5b6d-4e7f-8a9b-0c1d2e3f4a5b';

function parse(payload: Record<string, unknown>) {
  return parseClaudeHookPayload(JSON.stringify(payload));
}

describe('parseClaudeHookPayload on the documented events', () => {
  it('reads a foreground PreToolUse on Agent', () => {
    expect(parseClaudeHookPayload(fixtureText('pre-tool-use-foreground'))).toEqual({
      ok: true,
      warnings: [],
      event: {
        kind: 'pre_tool_use',
        sessionId: SESSION,
        toolUseId: 'toolu_01FgAbCdEfGhIjKlMnOpQrSt',
        subagentType: 'Explore',
        description: 'Find flaky tests',
        isBackgroundRequested: false,
      },
    });
  });

  it('reads run_in_background on a background PreToolUse', () => {
    const result = parseClaudeHookPayload(fixtureText('pre-tool-use-background'));
    expect(result.ok && result.event.kind === 'pre_tool_use' && result.event.isBackgroundRequested).toBe(
      true,
    );
  });

  it('keeps the calling sub-agent of a call made inside one, under the old tool name Task', () => {
    const result = parseClaudeHookPayload(fixtureText('pre-tool-use-in-subagent'));
    expect(result).toMatchObject({ ok: true, event: { kind: 'pre_tool_use', callerAgentId: 'a7c3e91' } });
  });

  it('reads a foreground PostToolUse as a return, not a launch', () => {
    expect(parseClaudeHookPayload(fixtureText('post-tool-use-foreground'))).toEqual({
      ok: true,
      warnings: [],
      event: {
        kind: 'post_tool_use',
        sessionId: SESSION,
        toolUseId: 'toolu_01FgAbCdEfGhIjKlMnOpQrSt',
        isBackgroundLaunch: false,
      },
    });
  });

  it('reads the agentId of a background launch from tool_response', () => {
    expect(parseClaudeHookPayload(fixtureText('post-tool-use-background'))).toMatchObject({
      ok: true,
      warnings: [],
      event: { kind: 'post_tool_use', isBackgroundLaunch: true, launchedAgentId: 'c92e5b8' },
    });
  });

  it('treats a launch status as background even without run_in_background', () => {
    const payload = fixture('post-tool-use-background');
    payload.tool_input = { description: 'x', prompt: 'y' };
    payload.tool_response = { status: 'async_launched', agentId: 'z1' };
    expect(parse(payload)).toMatchObject({
      ok: true,
      event: { isBackgroundLaunch: true, launchedAgentId: 'z1' },
    });
  });

  it('warns about a launch without an agentId', () => {
    const payload = fixture('post-tool-use-background', { tool_response: { status: 'async_launched' } });
    const result = parse(payload);
    expect(result.ok && result.warnings[0]).toMatch(/no tool_response\.agentId/);
  });

  it('reads PostToolUseFailure', () => {
    expect(parseClaudeHookPayload(fixtureText('post-tool-use-failure'))).toMatchObject({
      ok: true,
      event: { kind: 'post_tool_use_failure', toolUseId: 'toolu_01FgAbCdEfGhIjKlMnOpQrSt' },
    });
  });

  it('reads SubagentStop with the running background task ids', () => {
    const result = parseClaudeHookPayload(fixtureText('subagent-stop'));
    expect(result).toMatchObject({ ok: true, event: { kind: 'subagent_stop', agentId: 'c92e5b8' } });
    if (!result.ok || result.event.kind !== 'subagent_stop') throw new Error('unexpected');
    expect([...(result.event.runningTaskIds ?? [])]).toEqual(['d05a7f3', 'bash_8']);
  });

  it('reads Stop with its background_tasks', () => {
    const result = parseClaudeHookPayload(fixtureText('stop'));
    if (!result.ok || result.event.kind !== 'stop') throw new Error('unexpected');
    expect(result.event.agentId).toBeUndefined();
    expect([...(result.event.runningTaskIds ?? [])]).toEqual(['d05a7f3']);
  });

  it('leaves out tasks whose status says they ended', () => {
    const payload = fixture('stop', {
      background_tasks: [
        { id: 'a', type: 'local_agent', status: 'running', description: '' },
        { id: 'b', type: 'local_agent', status: 'killed', description: '' },
      ],
    });
    const result = parse(payload);
    if (!result.ok || result.event.kind !== 'stop') throw new Error('unexpected');
    expect([...(result.event.runningTaskIds ?? [])]).toEqual(['a']);
  });

  it('tells an absent background_tasks (older Claude Code) from an empty one', () => {
    const { background_tasks: _omit, ...older } = fixture('stop');
    const absent = parse(older);
    const empty = parse(fixture('stop', { background_tasks: [] }));
    if (!absent.ok || absent.event.kind !== 'stop' || !empty.ok || empty.event.kind !== 'stop') {
      throw new Error('unexpected');
    }
    expect(absent.event.runningTaskIds).toBeUndefined();
    expect(empty.event.runningTaskIds?.size).toBe(0);
  });

  it('skips reconciliation when a background_tasks entry is unreadable', () => {
    const result = parse(fixture('stop', { background_tasks: [{ id: 'a' }, { type: 'local_agent' }] }));
    if (!result.ok || result.event.kind !== 'stop') throw new Error('unexpected');
    expect(result.event.runningTaskIds).toBeUndefined();
    expect(result.warnings[0]).toMatch(/skipping reconciliation/);
  });

  it('ignores other tools and other events without touching anything', () => {
    expect(parseClaudeHookPayload(fixtureText('pre-tool-use-other-tool'))).toMatchObject({
      ok: true,
      event: { kind: 'ignored', why: 'tool Bash' },
    });
    expect(parse({ session_id: 's', hook_event_name: 'SessionStart' })).toMatchObject({
      ok: true,
      event: { kind: 'ignored' },
    });
  });
});

describe('parseClaudeHookPayload on broken payloads', () => {
  it.each([
    ['empty stdin', '', /empty stdin/],
    ['whitespace', '  \n', /empty stdin/],
    ['invalid JSON', '{"session_id": ', /not valid JSON/],
    ['a JSON array', '[1,2]', /not an object/],
    ['no event name', '{"session_id":"s"}', /no hook_event_name/],
    ['no session', '{"hook_event_name":"PreToolUse","tool_name":"Agent","tool_use_id":"t"}', /no session_id/],
  ])('%s is a problem, not a throw', (_name, text, problem) => {
    const result = parseClaudeHookPayload(text);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problem).toMatch(problem);
  });

  it('a sub-agent tool event without tool_use_id is a problem', () => {
    const { tool_use_id: _omit, ...payload } = fixture('pre-tool-use-foreground');
    expect(parse(payload)).toEqual({ ok: false, problem: 'PreToolUse payload has no tool_use_id' });
  });

  it('SubagentStop without agent_id is a problem', () => {
    const { agent_id: _omit, ...payload } = fixture('subagent-stop');
    expect(parse(payload)).toEqual({ ok: false, problem: 'SubagentStop payload has no agent_id' });
  });
});
