import { isTerminal, type RunId, type RunStatus } from '../core/types.js';
import type { GatewayChange } from '../gateway/gateway.js';
import type { Store } from '../store/store.js';

/** Ended runs remembered as counted, so a later change to one (its delivery, an ack) counts it no twice. */
const COUNTED_MAX = 10_000;

/**
 * Runs that ended since the daemon started, by status and `error_kind` (`none` when it has none): a
 * gateway watcher. A live run's status comes from the scheduler (no read); only a run that is no longer
 * live is read from the store, once, when it ends.
 */
export class RunEndCounts {
  /** `status\0error_kind` → count. */
  private readonly counts = new Map<string, number>();
  /** FIFO of counted ids (bounded): a Set keeps insertion order. */
  private readonly counted = new Set<RunId>();

  constructor(
    private readonly deps: {
      liveStatus(id: RunId): RunStatus | undefined;
      store: Pick<Store, 'run'>;
    },
  ) {}

  readonly watcher = (change: GatewayChange): void => {
    if (change.kind !== 'runs') return;
    for (const id of change.runIds) {
      if (this.counted.has(id) || this.deps.liveStatus(id) !== undefined) continue;
      const record = this.deps.store.run(id);
      if (!record || !isTerminal(record.run.status)) continue;
      this.counted.add(id);
      if (this.counted.size > COUNTED_MAX) this.counted.delete(this.counted.values().next().value as RunId);
      const key = `${record.run.status}\0${record.errorKind ?? 'none'}`;
      this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    }
  };

  /** Every (status, error kind) seen so far with its count. */
  entries(): { status: string; errorKind: string; count: number }[] {
    return [...this.counts].map(([key, count]) => {
      const [status = '', errorKind = ''] = key.split('\0');
      return { status, errorKind, count };
    });
  }
}
