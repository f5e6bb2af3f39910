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
