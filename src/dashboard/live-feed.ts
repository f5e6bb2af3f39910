/**
 * The dashboard's live messages (`/api/ws`): each carries a sequence number; the last `max` are kept so a
 * client that reconnects resumes after its last one. A client further behind than the buffer, or from
 * another daemon process (`epoch`), is told to reload a snapshot instead.
 */

/** A typed message without its number; see `LiveMessage`. */
export type LiveBody =
  | { type: 'runs'; runs: unknown[] }
  | { type: 'refusal'; refusal: unknown }
  | { type: 'ack'; event_id: string; run_ids: string[] }
  | { type: 'capacity'; capacity: unknown }
  /** The read model now holds all of history: pages, counts and notifications read before were partial. */
  | { type: 'history'; complete: true };

export type LiveMessage = LiveBody & { seq: number };

export type Resume = { kind: 'replay'; messages: LiveMessage[] } | { kind: 'snapshot' };

export class LiveFeed {
  private readonly buffer: LiveMessage[] = [];
  private readonly subscribers = new Set<(message: LiveMessage) => void>();
  private seq = 0;
  private readonly max: number;

  constructor(
    /** Names this process's numbering: a client holding another epoch's numbers reloads. */
    readonly epoch: string,
    options: {
      /** @default 2000 */
      max?: number;
    } = {},
  ) {
    this.max = options.max ?? 2000;
  }

  get lastSeq(): number {
    return this.seq;
  }

  get buffered(): number {
    return this.buffer.length;
  }

  get subscriberCount(): number {
    return this.subscribers.size;
  }

  publish(body: LiveBody): LiveMessage {
    this.seq += 1;
    const message = { ...body, seq: this.seq } as LiveMessage;
    this.buffer.push(message);
    if (this.buffer.length > this.max) this.buffer.splice(0, this.buffer.length - this.max);
    for (const subscriber of this.subscribers) subscriber(message);
    return message;
  }

  /** What a client that saw everything up to `seq` of `epoch` needs: the rest, or a snapshot. */
  resume(epoch: string, seq: number): Resume {
    if (epoch !== this.epoch || !Number.isInteger(seq) || seq < 0 || seq > this.seq)
      return { kind: 'snapshot' };
    if (seq === this.seq) return { kind: 'replay', messages: [] };
    const first = this.buffer[0]?.seq ?? this.seq + 1;
    if (seq + 1 < first) return { kind: 'snapshot' };
    return { kind: 'replay', messages: this.buffer.slice(seq + 1 - first) };
  }

  subscribe(fn: (message: LiveMessage) => void): () => void {
    this.subscribers.add(fn);
    return () => this.subscribers.delete(fn);
  }
}
