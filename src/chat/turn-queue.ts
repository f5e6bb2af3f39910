/**
 * Which turn a hosted chat runs next (DESIGN §6, hosted parents). Pure: items in, a decision out; the
 * chat carries it out. A session runs one turn at a time, so whatever arrives meanwhile waits here:
 *
 * - first come, first served between a person's messages and completion events, so a completion that
 *   arrives during a person's turn is injected after it, and a message that arrives during an injection
 *   waits for it;
 * - every completion event waiting when an injection turn starts goes into that one turn;
 * - an injection waits `coalesceMs` after its oldest event arrived, so events that become ready together
 *   (the relay hands them over one by one) share a turn even when the chat was idle.
 */

export interface Arrival {
  /** When it arrived (clock milliseconds). */
  at: number;
}

export type NextTurn<P, I> =
  | { kind: 'person'; item: P }
  | { kind: 'injection'; items: I[] }
  /** An injection is due once its coalescing window closes, in `delayMs`. */
  | { kind: 'wait'; delayMs: number }
  | { kind: 'none' };

export class TurnQueue<P extends Arrival, I extends Arrival & { id: string }> {
  private readonly people: P[] = [];
  /** Insertion order = arrival order. */
  private readonly injections = new Map<string, I>();

  addPerson(item: P): void {
    this.people.push(item);
  }

  /** False when an injection with this id already waits (it is not added twice). */
  addInjection(item: I): boolean {
    if (this.injections.has(item.id)) return false;
    this.injections.set(item.id, item);
    return true;
  }

  /** Withdraws a waiting injection (its delivery attempt timed out); false when it was not waiting. */
  removeInjection(id: string): boolean {
    return this.injections.delete(id);
  }

  get waitingPeople(): number {
    return this.people.length;
  }

  get waitingInjections(): number {
    return this.injections.size;
  }

  /** Takes the next turn's items out of the queue (or says how long to wait, or that nothing waits). */
  next(now: number, coalesceMs: number): NextTurn<P, I> {
    const person = this.people[0];
    const oldest = this.injections.values().next().value;
    if (oldest !== undefined && (person === undefined || oldest.at <= person.at)) {
      const dueAt = oldest.at + coalesceMs;
      if (now < dueAt) return { kind: 'wait', delayMs: dueAt - now };
      const items = [...this.injections.values()];
      this.injections.clear();
      return { kind: 'injection', items };
    }
    if (person !== undefined) {
      this.people.shift();
      return { kind: 'person', item: person };
    }
    return { kind: 'none' };
  }

  /** Empties the queue (the chat closes); what was waiting. */
  drain(): { people: P[]; injections: I[] } {
    const people = this.people.splice(0);
    const injections = [...this.injections.values()];
    this.injections.clear();
    return { people, injections };
  }
}
