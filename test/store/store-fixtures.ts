import type { Conversation } from '../../src/core/scheduler-types.js';
import type { EndedRun, ParentKey, Run, RunId, RunSpec, TerminalStatus } from '../../src/core/types.js';
import type { OutboxEvent, RunRecord, Store, StoreTx } from '../../src/store/store.js';

/** Run records, specs and events for the store tests, built the way the scheduler and gateway build them. */

export interface RunFields {
  parent?: ParentKey;
  seq?: number;
  batchId?: string;
  createdAt?: number;
}

function base(id: RunId, fields: RunFields) {
  return {
    id,
    parent: fields.parent ?? 'mcp:a',
    agent: 'sim',
    depth: 1,
    rootId: id,
    keep: false,
    createdAt: fields.createdAt ?? 1000,
    seq: fields.seq ?? 0,
    ...(fields.batchId !== undefined ? { batchId: fields.batchId } : {}),
  };
}

export function queued(id: RunId, fields: RunFields = {}): Run {
  return { ...base(id, fields), status: 'queued' };
}

/** Holding a permit; `launchedAt` set once the runner was asked to start it. */
export function starting(id: RunId, fields: RunFields = {}, launchedAt?: number): Run {
  return { ...base(id, fields), status: 'starting', ...(launchedAt !== undefined ? { launchedAt } : {}) };
}

export function running(id: RunId, fields: RunFields = {}): Run {
  return { ...base(id, fields), status: 'running', launchedAt: 1100, startedAt: 1200 };
}

export function ended(
  id: RunId,
  status: TerminalStatus = 'completed',
  fields: RunFields = {},
  extra: Partial<Pick<EndedRun, 'stop' | 'error' | 'launchedAt' | 'startedAt'>> = {},
): Run {
  return { ...base(id, fields), status, endedAt: 2000, ...extra };
}

export function spec(task = 'do the thing'): RunSpec {
  return { task, agent: 'sim', cwd: '/work', maxTurns: 10, keep: false };
}

export function event(id: string, runIds: RunId[], fields: Partial<OutboxEvent> = {}): OutboxEvent {
  return {
    id,
    parent: 'mcp:a',
    kind: runIds.length > 1 ? 'digest' : 'completion',
    runIds,
    createdAt: 3000,
    state: 'pending',
    attempts: 0,
    ...fields,
  };
}

export function conversation(id: string, fields: Partial<Conversation> = {}): Conversation {
  return { id, agent: 'sim', parent: 'mcp:a', latestRunId: 'r1', state: 'busy', lastUsedAt: 1000, ...fields };
}

/** Admits runs (with specs) in one transaction. */
export function admit(store: Store, runs: Run[], epoch = 1): void {
  store.apply({ epoch, newRuns: runs.map((run) => ({ run, spec: spec(`task of ${run.id}`) })) });
}

/** Applies `tx` with `epoch` defaulted to 1. */
export function write(store: Store, tx: Partial<StoreTx>): void {
  store.apply({ epoch: 1, ...tx });
}

/** Everything a caller can observe through the port, for comparing two stores or a store over time. */
export interface StoreSnapshot {
  runs: RunRecord[];
  outbox: OutboxEvent[];
  restart: ReturnType<Store['restartState']>;
}

export function snapshot(store: Store): StoreSnapshot {
  return { runs: store.runs(), outbox: store.outbox({}), restart: store.restartState() };
}

export function ids(records: RunRecord[]): RunId[] {
  return records.map((r) => r.run.id);
}
