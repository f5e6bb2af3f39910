import type { RunId } from '../../core/types.js';

/**
 * The Redis keys of one cluster (`crew:<name>:…`) besides BullMQ's own: each gateway's two streams, the
 * registry, the admission lock, page answers, forwarded turns' end marks, lost claims and the shared cap.
 */
export class ClusterKeys {
  /** The namespace: BullMQ's prefix and queue name, `crew:<name>`. */
  readonly ns: string;

  constructor(prefix: string, name: string) {
    this.ns = `${prefix}:${name}`;
  }

  /** A gateway's outcome stream: what its runs' executing gateways report back (and page answers). */
  out(gateway: string): string {
    return `${this.ns}:gw:${gateway}:out`;
  }

  /** A gateway's command stream: cancel, steer, page and turn requests for runs it executes. */
  cmd(gateway: string): string {
    return `${this.ns}:gw:${gateway}:cmd`;
  }

  /** The registry: gateway name → its entry (JSON), published every refresh. */
  gateways(): string {
    return `${this.ns}:gateways`;
  }

  /** The cluster's admission lock. */
  admit(): string {
    return `${this.ns}:admit`;
  }

  /** BullMQ's wait list. */
  wait(): string {
    return `${this.ns}:wait`;
  }

  /** BullMQ's active list. */
  active(): string {
    return `${this.ns}:active`;
  }

  /** The prefix of every job's hash (`crew:<name>:<job id>`). */
  jobPrefix(): string {
    return `${this.ns}:`;
  }

  /** An answer to page request `requestId`. */
  page(requestId: string): string {
    return `${this.ns}:page:${requestId}`;
  }

  /** The claim that run `runId` was reported lost (so it is reported once); `''` gives the prefix. */
  lost(runId: RunId): string {
    return `${this.ns}:lost:${runId}`;
  }

  /** The end mark of forwarded turn `runId`. */
  turn(runId: RunId): string {
    return `${this.ns}:turn:${runId}`;
  }

  /** The gateways waiting for a provider slot, by when each first found none (fair provider slots). */
  slotWaiters(): string {
    return `${this.ns}:slot-waiters`;
  }

  /** When each waiter's place lapses unless it asks again. */
  slotLeases(): string {
    return `${this.ns}:slot-leases`;
  }

  /** The shared provider cap's state (one key for the cluster). */
  cap(): string {
    return `${this.ns}:provider-cap`;
  }
}
