import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatClaudeInFlight, listClaudeInFlight } from '../../src/hooks/claude-hook-cli.js';
import { fixture, hookEvent, type TempDir, tempDir, writeConfig } from './hook-harness.js';

const T0 = Date.parse('2026-01-15T10:00:00.000Z');

let home: TempDir;

beforeEach(() => {
  home = tempDir();
});

afterEach(() => {
  home.cleanup();
});

describe('listClaudeInFlight (crew list --claude)', () => {
  it('is empty, with the configured cap, and creates no database when the hook never ran', async () => {
    writeConfig(home.dir, { 'hooks.claude.max_in_flight': 3, 'hooks.claude.scope': 'host' });
    const list = await listClaudeInFlight(home.dir, T0);
    expect(list).toEqual({
      ok: true,
      max_in_flight: 3,
      scope: 'host',
      in_flight: 0,
      sessions: [],
      warnings: [],
    });
    expect(existsSync(join(home.dir, 'crew.db'))).toBe(false);
    expect(formatClaudeInFlight(list)).toBe(
      'Claude Code sub-agents in flight: 0 (cap 3 on this host)\n  none\n',
    );
  });

  it('groups sub-agents by session with their mode, agent id and age (JSON shape)', async () => {
    await hookEvent(home.dir, fixture('pre-tool-use-foreground', { session_id: 'A' }), T0);
    await hookEvent(home.dir, fixture('pre-tool-use-background', { session_id: 'A' }), T0 + 1000);
    await hookEvent(home.dir, fixture('post-tool-use-background', { session_id: 'A' }), T0 + 1000);
    await hookEvent(home.dir, fixture('pre-tool-use-in-subagent', { session_id: 'B' }), T0 + 2000);

    const list = await listClaudeInFlight(home.dir, T0 + 62_000);
    expect(list.in_flight).toBe(3);
    expect(list.sessions.map((s) => [s.session_id, s.in_flight])).toEqual([
      ['A', 2],
      ['B', 1],
    ]);
    expect(list.sessions[0]?.agents).toEqual([
      {
        tool_use_id: 'toolu_01FgAbCdEfGhIjKlMnOpQrSt',
        agent_id: null,
        caller_agent_id: null,
        mode: 'foreground',
        subagent_type: 'Explore',
        description: 'Find flaky tests',
        reserved_at: '2026-01-15T10:00:00.000Z',
        age_secs: 62,
        expires_at: '2026-01-15T10:30:00.000Z',
      },
      expect.objectContaining({ agent_id: 'c92e5b8', mode: 'background', age_secs: 61 }),
    ]);
    expect(list.sessions[1]?.agents[0]?.caller_agent_id).toBe('a7c3e91');
  });

  it('prints a table per session', async () => {
    await hookEvent(home.dir, fixture('pre-tool-use-foreground', { session_id: 'A' }), T0);
    const text = formatClaudeInFlight(await listClaudeInFlight(home.dir, T0 + 5000));
    expect(text.split('\n')).toEqual([
      'Claude Code sub-agents in flight: 1 (cap 5 per session)',
      '',
      'session A: 1/5',
      '  MODE        AGENT_ID  TYPE     AGE  DESCRIPTION       TOOL_USE_ID',
      '  foreground  -         Explore  5s   Find flaky tests  toolu_01FgAbCdEfGhIjKlMnOpQrSt',
      '',
    ]);
  });
});
