import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Conversation } from '../../src/core/scheduler-types.js';
import { type Run, type RunSpec, TERMINAL_STATUSES } from '../../src/core/types.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import type { OutboxEvent, RunInfoUpdate, Store, StoreTx } from '../../src/store/store.js';
import { numRuns } from '../helpers/fc-runs.js';

/**
 * Property: any sequence of transactions (valid or not), epochs and reopens leaves the SQLite store
 * observably equal to the memory store, the reference. Ids come from small pools so that duplicates,
 * updates of unknown runs, settles of settled events and stale epochs all happen often.
 */

const RUN_IDS = ['r0', 'r1', 'r2', 'r3', 'r4', 'r5'];
const PARENTS = ['mcp:a', 'mcp:b', 'run:r0'];
const EVENT_IDS = ['e0', 'e1', 'e2', 'e3'];
const CONVERSATION_IDS = ['c0', 'c1'];
const SHAPES = ['queued', 'starting', 'launched', 'running', ...TERMINAL_STATUSES] as const;

const runId = fc.constantFrom(...RUN_IDS);
const parent = fc.constantFrom(...PARENTS);
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });

const runArb: fc.Arbitrary<Run> = fc
  .record({
    id: runId,
    parent,
    batchId: maybe(fc.constantFrom('b0', 'b1')),
    seq: fc.nat(30),
    createdAt: fc.nat(10_000),
    shape: fc.constantFrom(...SHAPES),
    launchedAt: maybe(fc.nat(10_000)),
    error: maybe(fc.constantFrom('boom', 'could not start: ENOENT')),
  })
  .map(({ id, parent, batchId, seq, createdAt, shape, launchedAt, error }): Run => {
    const base = {
      id,
      parent,
      agent: 'sim',
      depth: parent.startsWith('run:') ? 2 : 1,
      rootId: id,
      keep: false,
      createdAt,
      seq,
      ...(batchId !== undefined ? { batchId } : {}),
    };
    switch (shape) {
      case 'queued':
        return { ...base, status: 'queued' };
      case 'starting':
        return { ...base, status: 'starting' };
      case 'launched':
        return { ...base, status: 'starting', launchedAt: launchedAt ?? 1 };
      case 'running':
        return { ...base, status: 'running', launchedAt: launchedAt ?? 1, startedAt: createdAt + 1 };
      default:
        return {
          ...base,
          status: shape,
          endedAt: createdAt + 2,
          ...(launchedAt !== undefined ? { launchedAt } : {}),
          ...(error !== undefined ? { error } : {}),
        };
    }
  });

const specArb: fc.Arbitrary<RunSpec> = fc
  .record({ task: fc.string({ maxLength: 40 }), cwd: maybe(fc.constant('/work')), keep: maybe(fc.boolean()) })
  .map(({ task, cwd, keep }) => ({
    task,
    agent: 'sim',
    ...(cwd !== undefined ? { cwd } : {}),
    ...(keep !== undefined ? { keep } : {}),
  }));

const eventArb: fc.Arbitrary<OutboxEvent> = fc
  .record({
    id: fc.constantFrom(...EVENT_IDS),
    parent,
    runIds: fc.subarray(RUN_IDS, { minLength: 1, maxLength: 3 }),
    batchId: maybe(fc.constantFrom('b0', 'b1')),
    createdAt: fc.nat(10_000),
    state: fc.constantFrom('pending', 'pending', 'pending', 'delivered', 'undeliverable'),
    attempts: fc.nat(2),
  })
  .map(
    ({ batchId, runIds, ...rest }): OutboxEvent => ({
      ...rest,
      runIds,
      kind: runIds.length > 1 ? 'digest' : 'completion',
      ...(batchId !== undefined ? { batchId } : {}),
      ...(rest.state !== 'pending' ? { settledAt: rest.createdAt + 5 } : {}),
    }),
  );

const conversationArb: fc.Arbitrary<Conversation> = fc
  .record({
    id: fc.constantFrom(...CONVERSATION_IDS),
    parent,
    latestRunId: runId,
    state: fc.constantFrom('busy', 'idle', 'released'),
    lastUsedAt: fc.nat(10_000),
  })
  .map((c) => ({ ...c, agent: 'sim', ...(c.state === 'released' ? { releasedReason: 'expired' } : {}) }));

const infoArb: fc.Arbitrary<RunInfoUpdate> = fc
  .record({
    id: runId,
    pid: maybe(fc.integer({ min: 1, max: 99_999 })),
    startTime: maybe(fc.nat(1_000_000)),
    resultPath: maybe(fc.constant('/crew/result.txt')),
    resultChars: maybe(fc.nat(10_000)),
    peakMemGb: maybe(fc.double({ min: 0.01, max: 64, noNaN: true })),
    prunedAt: maybe(fc.nat(10_000)),
  })
  .map((info) => {
    const out: RunInfoUpdate = { id: info.id };
    if (info.pid !== undefined) out.pid = info.pid;
    if (info.startTime !== undefined) out.startTime = info.startTime;
    if (info.resultPath !== undefined) out.resultPath = info.resultPath;
    if (info.resultChars !== undefined) out.resultChars = info.resultChars;
    if (info.peakMemGb !== undefined) out.peakMemGb = info.peakMemGb;
    if (info.prunedAt !== undefined) out.prunedAt = info.prunedAt;
    return out;
  });

const txArb: fc.Arbitrary<StoreTx> = fc.record(
  {
    epoch: fc.integer({ min: 1, max: 3 }),
    newRuns: fc.array(fc.record({ run: runArb, spec: specArb }), { maxLength: 3 }),
    runs: fc.array(runArb, { maxLength: 3 }),
    claim: fc.array(runId, { maxLength: 2 }),
    conversations: fc.array(conversationArb, { maxLength: 2 }),
    outbox: fc.array(eventArb, { maxLength: 2 }),
    settle: fc.array(
      fc.record({
        eventId: fc.constantFrom(...EVENT_IDS),
        state: fc.constantFrom('delivered' as const, 'undeliverable' as const),
        at: fc.nat(10_000),
      }),
      { maxLength: 2 },
    ),
    attempts: fc.array(fc.record({ eventId: fc.constantFrom(...EVENT_IDS) }), { maxLength: 2 }),
    runInfo: fc.array(infoArb, { maxLength: 2 }),
  },
  { requiredKeys: ['epoch'] },
);

type Op = { type: 'apply'; tx: StoreTx } | { type: 'epoch' } | { type: 'reopen' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 10, arbitrary: txArb.map((tx): Op => ({ type: 'apply', tx })) },
  { weight: 1, arbitrary: fc.constant<Op>({ type: 'epoch' }) },
  { weight: 1, arbitrary: fc.constant<Op>({ type: 'reopen' }) },
);

/** Everything a caller can read, through a spread of queries. */
function observe(store: Store) {
  return {
    runs: store.runs(),
    each: RUN_IDS.map((id) => store.run(id)),
    byParents: store.runs({ parents: ['mcp:a', 'run:r0'] }),
    liveLimited: store.runs({ live: true, limit: 2 }),
    endedByIds: store.runs({ ids: ['r1', 'r3', 'r4'], live: false }),
    oneParent: store.runs({ parents: ['mcp:b'], limit: 1 }),
    outbox: store.outbox({}),
    pending: store.outbox({ state: 'pending' }),
    pendingOfA: store.outbox({ state: 'pending', parent: 'mcp:a', limit: 1 }),
    events: EVENT_IDS.map((id) => store.outboxEvent(id)),
    restart: store.restartState(),
  };
}

/** The error message of `fn`, or undefined when it did not throw. */
function thrown(fn: () => void): string | undefined {
  try {
    fn();
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

describe('SqliteStore against MemoryStore', () => {
  let dir: string;
  let files = 0;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'crew-store-prop-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('stays observably equal over random histories', () => {
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 1, maxLength: 25 }), (ops) => {
        const path = join(dir, `crew-${files++}.db`);
        const memory = new MemoryStore();
        let sqlite = new SqliteStore(path);
        try {
          for (const op of ops) {
            if (op.type === 'apply') {
              expect(thrown(() => sqlite.apply(op.tx))).toBe(thrown(() => memory.apply(op.tx)));
            } else if (op.type === 'epoch') {
              expect(sqlite.nextEpoch()).toBe(memory.nextEpoch());
            } else {
              sqlite.close();
              sqlite = new SqliteStore(path);
            }
            expect(observe(sqlite)).toStrictEqual(observe(memory));
          }
        } finally {
          sqlite.close();
          memory.close();
        }
      }),
      { numRuns: numRuns(200) },
    );
  });
});
