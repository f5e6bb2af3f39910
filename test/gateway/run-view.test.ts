import { describe, expect, it } from 'vitest';
import type { EndedRun } from '../../src/core/types.js';
import { toRunView } from '../../src/gateway/run-view.js';
import type { RunRecord } from '../../src/store/store.js';

const ended = (status: EndedRun['status']): EndedRun => ({
  id: 'r1',
  parent: 'cli:x',
  agent: 'claude',
  depth: 1,
  rootId: 'r1',
  keep: false,
  createdAt: 0,
  seq: 1,
  status,
  startedAt: 1000,
  endedAt: 3000,
  ...(status === 'failed' && { error: 'session/prompt failed: rate limited (code -32603)' }),
});

const record = (run: EndedRun, extra: Partial<RunRecord> = {}): RunRecord => ({
  run,
  spec: { task: 't', agent: 'claude' },
  delivery: 'pending',
  ...extra,
});

describe('the run shape', () => {
  it("shows error_kind beside the agent's own error, and the usage", () => {
    const view = toRunView(
      record(ended('failed'), { errorKind: 'provider_rate_limited', usageTokens: 1500, usageCostUsd: 0.02 }),
    );
    expect(view).toMatchObject({
      error: 'session/prompt failed: rate limited (code -32603)',
      error_kind: 'provider_rate_limited',
      usage: { tokens: 1500, cost_usd: 0.02 },
    });
  });

  it('says timeout for a timed-out run, and nothing for a completed one', () => {
    expect(toRunView(record(ended('timed_out'))).error_kind).toBe('timeout');
    const done = toRunView(record(ended('completed'), { errorKind: 'provider_error' }));
    expect(done.error_kind).toBeUndefined();
    expect(done.usage).toBeUndefined();
  });
});
