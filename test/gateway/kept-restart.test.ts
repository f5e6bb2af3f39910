import { describe, expect, it } from 'vitest';
import type { KeptSession } from '../../src/core/scheduler-types.js';
import type { RunRequest } from '../../src/runners/runner.js';
import type { Store } from '../../src/store/store.js';
import { fakeWorld, planFromTask } from '../helpers/fake-gateway.js';

/**
 * Kept conversations across a restart, through the gateway on the fake clock (issue 29): the runner's
 * reported session comes back to it on the next turn after a restart, and restored conversations stay
 * bounded by `agent.keep_ttl_secs` (counted from their last turn) and `agent.max_kept_conversations`.
 */

const loadable = (request: RunRequest): KeptSession => ({
  id: `s-${request.runId}`,
  cwd: '/tmp',
  loadable: true,
});

function world(store?: Store, extra: Record<string, unknown> = {}) {
  return fakeWorld({
    cap: 5,
    'agent.keep_ttl_secs': 3600,
    'agent.max_kept_conversations': 2,
    ...(store ? { store } : {}),
    plan: (request) => ({ ...planFromTask(request), ...(request.keep && { session: loadable(request) }) }),
    ...extra,
  });
}

async function keptConversations(n: number) {
  const first = world();
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = first.gateway.spawn('mcp:p', { task: `sleep=10 conv ${i}`, keep: true });
    if (!r.ok) throw new Error('refused');
    ids.push(r.runs[0]!.id);
    await first.clock.advance(1000);
  }
  await first.gateway.waitForEvents('mcp:p', 0);
  await first.gateway.close();
  return { store: first.store, ids };
}

describe('kept conversations across a gateway restart (issue 29)', () => {
  it('the next turn after the restart carries the recorded session to the runner, and the conversation stays kept', async () => {
    const { store, ids } = await keptConversations(1);
    const second = world(store);
    const r = second.gateway.continue('mcp:p', { conversation: ids[0], task: 'sleep=10 again' });
    expect(r.ok).toBe(true);
    await second.clock.advance(100);
    const request = second.runner.started.at(-1);
    expect(request).toMatchObject({
      continueFrom: ids[0],
      resumeSession: { id: `s-${ids[0]}`, loadable: true },
    });
    await second.gateway.waitForEvents('mcp:p', 0);
    expect(second.gateway.continue('mcp:p', { conversation: ids[0], task: 'sleep=10 third' }).ok).toBe(true);
    await second.gateway.close();
  });

  it('restored conversations are bounded: beyond max_kept_conversations the least recently used goes, the rest at keep_ttl', async () => {
    const { store, ids } = await keptConversations(3);
    const second = world(store);
    await second.clock.advance(60_000); // one reaper pass: three idle, max two → the oldest is evicted
    expect(second.runner.released).toEqual([ids[0]]);
    const evicted = second.gateway.continue('mcp:p', { conversation: ids[0], task: 'x' });
    expect(!evicted.ok && evicted.refusal.code).toBe('conversation_released');
    expect(second.gateway.continue('mcp:p', { conversation: ids[1], task: 'sleep=10 y' }).ok).toBe(true);
    await second.gateway.waitForEvents('mcp:p', 0);
    await second.clock.advance(3_600_000); // both past the TTL
    const expired = second.gateway.continue('mcp:p', { conversation: ids[2], task: 'x' });
    expect(!expired.ok && expired.refusal.code).toBe('conversation_released');
    expect(!expired.ok && expired.refusal.message).toMatch(/expired/);
    await second.gateway.close();
  });
});
