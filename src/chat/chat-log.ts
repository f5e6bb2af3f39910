import type { ChatEvent, NumberedChatEvent } from './chat-event.js';

/**
 * A chat's events for its subscribers: each numbered, the last `backlog` kept so a subscriber that
 * (re)connects with the last number it saw misses nothing still held. A listener that throws is
 * dropped; it never breaks the chat.
 */
export class ChatLog {
  private readonly events: NumberedChatEvent[] = [];
  private readonly listeners = new Set<(event: NumberedChatEvent) => void>();
  private seq = 0;
  private ended = false;

  /**
   * @param backlog events kept for late subscribers. @default 1000
   * @param firstSeq the number before the first event's (a restored chat starts above its earlier lives). @default 0
   */
  constructor(
    private readonly now: () => number,
    private readonly backlog = 1000,
    firstSeq = 0,
  ) {
    this.seq = firstSeq;
  }

  get lastSeq(): number {
    return this.seq;
  }

  get isEnded(): boolean {
    return this.ended;
  }

  emit(event: ChatEvent): void {
    if (this.ended) return;
    const numbered: NumberedChatEvent = { ...event, seq: ++this.seq, at: new Date(this.now()).toISOString() };
    this.events.push(numbered);
    if (this.events.length > this.backlog) this.events.splice(0, this.events.length - this.backlog);
    for (const listener of [...this.listeners]) {
      try {
        listener(numbered);
      } catch {
        this.listeners.delete(listener);
      }
    }
    if (event.type === 'closed') {
      this.ended = true;
      this.listeners.clear();
    }
  }

  /**
   * Calls `listener` with every held event numbered above `sinceSeq` (all held ones by default), then
   * with each new one until unsubscribed or the chat closes. Returns the unsubscribe function.
   */
  subscribe(listener: (event: NumberedChatEvent) => void, sinceSeq = 0): () => void {
    for (const event of this.events) if (event.seq > sinceSeq) listener(event);
    if (this.ended) return () => {};
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
