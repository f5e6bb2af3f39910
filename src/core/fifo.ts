interface Link<K> {
  prev: K | undefined;
  next: K | undefined;
}

/**
 * A FIFO of distinct keys with O(1) push, shift, peek and removal from the middle: a doubly linked list
 * threaded through a Map. (A Map alone keeps order, but `keys().next()` walks past every deleted entry
 * still in its table, which made draining a long queue quadratic.)
 */
export class Fifo<K> {
  private readonly links = new Map<K, Link<K>>();
  private head: K | undefined;
  private tail: K | undefined;

  get size(): number {
    return this.links.size;
  }

  has(key: K): boolean {
    return this.links.has(key);
  }

  /** Appends `key`; a key already queued keeps its place. */
  push(key: K): void {
    if (this.links.has(key)) return;
    this.links.set(key, { prev: this.tail, next: undefined });
    if (this.tail === undefined) this.head = key;
    else (this.links.get(this.tail) as Link<K>).next = key;
    this.tail = key;
  }

  peek(): K | undefined {
    return this.head;
  }

  shift(): K | undefined {
    const key = this.head;
    if (key !== undefined) this.delete(key);
    return key;
  }

  /** Removes `key` wherever it is; whether it was queued. */
  delete(key: K): boolean {
    const link = this.links.get(key);
    if (!link) return false;
    this.links.delete(key);
    if (link.prev === undefined) this.head = link.next;
    else (this.links.get(link.prev) as Link<K>).next = link.next;
    if (link.next === undefined) this.tail = link.prev;
    else (this.links.get(link.next) as Link<K>).prev = link.prev;
    return true;
  }

  /** Keys in order, head first. */
  *[Symbol.iterator](): IterableIterator<K> {
    for (let key = this.head; key !== undefined; key = this.links.get(key)?.next) yield key;
  }
}

/** The links a {@link LinkedFifo} threads through its items: kept on the item, so no map is needed. */
export interface FifoLinks<T> {
  fifoPrev: T | undefined;
  fifoNext: T | undefined;
  inFifo: boolean;
}

/**
 * A FIFO of objects that carry their own links ({@link FifoLinks}): O(1) push, peek and removal from
 * the middle with no map lookup (the scheduler's queue of run nodes, tens of thousands long). An item is
 * in at most one such list.
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
