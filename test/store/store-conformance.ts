import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChatRecord } from '../../src/store/chat-record.js';
import type { Store } from '../../src/store/store.js';
import {
  admit,
  conversation,
  ended,
  event,
  ids,
  queued,
  running,
  type StoreSnapshot,
  snapshot,
  spec,
  starting,
  write,
} from './store-fixtures.js';

/**
 * The contract every Store keeps (DESIGN practice 4: one conformance suite, every adapter). The rules
 * come from `src/store/store.ts`: each `apply` is atomic; a run ends exactly once; a terminal record
 * from a writer whose epoch does not own the run is dropped while the rest of its transaction applies;
 * settling an event sets its runs' delivery; queries order newest first (runs) or in creation order
 * (outbox); `restartState` is what a new gateway recovers from.
 */

export interface StoreSubject {
  store: Store;
  /** Closes the store and opens it again on the same data; only for stores that persist. */
  reopen?: () => Store;
  /** Closes whatever store is open and removes its files. */
  cleanup: () => void;
}

export function storeConformance(name: string, make: () => StoreSubject): void {
  // Whether the store persists decides which tests exist, so ask one throwaway subject up front.
  const probe = make();
  const persists = probe.reopen !== undefined;
  probe.cleanup();

  describe(`Store conformance: ${name}`, () => {
    let subject: StoreSubject;
    let store: Store;

    beforeEach(() => {
      subject = make();
      store = subject.store;
    });
    afterEach(() => subject.cleanup());

    describe('new runs', () => {
      it('records each run with its spec, delivery pending and no epoch while queued', () => {
        admit(store, [queued('r1', { seq: 0 }), queued('r2', { seq: 1, parent: 'mcp:b' })]);
        expect(store.run('r1')).toStrictEqual({
          run: queued('r1', { seq: 0 }),
          spec: spec('task of r1'),
          delivery: 'pending',
        });
        expect(store.run('r2')?.run.parent).toBe('mcp:b');
        expect(store.run('nope')).toBeUndefined();
      });

      it('gives a run recorded launched at admission the writer epoch', () => {
        admit(store, [starting('r1', {}, 1100), starting('r2')], 7);
        expect(store.run('r1')?.epoch).toBe(7);
        expect(store.run('r2')?.epoch).toBeUndefined(); // held back by the stagger: not launched yet
      });

      it('returns copies: changing a returned record changes nothing stored', () => {
        admit(store, [queued('r1')]);
        write(store, { outbox: [event('e1', ['r1'])] });
        const record = store.run('r1');
        if (!record) throw new Error('no record');
        record.run.status = 'failed';
        record.spec.task = 'changed';
        const listed = store.outbox({})[0];
        listed?.runIds.push('r9');
        expect(store.run('r1')?.run.status).toBe('queued');
        expect(store.run('r1')?.spec.task).toBe('task of r1');
        expect(store.outboxEvent('e1')?.runIds).toEqual(['r1']);
      });

      it('takes the runs and specs it is given as they are: frozen ones are kept, never changed', () => {
        // The port's contract lets a store keep what `apply` hands it without a copy (callers never
        // change a run or spec afterwards), so a store must not write to them either: frozen inputs
        // through admission, launch, end, delivery and ack must apply and read back unchanged.
        const admitted = Object.freeze(queued('r1'));
        const frozenSpec = Object.freeze(spec('task of r1'));
        store.apply({ epoch: 1, newRuns: [Object.freeze({ run: admitted, spec: frozenSpec })] });
        store.apply({ epoch: 1, runs: [Object.freeze(starting('r1', {}, 1100))] });
        store.apply({ epoch: 1, runs: [Object.freeze(running('r1'))] });
        const done = Object.freeze(ended('r1', 'completed'));
        store.apply({ epoch: 1, runs: [done], outbox: [event('e1', ['r1'])] });
        store.apply({ epoch: 1, settle: [{ eventId: 'e1', state: 'delivered', at: 5000 }] });
        store.apply({ epoch: 1, acks: [{ eventId: 'e1', at: 6000 }] });
        store.apply({ epoch: 1, runInfo: [{ id: 'r1', resultChars: 2, transcriptGapBytes: 330 }] });
        expect(store.run('r1')).toMatchObject({
          run: ended('r1', 'completed'),
          spec: spec('task of r1'),
          delivery: 'delivered',
          ackedAt: 6000,
          resultChars: 2,
          transcriptGapBytes: 330,
        });
        expect(admitted).toStrictEqual(queued('r1'));
        expect(done).toStrictEqual(ended('r1', 'completed'));
        const read = store.run('r1');
        if (!read) throw new Error('no record');
        read.run.status = 'failed';
        expect(store.run('r1')?.run.status).toBe('completed');
      });
    });

    describe('state updates', () => {
      it('replaces the run state and sets the epoch when first recorded launched', () => {
        admit(store, [queued('r1')]);
        write(store, { epoch: 3, runs: [starting('r1')] });
        expect(store.run('r1')?.run.status).toBe('starting');
        expect(store.run('r1')?.epoch).toBeUndefined();
        write(store, { epoch: 3, runs: [starting('r1', {}, 1100)] });
        expect(store.run('r1')?.epoch).toBe(3);
        write(store, { epoch: 3, runs: [running('r1')] });
        expect(store.run('r1')?.run).toStrictEqual(running('r1'));
      });

      it('keeps the launch epoch when a later writer records a live state', () => {
        admit(store, [starting('r1', {}, 1100)], 1);
        write(store, { epoch: 2, runs: [running('r1')] });
        expect(store.run('r1')?.run.status).toBe('running');
        expect(store.run('r1')?.epoch).toBe(1);
      });

      it('ignores updates and claims for runs it does not have', () => {
        write(store, { runs: [running('ghost')], claim: ['ghost2'] });
        expect(store.run('ghost')).toBeUndefined();
        expect(store.run('ghost2')).toBeUndefined();
        expect(store.runs()).toEqual([]);
      });

      it('applies several updates to one run in one transaction in order', () => {
        admit(store, [queued('r1')]);
        write(store, { runs: [starting('r1', {}, 1100), running('r1'), ended('r1', 'completed')] });
        expect(store.run('r1')?.run).toStrictEqual(ended('r1', 'completed'));
        expect(store.run('r1')?.epoch).toBe(1);
      });

      it('admits a run and moves it on in one transaction: the last state that applies, launched under the epoch', () => {
        // What a gateway writes for a single spawn with a free permit: admitted and launched at once.
        store.apply({
          epoch: 3,
          newRuns: [{ run: queued('r1'), spec: spec('task of r1') }],
          runs: [starting('r1', { seq: 4, batchId: 'b1' }, 1100)],
        });
        expect(store.run('r1')).toStrictEqual({
          run: starting('r1', { seq: 4, batchId: 'b1' }, 1100),
          spec: spec('task of r1'),
          delivery: 'pending',
          epoch: 3,
        });
        expect(store.runs({ batchId: 'b1' }).map((r) => r.run.id)).toEqual(['r1']);
        expect(store.restartState().executing.map((r) => r.run.id)).toEqual(['r1']);
        // Ended in its admitting transaction: later states no longer apply, and it is not live.
        store.apply({
          epoch: 3,
          newRuns: [
            { run: queued('r2', { seq: 5 }), spec: spec() },
            { run: ended('r3', 'failed', { seq: 6 }), spec: spec() },
          ],
          runs: [
            starting('r2', { seq: 5 }, 1100),
            ended('r2', 'cancelled', { seq: 5 }),
            running('r2', { seq: 5 }),
            running('r3', { seq: 6 }),
          ],
        });
        expect(store.run('r2')?.run).toStrictEqual(ended('r2', 'cancelled', { seq: 5 }));
        expect(store.run('r2')?.epoch).toBe(3);
        expect(store.run('r3')?.run).toStrictEqual(ended('r3', 'failed', { seq: 6 }));
        expect(store.run('r3')?.epoch).toBeUndefined();
        expect(store.runs({ live: true }).map((r) => r.run.id)).toEqual(['r1']);
        // Launched and sent back to the queue in one transaction: it keeps the epoch it was launched under.
        store.apply({
          epoch: 3,
          newRuns: [{ run: queued('r4', { seq: 7 }), spec: spec() }],
          runs: [starting('r4', { seq: 7 }, 1100), queued('r4', { seq: 8 })],
        });
        expect(store.run('r4')).toMatchObject({ run: queued('r4', { seq: 8 }), epoch: 3 });
        expect(store.restartState().queued.map((r) => r.id)).toEqual(['r4']);
      });

      it('refuses a transaction that admits one id twice, even when it also updates that run', () => {
        expect(() =>
          store.apply({
            epoch: 1,
            newRuns: [
              { run: queued('r1'), spec: spec() },
              { run: queued('r1', { seq: 1 }), spec: spec() },
            ],
            runs: [starting('r1', {}, 1100)],
          }),
        ).toThrow(/already exists/);
        expect(store.run('r1')).toBeUndefined();
      });

      it('records run info given with a state change, and with one that does not apply', () => {
        admit(store, [running('r1'), running('r2')]);
        write(store, { runs: [ended('r2', 'completed')] });
        write(store, {
          runs: [ended('r1', 'completed'), running('r1'), ended('r2', 'failed')],
          runInfo: [
            { id: 'r1', resultPath: '/crew/r1/result.txt', resultChars: 4 },
            { id: 'r2', pid: 77 },
            { id: 'r1', resultChars: 9, pid: 5 },
          ],
        });
        expect(store.run('r1')).toMatchObject({
          run: ended('r1', 'completed'),
          resultPath: '/crew/r1/result.txt',
          resultChars: 9,
          pid: 5,
        });
        expect(store.run('r2')).toMatchObject({ run: ended('r2', 'completed'), pid: 77 });
      });

      it('records run info, keeping fields a later update leaves out', () => {
        admit(store, [running('r1')]);
        write(store, { runInfo: [{ id: 'r1', pid: 4242, startTime: 98765 }] });
        write(store, {
          runInfo: [{ id: 'r1', resultPath: '/crew/r1/result.txt', resultChars: 12, peakMemGb: 0.25 }],
        });
        write(store, {
          runInfo: [
            { id: 'r1', prunedAt: 9000 },
            { id: 'ghost', pid: 1 },
          ],
        });
        expect(store.run('r1')).toMatchObject({
          pid: 4242,
          startTime: 98765,
          resultPath: '/crew/r1/result.txt',
          resultChars: 12,
          peakMemGb: 0.25,
          prunedAt: 9000,
        });
        expect(store.run('ghost')).toBeUndefined();
      });

      it('records what a real agent reported: error_kind and the last usage', () => {
        admit(store, [running('r1')]);
        write(store, { runInfo: [{ id: 'r1', usageTokens: 1200, usageContextTokens: 200000 }] });
        write(store, {
          runInfo: [{ id: 'r1', errorKind: 'provider_rate_limited', usageTokens: 1500, usageCostUsd: 0.02 }],
        });
        expect(store.run('r1')).toMatchObject({
          errorKind: 'provider_rate_limited',
          usageTokens: 1500,
          usageContextTokens: 200000,
          usageCostUsd: 0.02,
        });
      });

      it("records what the provider gateway counted for the run's model calls", () => {
        admit(store, [running('r1')]);
        const providerUsage = { inputTokens: 120, outputTokens: 45, requests: 3, rateLimited: 1 };
        write(store, { runInfo: [{ id: 'r1', providerUsage }] });
        write(store, { runInfo: [{ id: 'r1', resultChars: 10 }] });
        expect(store.run('r1')?.providerUsage).toEqual(providerUsage);
        expect(store.run('r1')?.resultChars).toBe(10);
      });

      it('records the cluster gateway that executes a run, and keeps it through later updates', () => {
        admit(store, [running('r1')]);
        write(store, { runInfo: [{ id: 'r1', host: 'g1' }] });
        write(store, { runInfo: [{ id: 'r1', resultChars: 10 }] });
        expect(store.run('r1')?.host).toBe('g1');
        expect(store.run('r1')?.resultChars).toBe(10);
      });

      it("records a run's workspace, replaces it whole on the next, keeps it through other updates, and hands out copies", () => {
        admit(store, [running('r1')]);
        const made = { repo: '/r', branch: 'crew/r1', base: 'a'.repeat(40), path: '/w/r1' };
        write(store, { runInfo: [{ id: 'r1', workspace: made }] });
        expect(store.run('r1')?.workspace).toStrictEqual(made);
        const ended = {
          repo: '/r',
          branch: 'crew/r1',
          base: 'a'.repeat(40),
          head: 'b'.repeat(40),
          files: [{ path: 'x.txt', insertions: 2, deletions: 1 }],
          filesChanged: 1,
          conflicts: [{ with: 'r2', files: ['x.txt'] }],
        };
        write(store, { runInfo: [{ id: 'r1', workspace: ended }] });
        write(store, { runInfo: [{ id: 'r1', resultChars: 3 }] });
        expect(store.run('r1')?.workspace).toStrictEqual(ended);
        const copy = store.run('r1');
        copy?.workspace?.files?.push({ path: 'y', insertions: 0, deletions: 0 });
        expect(store.run('r1')?.workspace?.files).toHaveLength(1);
        expect(store.runs({ ids: ['r1'] })[0]?.workspace).toStrictEqual(ended);
      });
    });

    describe('terminal exactly once', () => {
      it('never changes a run that has ended', () => {
        admit(store, [running('r1')]);
        write(store, { runs: [ended('r1', 'completed')] });
        write(store, { runs: [ended('r1', 'failed', {}, { error: 'late' })] });
        write(store, { runs: [running('r1')] });
        expect(store.run('r1')?.run).toStrictEqual(ended('r1', 'completed'));
      });

      it('still records delivery and run info for an ended run', () => {
        admit(store, [ended('r1')]);
        write(store, { outbox: [event('e1', ['r1'])], runInfo: [{ id: 'r1', resultChars: 5 }] });
        write(store, { settle: [{ eventId: 'e1', state: 'delivered', at: 4000 }] });
        expect(store.run('r1')).toMatchObject({ delivery: 'delivered', deliveredAt: 4000, resultChars: 5 });
      });
    });

    describe('fencing', () => {
      it("drops a stale epoch's terminal record and applies the rest of its transaction", () => {
        admit(store, [queued('r1'), queued('r2', { seq: 1 })], 1);
        store.apply({ epoch: 1, runs: [starting('r1', {}, 1100)] });
        store.apply({
          epoch: 2,
          runs: [ended('r1', 'lost'), starting('r2', { seq: 1 })],
          outbox: [event('e1', ['r1'])],
          conversations: [conversation('c1')],
          runInfo: [{ id: 'r1', pid: 7 }],
        });
        expect(store.run('r1')?.run.status).toBe('starting');
        expect(store.run('r1')?.epoch).toBe(1);
        expect(store.run('r1')?.pid).toBe(7);
        expect(store.run('r2')?.run.status).toBe('starting');
        expect(store.outboxEvent('e1')?.state).toBe('pending');
        expect(store.restartState().conversations).toEqual([conversation('c1')]);
        // The owner can still end it.
        store.apply({ epoch: 1, runs: [ended('r1', 'completed')] });
        expect(store.run('r1')?.run.status).toBe('completed');
      });

      it('transfers ownership with a claim, before the same transaction ends the run', () => {
        admit(store, [queued('r1'), queued('r2')], 1);
        store.apply({ epoch: 1, runs: [running('r1'), running('r2')] });
        store.apply({ epoch: 2, claim: ['r1', 'r2'], runs: [ended('r1', 'lost')] });
        expect(store.run('r1')).toMatchObject({ run: { status: 'lost' }, epoch: 2 });
        expect(store.run('r2')?.epoch).toBe(2);
        // The old owner lost r2: its terminal record commits nothing.
        store.apply({ epoch: 1, runs: [ended('r2', 'completed')] });
        expect(store.run('r2')?.run.status).toBe('running');
        store.apply({ epoch: 2, runs: [ended('r2', 'lost')] });
        expect(store.run('r2')?.run.status).toBe('lost');
      });

      it('lets any writer end a run that was never launched', () => {
        admit(store, [queued('r1')], 1);
        store.apply({ epoch: 5, runs: [ended('r1', 'cancelled')] });
        expect(store.run('r1')?.run.status).toBe('cancelled');
        expect(store.run('r1')?.epoch).toBeUndefined();
      });
    });

    describe('atomicity', () => {
      function rejectedTxLeavesNothing(
        duplicate: 'existing run' | 'run twice' | 'existing event' | 'event twice',
      ) {
        admit(store, [running('r0'), queued('r9', { seq: 9 })]);
        write(store, { outbox: [event('e0', ['r0'])] });
        const before: StoreSnapshot = snapshot(store);
        const newRuns = [{ run: queued('r1', { seq: 1 }), spec: spec() }];
        if (duplicate === 'existing run') newRuns.push({ run: queued('r0', { seq: 2 }), spec: spec() });
        if (duplicate === 'run twice') newRuns.push({ run: queued('r1', { seq: 2 }), spec: spec() });
        const outbox = [event('e1', ['r9'])];
        if (duplicate === 'existing event') outbox.push(event('e0', ['r9']));
        if (duplicate === 'event twice') outbox.push(event('e1', ['r9']));
        expect(() =>
          store.apply({
            epoch: 1,
            newRuns,
            claim: ['r0'],
            runs: [ended('r0', 'completed'), starting('r9', { seq: 9 }, 1100)],
            conversations: [conversation('c1')],
            outbox,
            attempts: [{ eventId: 'e0' }],
            settle: [{ eventId: 'e0', state: 'delivered', at: 5000 }],
            runInfo: [{ id: 'r0', pid: 99 }],
          }),
        ).toThrow(/already exists/);
        expect(snapshot(store)).toStrictEqual(before);
        expect(store.run('r1')).toBeUndefined();
        expect(store.outboxEvent('e1')).toBeUndefined();
      }

      it('writes nothing of a transaction that admits a run id that exists', () => {
        rejectedTxLeavesNothing('existing run');
      });
      it('writes nothing of a transaction that admits one run id twice', () => {
        rejectedTxLeavesNothing('run twice');
      });
      it('writes nothing of a transaction that inserts an outbox id that exists', () => {
        rejectedTxLeavesNothing('existing event');
      });
      it('writes nothing of a transaction that inserts one outbox id twice', () => {
        rejectedTxLeavesNothing('event twice');
      });

      it('keeps working after a rejected transaction', () => {
        admit(store, [queued('r1')]);
        expect(() => admit(store, [queued('r1')])).toThrow(/already exists/);
        admit(store, [queued('r2', { seq: 1 })]);
        expect(ids(store.runs())).toEqual(['r2', 'r1']);
      });
    });

    describe('outbox and delivery', () => {
      beforeEach(() => {
        admit(store, [
          ended('r1', 'completed', { seq: 0 }),
          ended('w1', 'completed', { seq: 1, batchId: 'b1', parent: 'mcp:b' }),
          ended('w2', 'failed', { seq: 2, batchId: 'b1', parent: 'mcp:b' }),
          ended('r3', 'timed_out', { seq: 3 }),
        ]);
        write(store, {
          outbox: [
            event('e1', ['r1'], { createdAt: 3000 }),
            event('e2', ['w1', 'w2'], { parent: 'mcp:b', batchId: 'b1', createdAt: 2000 }),
          ],
        });
        write(store, { outbox: [event('e3', ['r3'], { createdAt: 1000 })] });
      });

      it('lists events in creation order, filtered by state and parent, up to a limit', () => {
        expect(store.outbox({}).map((e) => e.id)).toEqual(['e1', 'e2', 'e3']);
        expect(store.outbox({ state: 'pending', parent: 'mcp:a' }).map((e) => e.id)).toEqual(['e1', 'e3']);
        expect(store.outbox({ parent: 'mcp:b' })).toStrictEqual([
          event('e2', ['w1', 'w2'], { parent: 'mcp:b', batchId: 'b1', createdAt: 2000 }),
        ]);
        expect(store.outbox({ limit: 2 }).map((e) => e.id)).toEqual(['e1', 'e2']);
        expect(store.outbox({ limit: 0 })).toEqual([]);
        expect(store.outbox({ state: 'delivered' })).toEqual([]);
        expect(store.outboxEvent('e3')).toStrictEqual(event('e3', ['r3'], { createdAt: 1000 }));
        expect(store.outboxEvent('nope')).toBeUndefined();
      });

      it('settles an event once, and its runs take its state as their delivery', () => {
        write(store, { settle: [{ eventId: 'e2', state: 'delivered', at: 4000 }] });
        expect(store.outboxEvent('e2')).toMatchObject({ state: 'delivered', settledAt: 4000 });
        expect(store.run('w1')).toMatchObject({ delivery: 'delivered', deliveredAt: 4000 });
        expect(store.run('w2')).toMatchObject({ delivery: 'delivered', deliveredAt: 4000 });
        expect(store.run('r1')?.delivery).toBe('pending');
        expect(store.run('r1')?.deliveredAt).toBeUndefined();
        // A second outcome for the same event is ignored.
        write(store, { settle: [{ eventId: 'e2', state: 'undeliverable', at: 5000 }] });
        expect(store.outboxEvent('e2')).toMatchObject({ state: 'delivered', settledAt: 4000 });
        expect(store.run('w1')?.delivery).toBe('delivered');
        expect(store.outbox({ state: 'pending' }).map((e) => e.id)).toEqual(['e1', 'e3']);
      });

      it('marks runs undeliverable when their event is', () => {
        write(store, {
          settle: [
            { eventId: 'e1', state: 'undeliverable', at: 6000 },
            { eventId: 'ghost', state: 'delivered', at: 6000 },
          ],
        });
        expect(store.run('r1')).toMatchObject({ delivery: 'undeliverable', deliveredAt: 6000 });
        expect(store.outbox({ state: 'undeliverable' }).map((e) => e.id)).toEqual(['e1']);
      });

      it('counts attempts, ignoring unknown events', () => {
        write(store, { attempts: [{ eventId: 'e1' }, { eventId: 'ghost' }] });
        write(store, { attempts: [{ eventId: 'e1' }, { eventId: 'e3' }] });
        expect(store.outboxEvent('e1')?.attempts).toBe(2);
        expect(store.outboxEvent('e3')?.attempts).toBe(1);
        expect(store.outboxEvent('e2')?.attempts).toBe(0);
        expect(store.outboxEvent('ghost')).toBeUndefined();
      });

      it('writes a terminal record and its event in one transaction', () => {
        admit(store, [running('r5', { seq: 5 })]);
        write(store, { runs: [ended('r5')], outbox: [event('e5', ['r5'])] });
        write(store, { settle: [{ eventId: 'e5', state: 'delivered', at: 7000 }] });
        expect(store.run('r5')).toMatchObject({ run: { status: 'completed' }, delivery: 'delivered' });
      });
    });

    describe('runs queries', () => {
      beforeEach(() => {
        // Recorded in this order; createdAt and seq deliberately disagree with it.
        admit(store, [queued('a1', { parent: 'mcp:a', seq: 5, createdAt: 9 })]);
        admit(store, [running('b1', { parent: 'mcp:b', seq: 1, createdAt: 8 })]);
        admit(store, [ended('a2', 'completed', { parent: 'mcp:a', seq: 2, createdAt: 7 })]);
        admit(store, [
          starting('c1', { parent: 'run:a1', seq: 3, createdAt: 6 }, 1100),
          ended('b2', 'cancelled', { parent: 'mcp:b', seq: 4, createdAt: 6 }),
        ]);
        write(store, { runs: [ended('a1', 'failed', { parent: 'mcp:a', seq: 5, createdAt: 9 })] });
      });

      it('lists runs newest first: the order they were recorded, whatever their times', () => {
        expect(ids(store.runs())).toEqual(['b2', 'c1', 'a2', 'b1', 'a1']);
        expect(store.runs()[4]?.run.status).toBe('failed'); // an update keeps the place
      });

      it('reads history a page at a time from a cursor, with live and ids filters; counts runs per status', () => {
        expect(ids(store.runs({ before: 'c1', limit: 2 }))).toEqual(['a2', 'b1']);
        expect(ids(store.runs({ before: 'b1', limit: 2 }))).toEqual(['a1']);
        expect(ids(store.runs({ before: 'a1', limit: 2 }))).toEqual([]);
        expect(ids(store.runs({ before: 'b2', live: true, limit: 9 }))).toEqual(['c1', 'b1']);
        expect(ids(store.runs({ before: 'a2', ids: ['b2', 'a1', 'b1'], limit: 9 }))).toEqual(['b1', 'a1']);
        expect(ids(store.runs({ before: 'ghost', limit: 9 }))).toEqual([]);
        expect(Object.fromEntries(store.statusCounts())).toEqual({
          cancelled: 1,
          completed: 1,
          failed: 1,
          running: 1,
          starting: 1,
        });
      });

      it('filters by parents and by ids', () => {
        expect(ids(store.runs({ parents: ['mcp:a'] }))).toEqual(['a2', 'a1']);
        expect(ids(store.runs({ parents: ['mcp:a', 'run:a1'] }))).toEqual(['c1', 'a2', 'a1']);
        expect(ids(store.runs({ parents: [] }))).toEqual([]);
        expect(ids(store.runs({ parents: ['mcp:nobody'] }))).toEqual([]);
        expect(ids(store.runs({ ids: ['a1', 'b2', 'ghost'] }))).toEqual(['b2', 'a1']);
        expect(ids(store.runs({ ids: ['b1'] }))).toEqual(['b1']);
        expect(ids(store.runs({ ids: [] }))).toEqual([]);
      });

      it('filters live and ended runs', () => {
        expect(ids(store.runs({ live: true }))).toEqual(['c1', 'b1']);
        expect(ids(store.runs({ live: false }))).toEqual(['b2', 'a2', 'a1']);
        expect(ids(store.runs({ live: true, parents: ['mcp:b'] }))).toEqual(['b1']);
        expect(ids(store.runs({ live: false, parents: ['mcp:b', 'mcp:a'] }))).toEqual(['b2', 'a2', 'a1']);
      });

      it('returns at most limit runs, the newest', () => {
        expect(ids(store.runs({ limit: 2 }))).toEqual(['b2', 'c1']);
        expect(ids(store.runs({ limit: 0 }))).toEqual([]);
        expect(ids(store.runs({ limit: 10 }))).toHaveLength(5);
        expect(ids(store.runs({ parents: ['mcp:a', 'mcp:b'], limit: 3 }))).toEqual(['b2', 'a2', 'b1']);
        expect(ids(store.runs({ live: false, ids: ['a1', 'a2', 'b1'], limit: 1 }))).toEqual(['a2']);
      });

      it('returns whole records', () => {
        expect(store.runs({ ids: ['c1'] })).toStrictEqual([
          {
            run: starting('c1', { parent: 'run:a1', seq: 3, createdAt: 6 }, 1100),
            spec: spec('task of c1'),
            delivery: 'pending',
            epoch: 1,
          },
        ]);
      });
    });

    describe('restartState', () => {
      it('is empty for an empty store', () => {
        expect(store.restartState()).toStrictEqual({
          queued: [],
          executing: [],
          waves: [],
          nextSeq: 0,
          conversations: [],
        });
      });

      it('returns queued runs in seq order and executing runs as records', () => {
        admit(store, [queued('q3', { seq: 7 }), queued('q1', { seq: 2 })]);
        admit(
          store,
          [running('x1', { seq: 3 }), queued('q2', { seq: 4 }), starting('x2', { seq: 5 }, 1100)],
          4,
        );
        admit(store, [ended('d1', 'completed', { seq: 6 }), starting('x3', { seq: 1 })]);
        write(store, { runInfo: [{ id: 'x1', pid: 321, startTime: 55 }] });
        const state = store.restartState();
        expect(state.queued).toStrictEqual([
          queued('q1', { seq: 2 }),
          queued('q2', { seq: 4 }),
          queued('q3', { seq: 7 }),
        ]);
        expect(ids(state.executing)).toEqual(['x1', 'x2', 'x3']);
        expect(state.executing[0]).toStrictEqual({
          run: running('x1', { seq: 3 }),
          spec: spec('task of x1'),
          delivery: 'pending',
          epoch: 4,
          pid: 321,
          startTime: 55,
        });
        expect(state.nextSeq).toBe(8);
      });

      it('takes nextSeq from the live runs and the newest record, reading no history', () => {
        admit(store, [ended('d1', 'completed', { seq: 50 })]);
        admit(store, [queued('q1', { seq: 3 }), ended('d2', 'completed', { seq: 2 })]);
        // d1's 50 is history: a restart at 100,000 runs must not scan it to find a seq.
        expect(store.restartState().nextSeq).toBe(4);
        admit(store, [ended('d3', 'completed', { seq: 9 })]);
        expect(store.restartState().nextSeq).toBe(10);
      });

      it('returns open waves: every member in admission order and how many have not ended', () => {
        admit(store, [
          ended('w1', 'completed', { seq: 0, batchId: 'b1', parent: 'mcp:w' }),
          queued('w2', { seq: 1, batchId: 'b1', parent: 'mcp:w' }),
          running('w3', { seq: 2, batchId: 'b1', parent: 'mcp:w' }),
        ]);
        admit(store, [
          ended('v1', 'completed', { seq: 3, batchId: 'b2' }),
          ended('v2', 'failed', { seq: 4, batchId: 'b2' }),
        ]);
        admit(store, [queued('s1', { seq: 5 }), queued('u1', { seq: 6, batchId: 'b3' })]);
        expect(store.restartState().waves).toStrictEqual([
          { batchId: 'b1', parent: 'mcp:w', memberIds: ['w1', 'w2', 'w3'], remaining: 2 },
          { batchId: 'b3', parent: 'mcp:a', memberIds: ['u1'], remaining: 1 },
        ]);
        write(store, { runs: [ended('w2', 'cancelled', { seq: 1, batchId: 'b1', parent: 'mcp:w' })] });
        expect(store.restartState().waves[0]?.remaining).toBe(1);
        write(store, { runs: [ended('w3', 'completed', { seq: 2, batchId: 'b1', parent: 'mcp:w' })] });
        expect(store.restartState().waves.map((w) => w.batchId)).toEqual(['b3']);
      });

      it('returns the conversations not released, in their latest state, in the order first recorded', () => {
        write(store, { conversations: [conversation('c1'), conversation('c2', { parent: 'chat:x' })] });
        write(store, {
          conversations: [conversation('c1', { state: 'idle', lastUsedAt: 5000, latestRunId: 'r7' })],
        });
        write(store, {
          conversations: [
            conversation('c2', { state: 'released', releasedReason: 'expired' }),
            conversation('c3'),
          ],
        });
        expect(store.restartState().conversations).toStrictEqual([
          conversation('c1', { state: 'idle', lastUsedAt: 5000, latestRunId: 'r7' }),
          conversation('c3'),
        ]);
        // A released conversation is still there to be asked for by id.
        expect(store.conversation('c2')).toStrictEqual(
          conversation('c2', { state: 'released', releasedReason: 'expired' }),
        );
        expect(store.conversation('nope')).toBeUndefined();
      });
    });

    describe('acknowledgements', () => {
      it('acks an event once; its runs take the first ack time', () => {
        admit(store, [ended('a1'), ended('a2')]);
        write(store, { outbox: [event('e1', ['a1', 'a2'])] });
        write(store, { acks: [{ eventId: 'e1', at: 5000 }] });
        write(store, {
          acks: [
            { eventId: 'e1', at: 6000 },
            { eventId: 'missing', at: 1 },
          ],
        });
        expect(store.outboxEvent('e1')?.ackedAt).toBe(5000);
        expect(store.run('a1')?.ackedAt).toBe(5000);
        expect(store.run('a2')?.ackedAt).toBe(5000);
      });
    });

    describe('waves and first runs', () => {
      it('finds a wave’s members, and the events a run heads', () => {
        admit(store, [
          queued('m1', { seq: 0, batchId: 'b1' }),
          queued('m2', { seq: 1, batchId: 'b1' }),
          queued('s1', { seq: 2 }),
        ]);
        write(store, { outbox: [event('d1', ['m1', 'm2']), event('e1', ['s1'])] });
        expect(ids(store.runs({ batchId: 'b1' }))).toEqual(['m2', 'm1']);
        expect(store.outbox({ firstRun: 'm1' }).map((e) => e.id)).toEqual(['d1']);
        expect(store.outbox({ firstRun: 'm2' })).toEqual([]);
      });
    });

    describe('idempotency keys', () => {
      it('finds the runs admitted with a command id, newest first', () => {
        admit(store, [
          { ...queued('k1', { seq: 0, batchId: 'b1' }), commandId: 'cmd-1' },
          { ...queued('k2', { seq: 1, batchId: 'b1' }), commandId: 'cmd-1' },
          { ...queued('k3', { seq: 2 }), commandId: 'cmd-2' },
          queued('k4', { seq: 3 }),
        ]);
        expect(ids(store.runs({ commandId: 'cmd-1' }))).toEqual(['k2', 'k1']);
        expect(ids(store.runs({ commandId: 'cmd-3' }))).toEqual([]);
      });
    });

    describe('history', () => {
      const settled = (runIds: string[], at = 4000) =>
        write(store, {
          outbox: runIds.map((id) => event(`e-${id}`, [id])),
          settle: runIds.map((id) => ({ eventId: `e-${id}`, state: 'delivered' as const, at })),
        });

      it('seeds the reaper with settled runs whose transcript is not pruned, oldest first', () => {
        admit(store, [ended('s1'), ended('s2'), ended('s3'), running('live')]);
        admit(store, [{ ...ended('k1'), keep: true }]);
        settled(['s1', 's2', 'k1'], 4100);
        write(store, { runInfo: [{ id: 's2', prunedAt: 5000 }] });
        expect(store.unprunedSettled(0, 100).runs).toStrictEqual([
          { id: 's1', settledAt: 4100, kept: false },
          { id: 'k1', settledAt: 4100, kept: true },
        ]);
      });

      it('pages the unpruned settled runs by a cursor, so a reader never holds all of them at once', () => {
        admit(store, [ended('s1'), ended('s2'), ended('s3'), ended('s4'), ended('s5')]);
        settled(['s1', 's2', 's3', 's4', 's5'], 4100);
        write(store, { runInfo: [{ id: 's3', prunedAt: 5000 }] });
        const first = store.unprunedSettled(0, 2);
        expect(first.runs.map((r) => r.id)).toEqual(['s1', 's2']);
        // Pruning what was read does not move the cursor: the next page starts after s2.
        write(store, { runInfo: [{ id: 's1', prunedAt: 5000 }] });
        const second = store.unprunedSettled(first.next, 2);
        expect(second.runs.map((r) => r.id)).toEqual(['s4', 's5']);
        const last = store.unprunedSettled(second.next, 2);
        expect(last).toStrictEqual({ runs: [], next: second.next });
      });

      it('deletes ended, settled runs admitted before the cutoff, with their events, oldest first', () => {
        admit(store, [
          ended('old1', 'completed', { createdAt: 100 }),
          ended('old2', 'failed', { createdAt: 200 }),
        ]);
        admit(store, [
          running('oldLive', { createdAt: 250 }),
          ended('oldPending', 'completed', { createdAt: 260 }),
        ]);
        admit(store, [ended('young', 'completed', { createdAt: 900 })]);
        settled(['old1', 'old2', 'young']);
        write(store, { outbox: [event('e-pending', ['oldPending'])] });
        const pruned = store.pruneHistory({ admittedBefore: 500, keepRuns: 1000, limit: 100, protect: [] });
        expect(pruned).toStrictEqual({
          runs: [
            { id: 'old1', transcriptPruned: false },
            { id: 'old2', transcriptPruned: false },
          ],
          events: 2,
          conversationIds: [],
        });
        expect(ids(store.runs())).toEqual(['young', 'oldPending', 'oldLive']);
        expect(store.outbox({}).map((e) => e.id)).toEqual(['e-young', 'e-pending']);
      });

      it('bounds the count: beyond keepRuns the oldest prunable go, whatever their age, up to the limit', () => {
        for (let i = 0; i < 6; i++)
          admit(store, [ended(`c${i}`, 'completed', { createdAt: 1000 + i, seq: i })]);
        settled(['c0', 'c1', 'c2', 'c3', 'c4', 'c5']);
        write(store, { runInfo: [{ id: 'c1', prunedAt: 4500 }] });
        const first = store.pruneHistory({ admittedBefore: 0, keepRuns: 2, limit: 3, protect: [] });
        expect(first.runs).toStrictEqual([
          { id: 'c0', transcriptPruned: false },
          { id: 'c1', transcriptPruned: true },
          { id: 'c2', transcriptPruned: false },
        ]);
        const second = store.pruneHistory({ admittedBefore: 0, keepRuns: 2, limit: 3, protect: [] });
        expect(second.runs.map((r) => r.id)).toEqual(['c3']);
        expect(ids(store.runs())).toEqual(['c5', 'c4']);
      });

      it('keeps the runs of protected conversations, and drops a released conversation with its runs', () => {
        admit(store, [
          { ...ended('k1', 'completed', { createdAt: 100 }), keep: true },
          { ...ended('k2', 'completed', { createdAt: 110, seq: 1 }), conversationId: 'k1', keep: true },
          { ...ended('r1', 'completed', { createdAt: 120, seq: 2 }), keep: true },
        ]);
        settled(['k1', 'k2', 'r1']);
        write(store, {
          conversations: [
            conversation('k1', { state: 'idle', latestRunId: 'k2' }),
            conversation('r1', { state: 'released', latestRunId: 'r1' }),
          ],
        });
        const pruned = store.pruneHistory({
          admittedBefore: 500,
          keepRuns: 1000,
          limit: 100,
          protect: ['k1'],
        });
        expect(pruned.runs.map((r) => r.id)).toEqual(['r1']);
        expect(pruned.conversationIds).toEqual(['r1']);
        expect(store.conversation('r1')).toBeUndefined();
        expect(store.conversation('k1')?.state).toBe('idle');
        expect(ids(store.runs())).toEqual(['k2', 'k1']);
      });
    });

    describe('hosted chats', () => {
      const chat = (id: string, extra: Partial<ChatRecord> = {}): ChatRecord => ({
        id,
        agent: 'sim',
        cwd: '/work',
        createdAt: 1000,
        activeAt: 1000,
        turnCount: 0,
        turns: [],
        injected: [],
        ...extra,
      });

      it('keeps the open chats in the order first saved; a save replaces, a delete forgets', () => {
        expect(store.chats()).toEqual([]);
        store.saveChat(chat('c1'));
        store.saveChat(chat('c2', { sessionId: 's2' }));
        const turn = {
          turn: 1,
          kind: 'message' as const,
          text: 'hi',
          answer: 'hello',
          at: 1100,
          endedAt: 1200,
        };
        store.saveChat(chat('c1', { activeAt: 1200, turnCount: 1, turns: [turn], injected: ['e1'] }));
        expect(store.chats()).toStrictEqual([
          chat('c1', { activeAt: 1200, turnCount: 1, turns: [turn], injected: ['e1'] }),
          chat('c2', { sessionId: 's2' }),
        ]);
        store.deleteChat('c1');
        store.deleteChat('nope');
        expect(store.chats().map((c) => c.id)).toEqual(['c2']);
      });

      it('returns copies: changing a returned chat changes nothing stored', () => {
        store.saveChat(chat('c1', { injected: ['e1'] }));
        const read = store.chats()[0];
        read?.injected.push('e2');
        expect(store.chats()[0]?.injected).toEqual(['e1']);
      });

      it('counts each save and delete as one write transaction', () => {
        const before = store.stats().transactions;
        store.saveChat(chat('c1'));
        store.saveChat(chat('c1', { turnCount: 1 }));
        store.deleteChat('c1');
        expect(store.stats().transactions - before).toBe(3);
      });
    });

    describe('stats', () => {
      it('counts every write transaction, failed ones not', () => {
        const before = store.stats().transactions;
        admit(store, [queued('t1')]);
        write(store, { runs: [running('t1')] });
        expect(() => admit(store, [queued('t1')])).toThrow(/already exists/);
        store.nextEpoch();
        store.pruneHistory({ admittedBefore: 0, keepRuns: 10, limit: 10, protect: [] });
        expect(store.stats().transactions - before).toBe(4);
      });
    });

    describe('epochs', () => {
      it('increase with every call', () => {
        const first = store.nextEpoch();
        const second = store.nextEpoch();
        const third = store.nextEpoch();
        expect(first).toBeGreaterThanOrEqual(1);
        expect(second).toBe(first + 1);
        expect(third).toBe(second + 1);
      });
    });

    if (persists) {
      describe('close and reopen', () => {
        it('keeps everything, and epochs keep increasing', () => {
          const reopen = subject.reopen;
          if (!reopen) throw new Error('a persistent subject must offer reopen');
          const epoch = store.nextEpoch();
          admit(store, [queued('q1', { seq: 3 }), queued('w1', { seq: 1, batchId: 'b1' })], epoch);
          admit(store, [starting('r1', { seq: 0 }, 1100), running('w2', { seq: 2, batchId: 'b1' })], epoch);
          admit(store, [
            ended('d1', 'completed', { seq: 4 }, { stop: 'turn_limit', launchedAt: 1, startedAt: 2 }),
          ]);
          store.apply({
            epoch,
            claim: ['w2'],
            conversations: [conversation('c1', { state: 'idle' })],
            outbox: [event('e1', ['d1']), event('e2', ['q1'], { parent: 'mcp:z' })],
            attempts: [{ eventId: 'e1' }],
            settle: [{ eventId: 'e1', state: 'delivered', at: 4100 }],
            runInfo: [
              { id: 'r1', pid: 1234, startTime: 5, peakMemGb: 0.5, resultChars: 3, resultPath: '/p' },
            ],
          });
          store.saveChat({
            id: 'chat1',
            agent: 'sim',
            cwd: '/w',
            createdAt: 1,
            activeAt: 2,
            sessionId: 's1',
            turnCount: 1,
            turns: [
              {
                turn: 1,
                kind: 'injection',
                text: 'ev',
                events: [{ id: 'e1', kind: 'completion', run_ids: ['r1'] }],
                answer: 'ok',
                at: 2,
              },
            ],
            injected: ['e1'],
          });
          const before = snapshot(store);
          const records = ['q1', 'w1', 'r1', 'w2', 'd1'].map((id) => store.run(id));
          const chats = store.chats();
          store = reopen();
          expect(store.chats()).toStrictEqual(chats);
          expect(chats).toHaveLength(1);
          expect(snapshot(store)).toStrictEqual(before);
          expect(['q1', 'w1', 'r1', 'w2', 'd1'].map((id) => store.run(id))).toStrictEqual(records);
          expect(store.outboxEvent('e1')).toMatchObject({ state: 'delivered', attempts: 1, settledAt: 4100 });
          expect(store.nextEpoch()).toBe(epoch + 1);
          // Ownership survives too: w2 belongs to `epoch` until the next writer claims it.
          const w2Lost = ended('w2', 'lost', { seq: 2, batchId: 'b1' });
          store.apply({ epoch: epoch + 1, runs: [w2Lost] });
          expect(store.run('w2')?.run.status).toBe('running');
          store.apply({ epoch: epoch + 1, claim: ['w2'], runs: [w2Lost] });
          expect(store.run('w2')?.run.status).toBe('lost');
        });
      });
    }
  });
}
