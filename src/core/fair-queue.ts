/**
 * A queue that takes turns between clients (issue 28: one parent's fifty greps must not starve another
 * parent's one). Each client has its own FIFO; {@link FairQueue.take} serves the waiting client that was
 * served longest ago (never served comes first; ties go to whichever head item arrived first), so a
 * client that queues one item waits behind at most one item of each other client. A client stays known
 * while it has items waiting or running, so one whose single item is running does not count as fresh.
 *
 * Bounded: at most `maxPerClient` items wait per client and `maxTotal` in all; {@link FairQueue.push}
 * says which bound refused. Pure: no clock, no I/O; keys are request text, so they live in a `Map`.
 */

export interface FairQueueOptions {
  /** Most items one client may have waiting. */
  maxPerClient: number;
  /** Most items waiting in all. */
  maxTotal: number;
}

/** Why {@link FairQueue.push} refused: this client's bound, or the whole queue's. */
export type FairQueueFull = 'client_full' | 'queue_full';

interface ClientState<T> {
  items: { item: T; arrival: number }[];
  /** The turn this client was last served at; 0 = never. */
  lastServed: number;
  running: number;
}

export class FairQueue<T> {
  private readonly clients = new Map<string, ClientState<T>>();
  private waiting = 0;
  private arrivals = 0;
  private turns = 0;

  constructor(private readonly options: FairQueueOptions) {}

  /** Items waiting in all. */
  get size(): number {
    return this.waiting;
  }

  /** Items `client` has waiting. */
  waitingFor(client: string): number {
    return this.clients.get(client)?.items.length ?? 0;
  }

  /** Clients known now (with items waiting or running): bounded by `maxTotal` plus what runs. */
  get knownClients(): number {
    return this.clients.size;
  }

  /** Queues `item` for `client`; undefined when queued, else which bound refused it. */
  push(client: string, item: T): FairQueueFull | undefined {
    if (this.waiting >= this.options.maxTotal) return 'queue_full';
    const state = this.clients.get(client) ?? { items: [], lastServed: 0, running: 0 };
    if (state.items.length >= this.options.maxPerClient) return 'client_full';
    state.items.push({ item, arrival: ++this.arrivals });
    this.clients.set(client, state);
    this.waiting++;
    return undefined;
  }

  /**
   * The next item, by turns: from the waiting client served longest ago. The item counts as running for
   * its client until {@link FairQueue.done}.
   */
  take(): { client: string; item: T } | undefined {
    let chosen: [string, ClientState<T>] | undefined;
    for (const entry of this.clients) {
      const head = entry[1].items[0];
      if (head === undefined) continue;
      if (chosen === undefined || isBefore(entry[1], chosen[1])) chosen = entry;
    }
    if (chosen === undefined) return undefined;
    const [client, state] = chosen;
    const { item } = state.items.shift()!;
    this.waiting--;
    state.lastServed = ++this.turns;
    state.running++;
    return { client, item };
  }

  /** An item {@link FairQueue.take} gave out for `client` has finished. */
  done(client: string): void {
    const state = this.clients.get(client);
    if (!state) return;
    state.running = Math.max(0, state.running - 1);
    if (state.running === 0 && state.items.length === 0) this.clients.delete(client);
  }

  /** Removes and returns every waiting item, in arrival order (at close). */
  drain(): T[] {
    const all = [...this.clients.values()].flatMap((state) => state.items.splice(0));
    all.sort((a, b) => a.arrival - b.arrival);
    this.waiting = 0;
    for (const [client, state] of this.clients) if (state.running === 0) this.clients.delete(client);
    return all.map((entry) => entry.item);
  }
}

function isBefore<T>(a: ClientState<T>, b: ClientState<T>): boolean {
  if (a.lastServed !== b.lastServed) return a.lastServed < b.lastServed;
  return (a.items[0]?.arrival ?? 0) < (b.items[0]?.arrival ?? 0);
}
