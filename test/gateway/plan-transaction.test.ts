import { describe, expect, it } from 'vitest';
import type { SchedulerCommand } from '../../src/core/scheduler-types.js';
import type { Run } from '../../src/core/types.js';
import { isEmptyTx, planTransaction } from '../../src/gateway/plan-transaction.js';

const run = (id: string, status: Run['status'], extra: Partial<Run> = {}): Run =>
  ({
    id,
    status,
    parent: 'mcp:p',
    agent: 'sim',
    depth: 1,
    rootId: id,
    keep: false,
    createdAt: 0,
    seq: 0,
    ...(status === 'completed' ? { endedAt: 5 } : {}),
    ...extra,
  }) as Run;

let n = 0;
const input = { epoch: 7, now: 100, eventId: () => `e${n++}` };

describe('planTransaction: one step’s commands → one store transaction', () => {
  it('writes a newly admitted run once with its spec, and its later records of the same step as updates', () => {
    const spec = { task: 't', agent: 'sim' };
    const commands: SchedulerCommand[] = [
      { type: 'persist', run: run('a', 'queued') },
      { type: 'persist', run: run('a', 'starting') },
      { type: 'persist', run: run('b', 'running') },
      { type: 'launch', runId: 'a' },
    ];
    const plan = planTransaction(commands, { ...input, newSpecs: new Map([['a', spec]]) });
    expect(plan.tx.newRuns).toEqual([{ run: run('a', 'queued'), spec }]);
    expect(plan.tx.runs?.map((r) => [r.id, r.status])).toEqual([
      ['a', 'starting'],
      ['b', 'running'],
    ]);
    expect(plan.tx.epoch).toBe(7);
    expect(plan.effects).toEqual([{ type: 'launch', runId: 'a' }]);
  });

  it('puts a terminal record and its completion event in the same transaction', () => {
    n = 0;
    const plan = planTransaction(
      [
        { type: 'persist', run: run('a', 'completed') },
        { type: 'announce', announcement: { kind: 'completion', runId: 'a', parent: 'mcp:p' } },
        {
          type: 'announce',
          announcement: { kind: 'digest', batchId: 'w1', parent: 'mcp:q', runIds: ['x', 'y'] },
        },
      ],
      input,
    );
    expect(plan.tx.runs?.[0]?.status).toBe('completed');
    expect(plan.tx.outbox).toEqual([
      {
        id: 'e0',
        parent: 'mcp:p',
        kind: 'completion',
        runIds: ['a'],
        createdAt: 100,
        state: 'pending',
        attempts: 0,
      },
      {
        id: 'e1',
        parent: 'mcp:q',
        kind: 'digest',
        runIds: ['x', 'y'],
        batchId: 'w1',
        createdAt: 100,
        state: 'pending',
        attempts: 0,
      },
    ]);
    expect(plan.announced).toBe(plan.tx.outbox);
  });

  it('folds the runner’s facts (pid, result) and a restart’s claim into the same transaction', () => {
    const plan = planTransaction([{ type: 'persist', run: run('a', 'running') }], {
      ...input,
      runInfo: [{ id: 'a', pid: 42, startTime: 9 }],
      claim: ['old'],
    });
    expect(plan.tx.runInfo).toEqual([{ id: 'a', pid: 42, startTime: 9 }]);
    expect(plan.tx.claim).toEqual(['old']);
  });

  it('separates SEL writes and effects from what the store keeps, in order', () => {
    const plan = planTransaction(
      [
        { type: 'sel', outcome: 'admitted', metadata: { runs: 1 } },
        { type: 'stop', runId: 'a', reason: 'turn_limit' },
        { type: 'steer', runId: 'b', message: 'm', mode: 'follow_up' },
        { type: 'release_session', conversationId: 'c', agent: 'sim' },
        {
          type: 'persist_conversation',
          conversation: {
            id: 'c',
            agent: 'sim',
            parent: 'mcp:p',
            latestRunId: 'a',
            state: 'released',
            lastUsedAt: 1,
          },
        },
      ],
      input,
    );
    expect(plan.sel).toEqual([{ type: 'sel', outcome: 'admitted', metadata: { runs: 1 } }]);
    expect(plan.effects.map((e) => e.type)).toEqual(['stop', 'steer', 'release_session']);
    expect(plan.tx.conversations).toHaveLength(1);
    expect(plan.tx.runs).toBeUndefined();
  });

  it('a step with nothing to record plans an empty transaction (no commit)', () => {
    expect(isEmptyTx(planTransaction([], input).tx)).toBe(true);
    expect(isEmptyTx(planTransaction([{ type: 'launch', runId: 'a' }], input).tx)).toBe(true);
    expect(isEmptyTx(planTransaction([{ type: 'persist', run: run('a', 'running') }], input).tx)).toBe(false);
  });
});
