import type { SelEvent } from './sel-event.js';

/**
 * The SEL port: where admission decisions and audit events go. `write` never throws and never waits:
 * a failing security log must not turn into a failing spawn. Records are redacted by the sink, so a
 * caller cannot leak task text into the log by forgetting to. Left out: reading the log back.
 */
export interface SelSink {
  write(event: SelEvent): void;
  /** Writes what is pending and releases the file; later writes are dropped. */
  close(): Promise<void>;
}
