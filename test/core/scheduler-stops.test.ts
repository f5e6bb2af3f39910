import { describe, expect, it } from 'vitest';
import { Scheduler } from '../../src/core/scheduler.js';
import type { SchedulerCommand, SchedulerLimits } from '../../src/core/scheduler-types.js';
import type { Run } from '../../src/core/types.js';

const limits: SchedulerLimits = {
  cap: 3,
  staggerMs: 0,
  maxQueued: 5,
  maxQueuedWaveMembers: 10,
  maxDepth: 2,
  maxChildren: 3,
  timeoutMs: 2000,
};

/** The last record persisted for each run, and every stop asked, from a sequence of steps. */
function world(options: Partial<SchedulerLimits> = {}) {
  const scheduler = new Scheduler({ ...limits, ...options });
  const records = new Map<string, Run>();
  const stops: { runId: string; reason: string }[] = [];
  const step = (event: Parameters<Scheduler['step']>[0], now: number) => {
    const result = scheduler.step(event, now);
    for (const c of result.commands as SchedulerCommand[]) {
      if (c.type === 'persist') records.set(c.run.id, c.run);
      if (c.type === 'stop') stops.push({ runId: c.runId, reason: c.reason });
    }
    return result;
  };
  const spawn = (id: string, now: number, maxTurns?: number) =>
    step(
      {
        type: 'spawn',
        parent: 'mcp:p',
        members: [{ id, agent: 'sim', keep: false, ...(maxTurns !== undefined ? { maxTurns } : {}) }],
      },
      now,
    );
  return { scheduler, records, stops, step, spawn };
}

describe('the turn budget is a core decision', () => {
  it('stops the run at its budget and ends it completed with stop turn_limit', () => {
    const w = world();
    w.spawn('a', 0, 3);
    w.step({ type: 'started', runId: 'a' }, 100);
    for (let i = 0; i < 2; i++) w.step({ type: 'tool_call', runId: 'a' }, 200);
    expect(w.stops).toEqual([]);
    w.step({ type: 'tool_call', runId: 'a' }, 300);
    expect(w.stops).toEqual([{ runId: 'a', reason: 'turn_limit' }]);
    // A fourth call in flight before the stop lands asks for nothing more.
    w.step({ type: 'tool_call', runId: 'a' }, 310);
    expect(w.stops).toHaveLength(1);
    w.step({ type: 'ended', runId: 'a', status: 'cancelled', stop: 'cancelled' }, 400);
    expect(w.records.get('a')).toMatchObject({ status: 'completed', stop: 'turn_limit' });
  });

  it('a timeout that fires after the turn-limit stop does not override it (the first stop wins)', () => {
    const w = world();
    w.spawn('a', 0, 1);
    w.step({ type: 'started', runId: 'a' }, 100);
    w.step({ type: 'tool_call', runId: 'a' }, 500);
    // The runner has not confirmed the stop when the deadline passes.
    w.step({ type: 'tick' }, 5000);
    expect(w.stops).toEqual([{ runId: 'a', reason: 'turn_limit' }]);
    w.step({ type: 'ended', runId: 'a', status: 'cancelled' }, 5100);
    expect(w.records.get('a')).toMatchObject({ status: 'completed', stop: 'turn_limit' });
  });

  it('tool calls after a timeout stop leave it timed_out', () => {
    const w = world();
    w.spawn('a', 0, 1);
    w.step({ type: 'started', runId: 'a' }, 0);
    w.step({ type: 'tick' }, 2000);
    w.step({ type: 'tool_call', runId: 'a' }, 2001);
    expect(w.stops).toEqual([{ runId: 'a', reason: 'timeout' }]);
    w.step({ type: 'ended', runId: 'a', status: 'cancelled' }, 2100);
    expect(w.records.get('a')?.status).toBe('timed_out');
  });

  it('an agent that fails on the way out of a turn-limit stop stays failed, with its error', () => {
    const w = world();
    w.spawn('a', 0, 1);
    w.step({ type: 'started', runId: 'a' }, 0);
    w.step({ type: 'tool_call', runId: 'a' }, 1);
    w.step({ type: 'ended', runId: 'a', status: 'failed', error: 'agent crashed' }, 2);
    expect(w.records.get('a')).toMatchObject({ status: 'failed', error: 'agent crashed' });
  });

  it('a budget of 0 or none never stops the run', () => {
    const w = world();
    w.spawn('a', 0, 0);
    w.spawn('b', 0);
    for (const id of ['a', 'b']) w.step({ type: 'started', runId: id }, 0);
    for (let i = 0; i < 500; i++) {
      w.step({ type: 'tool_call', runId: 'a' }, 1);
      w.step({ type: 'tool_call', runId: 'b' }, 1);
    }
    expect(w.stops).toEqual([]);
  });

  it('the budget survives a restart of a queued run (it is on the record)', () => {
    const w = world({ cap: 1 });
    w.spawn('a', 0);
    w.spawn('b', 0, 2);
    const queued = w.records.get('b') as Run;
    expect(queued).toMatchObject({ status: 'queued', maxTurns: 2 });
    const next = world({ cap: 1 });
    next.step({ type: 'restore', queued: [queued], executing: [], waves: [], nextSeq: 2 }, 10);
    next.step({ type: 'started', runId: 'b' }, 20);
    next.step({ type: 'tool_call', runId: 'b' }, 30);
    next.step({ type: 'tool_call', runId: 'b' }, 40);
    expect(next.stops).toEqual([{ runId: 'b', reason: 'turn_limit' }]);
  });
});

describe('the timeout counts from when the agent is ready', () => {
  it('a slow start does not eat into the run time: the deadline is set at started', () => {
    const w = world();
    w.spawn('a', 0);
    w.step({ type: 'started', runId: 'a' }, 1500);
    w.step({ type: 'tick' }, 2000);
    w.step({ type: 'tick' }, 3499);
    expect(w.stops).toEqual([]);
    expect(w.scheduler.nextWakeAt()).toBe(3500);
    w.step({ type: 'tick' }, 3500);
    expect(w.stops).toEqual([{ runId: 'a', reason: 'timeout' }]);
    w.step({ type: 'ended', runId: 'a', status: 'cancelled' }, 3600);
    const run = w.records.get('a');
    expect(run?.status).toBe('timed_out');
    // duration_secs is ended - started: the same span the timeout counts.
    expect(run && 'startedAt' in run ? run.startedAt : undefined).toBe(1500);
  });

  it('a start that never becomes ready times out after the same span from launch', () => {
    const w = world();
    w.spawn('a', 0);
    w.step({ type: 'tick' }, 1999);
    expect(w.stops).toEqual([]);
    w.step({ type: 'tick' }, 2000);
    expect(w.stops).toEqual([{ runId: 'a', reason: 'timeout' }]);
  });
});

describe('start failures and runs that are not live', () => {
  it('a launch that cannot begin ends failed at once and frees the permit for the queue', () => {
    const w = world({ cap: 1 });
    w.spawn('a', 0);
    w.spawn('b', 0);
    expect(w.records.get('b')?.status).toBe('queued');
    w.step({ type: 'start_failed', runId: 'a', error: 'agent x is no longer configured' }, 5);
    expect(w.records.get('a')).toMatchObject({ status: 'failed', error: 'agent x is no longer configured' });
    expect(w.records.get('b')?.status).toBe('starting');
  });

  it('cancel or steer of a run the store knows as ended answers not_running; of an unknown one not_found', () => {
    const w = world();
    const ended = w.step({ type: 'cancel', runId: 'gone', ended: 'completed' }, 0).reply;
    expect(ended).toMatchObject({ ok: false, refusal: { code: 'not_running' } });
    if (!ended.ok) expect(ended.refusal.message).toMatch(/already ended \(completed\).*spawn_status/);
    const steer = w.step(
      { type: 'steer', runId: 'gone', message: 'x', mode: 'interrupt', ended: 'failed' },
      0,
    );
    expect(steer.reply).toMatchObject({ kind: 'refused', refusal: { code: 'not_running' } });
    expect(w.step({ type: 'cancel', runId: 'never' }, 0).reply).toMatchObject({
      kind: 'refused',
      refusal: { code: 'not_found' },
    });
  });

  it('replies are tagged: admitted (with existing), done, refused', () => {
    const w = world();
    const first = w.step(
      { type: 'spawn', parent: 'mcp:p', commandId: 'c1', members: [{ id: 'a', agent: 'sim', keep: false }] },
      0,
    ).reply;
    expect(first).toMatchObject({ kind: 'admitted', ok: true, existing: false });
    const again = w.step(
      { type: 'spawn', parent: 'mcp:p', commandId: 'c1', members: [{ id: 'z', agent: 'sim', keep: false }] },
      0,
    ).reply;
    expect(again).toMatchObject({ kind: 'admitted', existing: true, runs: [{ id: 'a' }] });
    expect(w.step({ type: 'tick' }, 1).reply).toEqual({ kind: 'done', ok: true });
  });
});
