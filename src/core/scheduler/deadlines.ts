import { MinHeap } from '../min-heap.js';
import type { Node } from './run-node.js';

/**
 * Live runs by deadline. It holds the nodes, not their ids: the step's wake-up reads its top every step,
 * and a node says itself whether its entry still stands (`deadlineAt`, cleared when it leaves the table)
 * without a lookup in a map of every live run.
 */
export class Deadlines {
  private readonly heap = new MinHeap<Node>();

  set(node: Node, at: number): void {
    node.deadlineAt = at;
    this.heap.push(at, node);
  }

  /** The nearest deadline that still stands. */
  nextAt(): number | undefined {
    this.dropStale();
    return this.heap.peekKey();
  }

  /** The next run whose deadline has passed at `now` (taken off), or undefined when none has. */
  takeDue(now: number): Node | undefined {
    for (;;) {
      this.dropStale();
      const at = this.heap.peekKey();
      if (at === undefined || at > now) return undefined;
      const node = this.heap.pop() as Node;
      if (node.deadlineAt === at) return node;
    }
  }

  private dropStale(): void {
    for (;;) {
      const node = this.heap.peekValue();
      if (node === undefined) return;
      if (node.deadlineAt === this.heap.peekKey() && node.stopping === undefined) return;
      this.heap.pop();
    }
  }
}
