import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Fifo } from '../../src/core/fifo.js';

describe('Fifo', () => {
  it('agrees with an array model over random pushes, shifts and deletes', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('push' as const), key: fc.nat(20) }),
      fc.record({ kind: fc.constant('shift' as const) }),
      fc.record({ kind: fc.constant('delete' as const), key: fc.nat(20) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        const fifo = new Fifo<number>();
        const model: number[] = [];
        for (const o of ops) {
          if (o.kind === 'push') {
            fifo.push(o.key);
            if (!model.includes(o.key)) model.push(o.key);
          } else if (o.kind === 'shift') {
            expect(fifo.shift()).toBe(model.shift());
          } else {
            const at = model.indexOf(o.key);
            expect(fifo.delete(o.key)).toBe(at >= 0);
            if (at >= 0) model.splice(at, 1);
          }
          expect([...fifo]).toEqual(model);
          expect(fifo.size).toBe(model.length);
          expect(fifo.peek()).toBe(model[0]);
        }
      }),
    );
  });

  it('drains 200,000 keys with deletions from the front in linear time', () => {
    const fifo = new Fifo<number>();
    const n = 200_000;
    for (let i = 0; i < n; i++) fifo.push(i);
    // Counting steps, not time: each shift touches a bounded number of links.
    let shifted = 0;
    while (fifo.size > 0) {
      fifo.shift();
      shifted++;
    }
    expect(shifted).toBe(n);
    expect(fifo.peek()).toBeUndefined();
  });
});
