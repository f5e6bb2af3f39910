import type { ParentKey } from '../core/types.js';
import type { OutboxEvent } from '../store/store.js';

/** A completion event (or digest) as a parent receives it. */
export interface DeliveredEvent {
  id: string;
  parent: ParentKey;
  kind: OutboxEvent['kind'];
  run_ids: string[];
  batch_id?: string;
  text: string;
}

/**
 * Somewhere a parent's events are pushed: an MCP session (logging notifications), a hosted chat (an
 * injection turn), Slack (a DM), the CLI's events log. The relay attaches one per parent and calls
 * `deliver` until it resolves, with backoff, up to the delivery timeout (`relay.ts`).
 *
 * The contract (test/sinks/sink-conformance.ts, which every sink passes):
 * - `deliver` resolves once the parent holds the event, and rejects when it could not hand it over (the
 *   relay retries; an event is never dropped by a sink).
 * - A sink may be handed the same event twice (a retry after a timeout whose first attempt did land), so
 *   it deduplicates by event id: the parent sees each event once.
 * - Events handed over one after another reach the parent in that order.
 *
 * Left out: which events a parent gets and when (the relay's), and rendering the text (the gateway's).
 */
export interface Sink {
  deliver(event: DeliveredEvent): Promise<void>;
}
