import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Conversation } from '../../src/core/scheduler-types.js';
import { type Run, type RunSpec, TERMINAL_STATUSES } from '../../src/core/types.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import type { HistoryPrune, OutboxEvent, RunInfoUpdate, Store, StoreTx } from '../../src/store/store.js';
import { numRuns } from '../helpers/fc-runs.js';
import { event } from './store-fixtures.js';

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
    // A few shared times, so cut-offs fall on them exactly as often as between them.
    createdAt: fc.oneof(fc.constantFrom(100, 500, 1000), fc.nat(10_000)),
    shape: fc.constantFrom(...SHAPES),
    launchedAt: maybe(fc.nat(10_000)),
    error: maybe(fc.constantFrom('boom', 'could not start: ENOENT')),
    keep: fc.boolean(),
    conversationId: maybe(fc.constantFrom(...CONVERSATION_IDS)),
    commandId: maybe(fc.constantFrom('k0', 'k1')),
  })
  .map(
    ({
      id,
      parent,
      batchId,
      seq,
      createdAt,
      shape,
      launchedAt,
      error,
      keep,
      conversationId,
      commandId,
    }): Run => {
      const base = {
        id,
        parent,
        agent: 'sim',
        depth: parent.startsWith('run:') ? 2 : 1,
        rootId: id,
        keep,
        createdAt,
        seq,
        ...(batchId !== undefined ? { batchId } : {}),
        ...(conversationId !== undefined ? { conversationId } : {}),
        ...(commandId !== undefined ? { commandId } : {}),
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
    },
  );

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
    errorKind: maybe(fc.constantFrom('provider_rate_limited' as const, 'agent_exited' as const)),
    usageTokens: maybe(fc.nat(1_000_000)),
  })
  .map((info) => {
    const out: RunInfoUpdate = { id: info.id };
    if (info.pid !== undefined) out.pid = info.pid;
    if (info.startTime !== undefined) out.startTime = info.startTime;
    if (info.resultPath !== undefined) out.resultPath = info.resultPath;
    if (info.resultChars !== undefined) out.resultChars = info.resultChars;
    if (info.peakMemGb !== undefined) out.peakMemGb = info.peakMemGb;
    if (info.prunedAt !== undefined) out.prunedAt = info.prunedAt;
    if (info.errorKind !== undefined) out.errorKind = info.errorKind;
    if (info.usageTokens !== undefined) out.usageTokens = info.usageTokens;
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
    acks: fc.array(fc.record({ eventId: fc.constantFrom(...EVENT_IDS), at: fc.nat(10_000) }), {
      maxLength: 1,
    }),
    runInfo: fc.array(infoArb, { maxLength: 2 }),
  },
  { requiredKeys: ['epoch'] },
);

type Op =
  | { type: 'apply'; tx: StoreTx }
  | { type: 'epoch' }
  | { type: 'reopen' }
  | { type: 'prune'; options: HistoryPrune }
  /** Settles every pending event (as the relay eventually does), so history becomes prunable. */
  | { type: 'settleAll'; at: number };

const pruneArb: fc.Arbitrary<HistoryPrune> = fc.record({
  admittedBefore: fc.oneof(fc.constantFrom(0, 100, 500, 1000, 10_001), fc.nat(10_000)),
  keepRuns: fc.nat(6),
  limit: fc.integer({ min: 1, max: 6 }),
  protect: fc.subarray([...CONVERSATION_IDS, ...RUN_IDS], { maxLength: 2 }),
});

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 10, arbitrary: txArb.map((tx): Op => ({ type: 'apply', tx })) },
  { weight: 2, arbitrary: pruneArb.map((options): Op => ({ type: 'prune', options })) },
  { weight: 2, arbitrary: fc.nat(10_000).map((at): Op => ({ type: 'settleAll', at })) },
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
    conversations: [...CONVERSATION_IDS, ...RUN_IDS].map((id) => store.conversation(id)),
    byCommand: store.runs({ commandId: 'k0' }),
    unpruned: store.unprunedSettled(0, 1_000_000).runs,
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
            } else if (op.type === 'settleAll') {
              const tx: StoreTx = {
                epoch: 1,
                settle: memory.outbox({ state: 'pending' }).map((e) => ({
                  eventId: e.id,
                  state: 'delivered' as const,
                  at: op.at,
                })),
              };
              expect(thrown(() => sqlite.apply(tx))).toBe(thrown(() => memory.apply(tx)));
            } else if (op.type === 'prune') {
              expect(sqlite.pruneHistory(op.options)).toStrictEqual(memory.pruneHistory(op.options));
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

  it('prunes history the same way over random histories of ended, settled, kept and live runs', () => {
    const history = fc.record({
      runs: fc.array(
        fc.record({
          shape: fc.constantFrom('queued', 'running', 'completed', 'failed', 'lost'),
          createdAt: fc.constantFrom(100, 200, 300, 400),
          keep: fc.boolean(),
          conversation: maybe(fc.constantFrom('c0', 'c1')),
          settled: fc.constantFrom(0, 1, 1, 2),
        }),
        { minLength: 1, maxLength: 12 },
      ),
      released: fc.subarray(['c0', 'c1']),
      prunes: fc.array(pruneArb, { minLength: 1, maxLength: 4 }),
    });
    fc.assert(
      fc.property(history, ({ runs, released, prunes }) => {
        const path = join(dir, `crew-${files++}.db`);
        const memory = new MemoryStore();
        const sqlite = new SqliteStore(path);
        try {
          const both = (tx: StoreTx) => {
            memory.apply(tx);
            sqlite.apply(tx);
          };
          runs.forEach((r, i) => {
            const id = `h${i}`;
            const base = { id, parent: 'mcp:a', agent: 'sim', depth: 1, rootId: id, keep: r.keep, seq: i };
            const fields = {
              createdAt: r.createdAt,
              ...(r.conversation ? { conversationId: r.conversation } : {}),
            };
            const run: Run =
              r.shape === 'queued'
                ? { ...base, ...fields, status: 'queued' }
                : r.shape === 'running'
                  ? { ...base, ...fields, status: 'running', launchedAt: 1, startedAt: 2 }
                  : { ...base, ...fields, status: r.shape, endedAt: r.createdAt + 1 };
            // settled: 0 = its event pending, 1 = delivered, 2 = a second, pending event names it first.
            const events = [event(`ev${i}`, [id]), ...(r.settled === 2 ? [event(`ew${i}`, [id])] : [])];
            both({
              epoch: 1,
              newRuns: [{ run, spec: { task: 't', agent: 'sim' } }],
              outbox: events,
              ...(r.settled > 0
                ? { settle: [{ eventId: `ev${i}`, state: 'delivered' as const, at: 500 + i }] }
                : {}),
            });
          });
          both({
            epoch: 1,
            conversations: ['c0', 'c1', 'h0', 'h1'].map((id) => ({
              id,
              agent: 'sim',
              parent: 'mcp:a',
              latestRunId: 'h0',
              state: released.includes(id) ? ('released' as const) : ('idle' as const),
              lastUsedAt: 1,
            })),
          });
          for (const options of prunes) {
            expect(sqlite.pruneHistory(options)).toStrictEqual(memory.pruneHistory(options));
            expect(observe(sqlite)).toStrictEqual(observe(memory));
            expect(sqlite.runs().map((r) => r.run.id)).toStrictEqual(memory.runs().map((r) => r.run.id));
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
