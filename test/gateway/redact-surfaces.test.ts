import { describe, expect, it } from 'vitest';
import { SlackFront } from '../../src/slack/slack-front.js';
import { SlackLedger } from '../../src/slack/slack-ledger.js';
import { SlackResults } from '../../src/slack/slack-results.js';
import { RED_TEAM_MASKED } from '../core/red-team-secrets.js';
import { fakeWorld } from '../helpers/fake-gateway.js';
import { MemorySlackApi } from '../slack/memory-slack-api.js';

/** The secrets of a case: what each mask of its expected form stands for in the input. */
function secretsOf(input: string, expected: string): string[] {
  const literals = expected.split(/\[REDACTED:[a-z_]+\]/);
  const secrets: string[] = [];
  let at = literals[0]!.length;
  for (const literal of literals.slice(1)) {
    const end = literal === '' ? input.length : input.indexOf(literal, at + 1);
    secrets.push(input.slice(at, end));
    at = end + literal.length;
  }
  return secrets;
}

describe('every surface that shows a task masks the red-team secrets (issue 28)', () => {
  it('the list, status, SEL and Slack never show one, while the runner gets the task as written', async () => {
    const world = fakeWorld({ cap: 100, 'agent.subagent_max_queued': 500 });
    const api = new MemorySlackApi();
    const ledger = new SlackLedger(':memory:');
    const results = new SlackResults({
      clock: world.clock,
      api,
      ledger,
      sel: world.sel,
      runView: () => undefined,
      ackedAt: () => undefined,
      reannounceMs: 0,
      log: () => {},
    });
    const front = new SlackFront({
      gateway: world.gateway,
      api,
      results,
      isAllowed: (user) => user === 'U1',
      sel: world.sel,
      log: () => {},
    });
    const op = { kind: 'operator' } as const;
    const shown: string[] = [];
    for (const [i, [input]] of RED_TEAM_MASKED.entries()) {
      // Through Slack, as a person types it, and through the gateway as MCP does.
      await front.message({ user: 'U1', text: `spawn hang ${input}`, channel: 'D1', ts: `1.${i}` });
      const admitted = world.gateway.spawn('mcp:p', { task: `hang ${input}` });
      if (!admitted.ok) throw new Error(admitted.refusal.message);
      const id = admitted.runs[0]!.id;
      const status = await world.gateway.status(id, op);
      if (!status.ok) throw new Error(status.refusal.message);
      shown.push(status.run.task_preview);
      await front.message({ user: 'U1', text: `spawn status ${id}`, channel: 'D1', ts: `2.${i}` });
    }
    await world.clock.advance(0);
    await front.message({ user: 'U1', text: 'spawn list', channel: 'D1', ts: '3.0' });
    shown.push(...world.gateway.list(op, 1000).runs.map((r) => r.task_preview));
    const surfaces = [...shown, JSON.stringify(world.sel.records), ...api.messages.map((m) => m.text)].join(
      '\n',
    );
    const prompts = world.runner.started.map((r) => r.prompt).join('\n');
    let secrets = 0;
    for (const [input, expected] of RED_TEAM_MASKED) {
      for (const secret of secretsOf(input, expected)) {
        secrets++;
        expect(prompts, 'the runner gets the real task').toContain(secret);
        expect(surfaces, `${secret} (from ${input})`).not.toContain(secret);
      }
    }
    expect(secrets).toBeGreaterThanOrEqual(RED_TEAM_MASKED.length);
    expect(world.gateway.list(op, 1000).runs.length).toBe(RED_TEAM_MASKED.length * 2);
    await results.close();
    ledger.close();
    await world.gateway.close();
  });
});
