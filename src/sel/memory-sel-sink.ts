import type { Clock } from '../core/clock.js';
import { type SelEvent, type SelRecord, toSelRecord } from './sel-event.js';
import type { SelSink } from './sel-sink.js';

/** A {@link SelSink} that keeps records in memory, redacted exactly as the file writer stores them. */
export class MemorySelSink implements SelSink {
  readonly records: SelRecord[] = [];
  private closed = false;

  constructor(private readonly clock: Clock) {}

  write(event: SelEvent): void {
    if (!this.closed) this.records.push(toSelRecord(event, this.clock.now()));
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  /** The records with one outcome, for assertions. */
  withOutcome(outcome: string): SelRecord[] {
    return this.records.filter((record) => record.outcome === outcome);
  }
}
