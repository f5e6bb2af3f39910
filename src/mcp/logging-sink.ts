import type { DeliveredEvent, Sink } from '../gateway/sink.js';

/** Event ids one MCP session remembers for deduplication (the oldest are forgotten first). */
export const REMEMBERED_EVENT_IDS = 10_000;

/**
 * An MCP session's {@link Sink}: completion events pushed as logging notifications once the client asked
 * for them (`logging/setLevel`). A notification has no answer, so a retried event (the relay's attempt
 * timed out while the first had been sent) would show twice; the ids already sent are remembered, up to
 * {@link REMEMBERED_EVENT_IDS}, so the session shows each event once.
 */
export class LoggingSink implements Sink {
  private readonly sent = new Set<string>();

  constructor(
    private readonly send: (event: DeliveredEvent) => Promise<void>,
    private readonly rememberIds = REMEMBERED_EVENT_IDS,
  ) {}

  async deliver(event: DeliveredEvent): Promise<void> {
    if (this.sent.has(event.id)) return;
    await this.send(event);
    this.sent.add(event.id);
    if (this.sent.size > this.rememberIds) {
      const oldest = this.sent.values().next().value;
      if (oldest !== undefined) this.sent.delete(oldest);
    }
  }

  /** How many ids it remembers now (bounded by `rememberIds`). */
  remembered(): number {
    return this.sent.size;
  }
}
