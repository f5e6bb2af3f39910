import { describe, expect, it } from 'vitest';
import type { AgentDef } from '../../src/core/agent-def.js';
import type { ParentKey, Run, RunId, RunSpec } from '../../src/core/types.js';
import { buildRunRequest } from '../../src/gateway/run-request.js';

const run = {
  id: 'r1' as RunId,
  parent: 'mcp:p' as ParentKey,
  agent: 'a',
  depth: 0,
  rootId: 'r1' as RunId,
  keep: false,
  createdAt: 0,
  seq: 1,
  status: 'starting',
} as Run;
const spec: RunSpec = { task: 'do it', agent: 'a' };

function agentOf(runner: 'acp' | 'command'): AgentDef {
  return runner === 'command'
    ? { name: 'a', runner, command: ['true'], shared: false, skills: [] }
    : { name: 'a', runner, command: ['some-acp-agent'], shared: false, skills: [] };
}

describe('buildRunRequest: the MCP servers a run is handed (issue 32 §4)', () => {
  function build(runner: 'acp' | 'command'): { servers: unknown[]; asked: string[] } {
    const asked: string[] = [];
    const request = buildRunRequest(run, spec, agentOf(runner), {
      sessionSharing: false,
      defaultCwd: '/work',
      mcpServersFor: (runId, cwd) => {
        asked.push(`${runId}@${cwd}`);
        return [{ name: 'crew', url: 'http://127.0.0.1:1/mcp', headers: { Authorization: 'Bearer t' } }];
      },
    });
    return { servers: request.mcpServers, asked };
  }

  it('an ACP agent gets Crew, with a run-scoped token minted for it in its cwd', () => {
    const { servers, asked } = build('acp');
    expect(asked).toEqual(['r1@/work']);
    expect(servers).toHaveLength(1);
  });

  it('a command agent has no MCP client: nothing is minted for it (a token per run, unused)', () => {
    const { servers, asked } = build('command');
    expect(asked).toEqual([]);
    expect(servers).toEqual([]);
  });
});
