/** A binary min-heap of (key, value) pairs; ties pop in insertion order. Used for run deadlines. */
export class MinHeap<V> {
  private readonly keys: number[] = [];
  private readonly seqs: number[] = [];
  private readonly values: V[] = [];
  private seq = 0;

  get size(): number {
    return this.keys.length;
  }

  push(key: number, value: V): void {
    this.keys.push(key);
    this.seqs.push(this.seq++);
    this.values.push(value);
    this.up(this.keys.length - 1);
  }

  peekKey(): number | undefined {
    return this.keys[0];
  }

  peekValue(): V | undefined {
    return this.values[0];
  }

  pop(): V | undefined {
    const n = this.keys.length;
    if (n === 0) return undefined;
    const top = this.values[0];
    this.swap(0, n - 1);
    this.keys.pop();
    this.seqs.pop();
    this.values.pop();
    this.down(0);
    return top;
  }

  private less(a: number, b: number): boolean {
    const ka = this.keys[a] as number;
    const kb = this.keys[b] as number;
    return ka < kb || (ka === kb && (this.seqs[a] as number) < (this.seqs[b] as number));
  }

  // Through locals, not destructuring: an array swap makes two arrays per list per swap, and a heap
  // of every live run's deadlines swaps ~log n times per push and pop.
  private swap(a: number, b: number): void {
    const key = this.keys[a] as number;
    this.keys[a] = this.keys[b] as number;
    this.keys[b] = key;
    const seq = this.seqs[a] as number;
    this.seqs[a] = this.seqs[b] as number;
    this.seqs[b] = seq;
    const value = this.values[a] as V;
    this.values[a] = this.values[b] as V;
    this.values[b] = value;
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    const n = this.keys.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < n && this.less(l, m)) m = l;
      if (r < n && this.less(r, m)) m = r;
      if (m === i) return;
      this.swap(i, m);
      i = m;
    }
  }
}
