import { describe, expect, it } from 'vitest';
import { fakeWorld } from '../helpers/fake-gateway.js';

const op = { kind: 'operator' } as const;

describe('reaper', () => {
  it('prunes a transcript result_ttl after delivery; status then answers pruned, not not_found', async () => {
    const { gateway, clock, transcripts } = fakeWorld({ 'agent.subagent_result_ttl_secs': 600 });
    const r = gateway.spawn('mcp:p', { task: 'sleep=10 hello' });
    if (!r.ok) throw new Error('refused');
    const id = r.runs[0]!.id;
    await clock.advance(100);
    expect(await gateway.waitForEvents('mcp:p', 0)).toHaveLength(1);
    expect((await gateway.status(id, op)).ok).toBe(true);
    await clock.advance(599_000);
    expect(transcripts.text(id)).toBeDefined();
    await clock.advance(61_000);
    expect(transcripts.text(id)).toBeUndefined();
    const status = await gateway.status(id, op);
    expect(status.ok).toBe(false);
    if (!status.ok) expect(status.refusal.code).toBe('pruned');
    expect(gateway.list(op).runs[0]?.status).toBe('completed');
    await gateway.close();
  });

  it('an undelivered event becomes undeliverable after the delivery timeout: logged and visible, then pruned later', async () => {
    const { gateway, clock, sel } = fakeWorld({ 'agent.subagent_delivery_timeout_secs': 30 });
    const r = gateway.spawn('mcp:gone', { task: 'sleep=10 x' });
    if (!r.ok) throw new Error('refused');
    await clock.advance(29_000);
    expect(gateway.list(op).runs[0]?.delivery).toBe('pending');
    await clock.advance(2_000);
    expect(gateway.list(op).runs[0]?.delivery).toBe('undeliverable');
    expect(sel.records.some((e) => e.outcome === 'undeliverable')).toBe(true);
    expect(await gateway.waitForEvents('mcp:gone', 0)).toEqual([]);
    await gateway.close();
  });

  it('releases idle kept conversations past keep_ttl and the least recently used beyond the maximum, each with a notice', async () => {
    const { gateway, clock, runner } = fakeWorld({
      cap: 5,
      'agent.keep_ttl_secs': 3600,
      'agent.max_kept_conversations': 2,
    });
    const ids: string[] = [];
    for (const n of [1, 2, 3]) {
      const r = gateway.spawn('mcp:p', { task: `sleep=10 conv ${n}`, keep: true });
      if (!r.ok) throw new Error('refused');
      ids.push(r.runs[0]!.id);
      await clock.advance(1000);
    }
    await gateway.waitForEvents('mcp:p', 0);
    await clock.advance(60_000); // one reaper pass: three idle, max two → the oldest is evicted
    expect(runner.released).toEqual([ids[0]]);
    const notices = await gateway.waitForEvents('mcp:p', 0);
    expect(notices.map((e) => e.kind)).toEqual(['notice']);
    expect(notices[0]?.text).toContain(ids[0]);
    await clock.advance(3_600_000); // the other two expire
    expect(runner.released.sort()).toEqual([...ids].sort());
    const r = gateway.continue('mcp:p', { conversation: ids[1], task: 'again' });
    expect(!r.ok && r.refusal.code).toBe('conversation_released');
    await gateway.close();
  });
});

describe('bounded history', () => {
  it('deletes ended, settled runs past the retention with their events and transcripts; live ones and kept conversations stay', async () => {
    const { gateway, clock, store, transcripts } = fakeWorld({
      cap: 5,
      'agent.run_retention_secs': 3600,
      'agent.subagent_result_ttl_secs': 86_400,
      'agent.keep_ttl_secs': 10 * 86_400,
      'agent.subagent_timeout_secs': 86_400,
    });
    const admit = (task: string, extra: Record<string, unknown> = {}) => {
      const r = gateway.spawn('mcp:p', { task, ...extra });
      if (!r.ok) throw new Error(r.refusal.message);
      return r.runs[0]!.id;
    };
    const old = admit('sleep=10 old');
    const kept = admit('sleep=10 kept', { keep: true });
    const live = admit('hang live');
    await clock.advance(100);
    expect(await gateway.waitForEvents('mcp:p', 0)).toHaveLength(2);
    expect(transcripts.text(old)).toBeDefined();
    await clock.advance(3_600_000);
    const young = admit('sleep=10 young');
    await clock.advance(60_000);
    const ids = gateway.list(op).runs.map((r) => r.id);
    expect(ids).not.toContain(old);
    expect(ids).toEqual(expect.arrayContaining([kept, live, young]));
    expect(transcripts.text(old)).toBeUndefined();
    expect(store.outbox({}).some((e) => e.runIds.includes(old))).toBe(false);
    const status = await gateway.status(old, op);
    expect(!status.ok && status.refusal.code).toBe('not_found');
    // The kept conversation goes on: it is continuable, and its run was not deleted.
    expect(gateway.continue('mcp:p', { conversation: kept, task: 'again' }).ok).toBe(true);
    await gateway.close();
  });

  it('bounds the number of runs: beyond agent.run_history_max the oldest ended ones go first', async () => {
    const { gateway, clock } = fakeWorld({
      cap: 50,
      'agent.run_history_max': 100,
      'agent.subagent_max_queued': 500,
    });
    const first: string[] = [];
    for (let i = 0; i < 250; i++) {
      const r = gateway.spawn('mcp:p', { task: `sleep=10 n${i}` });
      if (!r.ok) throw new Error(r.refusal.message);
      if (i < 150) first.push(r.runs[0]!.id);
    }
    for (let i = 0; i < 10; i++) await clock.advance(100);
    await gateway.waitForEvents('mcp:p', 0);
    await clock.advance(60_000);
    const ids = gateway.list(op, 1000).runs.map((r) => r.id);
    expect(ids).toHaveLength(100);
    expect(ids.some((id) => first.includes(id))).toBe(false);
    await gateway.close();
  });
});

describe('restart and kept conversations', () => {
  it('after a restart a kept conversation answers conversation_released (its session died), not not_found', async () => {
    const first = fakeWorld();
    const r = first.gateway.spawn('mcp:p', { task: 'sleep=10 remember', keep: true });
    if (!r.ok) throw new Error('refused');
    await first.clock.advance(50);
    await first.gateway.close();
    const second = fakeWorld({ store: first.store });
    const again = second.gateway.continue('mcp:p', { conversation: r.runs[0]!.id, task: 'more' });
    expect(again.ok).toBe(false);
    if (!again.ok) {
      expect(again.refusal.code).toBe('conversation_released');
      expect(again.refusal.message).toMatch(/restarted/);
    }
    await second.gateway.close();
  });
});
