import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type FifoLinks, LinkedFifo } from '../../src/core/fifo.js';

interface Item extends FifoLinks<Item> {
  key: number;
}

const item = (key: number): Item => ({ key, fifoPrev: undefined, fifoNext: undefined, inFifo: false });

describe('LinkedFifo', () => {
  it('agrees with an array model over random pushes, shifts and deletes', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('push' as const), key: fc.nat(20) }),
      fc.record({ kind: fc.constant('shift' as const) }),
      fc.record({ kind: fc.constant('delete' as const), key: fc.nat(20) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        const items = Array.from({ length: 21 }, (_, key) => item(key));
        const fifo = new LinkedFifo<Item>();
        const model: number[] = [];
        for (const o of ops) {
          if (o.kind === 'push') {
            fifo.push(items[o.key] as Item);
            if (!model.includes(o.key)) model.push(o.key);
          } else if (o.kind === 'shift') {
            const head = fifo.peek();
            if (head) fifo.delete(head);
            expect(head?.key).toBe(model.shift());
          } else {
            const at = model.indexOf(o.key);
            expect(fifo.delete(items[o.key] as Item)).toBe(at >= 0);
            if (at >= 0) model.splice(at, 1);
          }
          expect([...fifo].map((i) => i.key)).toEqual(model);
          expect(fifo.size).toBe(model.length);
          expect(fifo.peek()?.key).toBe(model[0]);
          for (const i of items) expect(i.inFifo).toBe(model.includes(i.key));
        }
      }),
    );
  });

  it('drains 200,000 items from the front, each removal touching only its neighbours', () => {
    const fifo = new LinkedFifo<Item>();
    const n = 200_000;
    for (let i = 0; i < n; i++) fifo.push(item(i));
    let shifted = 0;
    for (let head = fifo.peek(); head !== undefined; head = fifo.peek()) {
      expect(fifo.delete(head)).toBe(true);
      expect(head.fifoNext).toBeUndefined();
      shifted++;
    }
    expect(shifted).toBe(n);
    expect(fifo.size).toBe(0);
  });
});
