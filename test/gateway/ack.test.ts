import { describe, expect, it } from 'vitest';
import { fakeWorld } from '../helpers/fake-gateway.js';

const op = { kind: 'operator' } as const;

describe('acknowledging a completion event (dashboard, Slack)', () => {
  it('acks a run’s event once; a repeat answers the first time; acked_at shows on the run', async () => {
    const { gateway, clock } = fakeWorld();
    const r = gateway.spawn('cli:log', { task: 'sleep=10 a' });
    if (!r.ok) throw new Error('refused');
    const id = r.runs[0]!.id;
    const early = gateway.ack(id, op);
    expect(!early.ok && early.refusal.code).toBe('not_running');
    await clock.advance(50);
    const first = gateway.ack(id, op);
    expect(first.ok).toBe(true);
    await clock.advance(5000);
    const again = gateway.ack(id, op);
    expect(again).toEqual(first);
    expect(gateway.list(op).runs[0]?.acked_at).toBe(first.ok ? first.acked_at : undefined);
    await gateway.close();
  });

  it('acking any member of a wave acks its one digest, and every member shows it; a restart keeps it', async () => {
    const world = fakeWorld();
    const wave = world.gateway.spawn('cli:log', { tasks: ['sleep=10 a', 'sleep=20 b', 'sleep=30 c'] });
    if (!wave.ok) throw new Error('refused');
    await world.clock.advance(100);
    const acked = world.gateway.ack(wave.runs[2]!.id, op);
    expect(acked.ok).toBe(true);
    expect(world.gateway.list(op).runs.every((run) => run.acked_at !== undefined)).toBe(true);
    await world.gateway.close();
    const next = fakeWorld({ store: world.store });
    expect(next.gateway.ack(wave.runs[0]!.id, op)).toEqual(acked);
    await next.gateway.close();
  });

  it('a parent acks only what it may see', async () => {
    const { gateway, clock } = fakeWorld();
    const r = gateway.spawn('mcp:a', { task: 'sleep=10 a' });
    if (!r.ok) throw new Error('refused');
    await clock.advance(50);
    const other = gateway.ack(r.runs[0]!.id, { kind: 'parent', parent: 'mcp:b' });
    expect(!other.ok && other.refusal.code).toBe('not_found');
    await gateway.close();
  });
});
