import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FairQueue } from '../../src/core/fair-queue.js';
import { numRuns } from '../helpers/fc-runs.js';

describe('FairQueue', () => {
  it("serves one client's single item after at most one of a busy client's fifty", () => {
    const queue = new FairQueue<string>({ maxPerClient: 64, maxTotal: 128 });
    // One slot: a's first item starts at once, then a queues 49 more and b one.
    queue.push('a', 'a0');
    expect(queue.take()).toEqual({ client: 'a', item: 'a0' });
    for (let i = 1; i < 50; i++) expect(queue.push('a', `a${i}`)).toBeUndefined();
    expect(queue.push('b', 'b0')).toBeUndefined();
    queue.done('a');
    const order: string[] = [];
    for (let next = queue.take(); next; next = queue.take()) {
      order.push(next.item);
      queue.done(next.client);
    }
    expect(order[0]).toBe('b0');
    expect(order.slice(1)).toEqual(Array.from({ length: 49 }, (_, i) => `a${i + 1}`));
  });

  it('takes turns round-robin between clients, each in its own order', () => {
    const queue = new FairQueue<string>({ maxPerClient: 10, maxTotal: 100 });
    for (let i = 0; i < 3; i++) queue.push('a', `a${i}`);
    for (let i = 0; i < 2; i++) queue.push('b', `b${i}`);
    queue.push('c', 'c0');
    const order: string[] = [];
    for (let next = queue.take(); next; next = queue.take()) order.push(next.item);
    expect(order).toEqual(['a0', 'b0', 'c0', 'a1', 'b1', 'a2']);
  });

  it('refuses past the per-client bound without touching another client, and past the total', () => {
    const queue = new FairQueue<number>({ maxPerClient: 2, maxTotal: 3 });
    expect(queue.push('a', 1)).toBeUndefined();
    expect(queue.push('a', 2)).toBeUndefined();
    expect(queue.push('a', 3)).toBe('client_full');
    expect(queue.push('b', 4)).toBeUndefined();
    expect(queue.push('c', 5)).toBe('queue_full');
    expect([queue.size, queue.waitingFor('a'), queue.waitingFor('b'), queue.waitingFor('c')]).toEqual([
      3, 2, 1, 0,
    ]);
    expect(queue.drain()).toEqual([1, 2, 4]);
    expect(queue.size).toBe(0);
    expect(queue.knownClients).toBe(0);
  });

  it('treats hostile client keys as plain keys', () => {
    const queue = new FairQueue<string>({ maxPerClient: 1, maxTotal: 10 });
    for (const key of ['__proto__', 'constructor', 'toString']) expect(queue.push(key, key)).toBeUndefined();
    expect(queue.push('__proto__', 'again')).toBe('client_full');
    expect(queue.drain()).toEqual(['__proto__', 'constructor', 'toString']);
  });

  // Any interleaving of pushes, takes and completions over a few clients: nothing is lost or repeated,
  // each client's items leave in its order, no client waits more than one turn per other waiting client,
  // and the queue forgets clients with nothing waiting or running (bounded by what it holds).
  it('is fair, loses nothing and stays bounded (property)', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('push' as const), client: fc.constantFrom('a', 'b', 'c', 'd') }),
      fc.record({ kind: fc.constant('take' as const) }),
      fc.record({ kind: fc.constant('done' as const) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        const queue = new FairQueue<{ client: string; n: number }>({ maxPerClient: 8, maxTotal: 20 });
        const pushed = new Map<string, number>();
        const taken = new Map<string, number>();
        const running: string[] = [];
        /** Turns other clients got while each waiting client had an item queued. */
        const passedOver = new Map<string, Map<string, number>>();
        for (const step of ops) {
          if (step.kind === 'push') {
            const n = pushed.get(step.client) ?? 0;
            if (queue.push(step.client, { client: step.client, n }) === undefined)
              pushed.set(step.client, n + 1);
          } else if (step.kind === 'take') {
            const waiting = ['a', 'b', 'c', 'd'].filter((c) => queue.waitingFor(c) > 0);
            const next = queue.take();
            if (!next) {
              expect(waiting).toEqual([]);
              continue;
            }
            expect(next.item.n).toBe(taken.get(next.client) ?? 0);
            taken.set(next.client, next.item.n + 1);
            running.push(next.client);
            passedOver.delete(next.client);
            for (const other of waiting) {
              if (other === next.client) continue;
              const counts = passedOver.get(other) ?? new Map<string, number>();
              counts.set(next.client, (counts.get(next.client) ?? 0) + 1);
              expect(
                counts.get(next.client),
                `${other} passed over twice by ${next.client}`,
              ).toBeLessThanOrEqual(1);
              passedOver.set(other, counts);
            }
          } else {
            const client = running.shift();
            if (client !== undefined) queue.done(client);
          }
          expect(queue.knownClients).toBeLessThanOrEqual(queue.size + running.length);
        }
        const left = queue.drain();
        for (const [client, n] of pushed) {
          expect((taken.get(client) ?? 0) + left.filter((i) => i.client === client).length).toBe(n);
        }
      }),
      { numRuns: numRuns(500) },
    );
  });
});
