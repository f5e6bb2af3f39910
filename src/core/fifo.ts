/** The links a {@link LinkedFifo} threads through its items: kept on the item, so no map is needed. */
export interface FifoLinks<T> {
  fifoPrev: T | undefined;
  fifoNext: T | undefined;
  inFifo: boolean;
}

/**
 * A FIFO of objects that carry their own links ({@link FifoLinks}): O(1) push, peek and removal from
 * the middle with no map lookup (the scheduler's queue of run nodes, tens of thousands long). An item is
 * in at most one such list. (A Map keyed by run id kept order too, but `keys().next()` walks past every
 * deleted entry still in its table, which made draining a long queue quadratic; a linked list through a
 * Map of links fixed that at a few map operations per run, which this avoids.)
 */
export class LinkedFifo<T extends FifoLinks<T>> {
  private head: T | undefined;
  private tail: T | undefined;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Appends `item`; an item already queued keeps its place. */
  push(item: T): void {
    if (item.inFifo) return;
    item.inFifo = true;
    item.fifoPrev = this.tail;
    item.fifoNext = undefined;
    if (this.tail === undefined) this.head = item;
    else this.tail.fifoNext = item;
    this.tail = item;
    this.count++;
  }

  peek(): T | undefined {
    return this.head;
  }

  /** Removes `item` wherever it is; whether it was queued. */
  delete(item: T): boolean {
    if (!item.inFifo) return false;
    const prev = item.fifoPrev;
    const next = item.fifoNext;
    if (prev === undefined) this.head = next;
    else prev.fifoNext = next;
    if (next === undefined) this.tail = prev;
    else next.fifoPrev = prev;
    item.inFifo = false;
    item.fifoPrev = undefined;
    item.fifoNext = undefined;
    this.count--;
    return true;
  }

  /** Items in order, head first. */
  *[Symbol.iterator](): IterableIterator<T> {
    for (let item = this.head; item !== undefined; item = item.fifoNext) yield item;
  }
}
