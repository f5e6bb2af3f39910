/**
 * The SEL port (DESIGN §1, §7): an append-only log of admission decisions and audit events. A failing
 * write never fails a spawn, so `write` must not throw; the JSONL writer lives in `src/sel/`.
 */
export interface SelEvent {
  ts: string;
  event_type: string;
  source: string;
  tool_name: string;
  outcome: string;
  metadata: Record<string, unknown>;
}

export interface SelSink {
  write(event: SelEvent): void;
  close(): Promise<void>;
}

/** Keeps events in memory (tests, benchmarks, `crew demo` when no home is given); bounded. */
export class MemorySel implements SelSink {
  readonly events: SelEvent[] = [];
  constructor(private readonly max = 100_000) {}
  write(event: SelEvent): void {
    if (this.events.length >= this.max) this.events.shift();
    this.events.push(event);
  }
  async close(): Promise<void> {}
}
