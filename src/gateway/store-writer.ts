import type { Clock, TimerHandle } from '../core/clock.js';
import type { Store, StoreTx } from '../store/store.js';

export interface StoreWriterDeps {
  store: Pick<Store, 'apply'>;
  clock: Clock;
  log: (line: string) => void;
  /** First retry after a refused write; doubles up to `maxRetryMs`. @default 1000 */
  retryMs?: number;
  /** @default 30000 */
  maxRetryMs?: number;
}

interface Pending {
  tx: StoreTx;
  committed: (arg: unknown) => void;
  arg: unknown;
}

/**
 * The gateway's writes to the store, kept in order when the store refuses them (a full disk). A step
 * the scheduler has already taken (a run ended, a cancel) cannot be untaken, so its transaction waits
 * in a backlog and is retried with backoff; once the store accepts writes again the backlog commits in
 * order and each transaction's `committed` callback runs (its events reach the relay then), so the
 * store catches up with the scheduler without a restart. Admissions are different: they are refused
 * while the store fails (`canAdmit`), and one whose own write fails is undone by the caller
 * (`tryWrite` keeps nothing).
 */
export class StoreWriter {
  private readonly backlog: Pending[] = [];
  private failure: string | undefined;
  private nextAttemptAt = 0;
  private backoffMs: number;
  private timer: TimerHandle | undefined;
  private closed = false;

  constructor(private readonly deps: StoreWriterDeps) {
    this.backoffMs = deps.retryMs ?? 1000;
  }

  /** Why the store refuses writes, while it does. */
  get unavailable(): string | undefined {
    return this.failure;
  }

  /** Transactions waiting for the store. */
  get pending(): number {
    return this.backlog.length;
  }

  /**
   * Commits `tx` now, or keeps it (in order) until the store accepts writes again; `committed(arg)` runs
   * once it is committed. The callback and its argument come apart so a caller on the hot path can pass one
   * function made once, not a closure per write.
   */
  write<T>(tx: StoreTx, committed: (arg: T) => void, arg: T): void {
    if (this.backlog.length > 0 && !this.flush()) {
      this.keep(tx, committed, arg);
      return;
    }
    try {
      this.deps.store.apply(tx);
    } catch (error) {
      this.keep(tx, committed, arg);
      this.fail(error);
      return;
    }
    committed(arg);
  }

  private keep<T>(tx: StoreTx, committed: (arg: T) => void, arg: T): void {
    this.backlog.push({ tx, committed: committed as (arg: unknown) => void, arg });
  }

  /** Whether an admission may try: the store works, or its retry time has come. */
  canAdmit(): boolean {
    return this.failure === undefined || this.deps.clock.now() >= this.nextAttemptAt;
  }

  /** For an admission: commits `tx` now and answers true, or keeps nothing and answers false. */
  tryWrite(tx: StoreTx): boolean {
    if (!this.flush()) return false;
    try {
      this.deps.store.apply(tx);
      return true;
    } catch (error) {
      this.fail(error);
      return false;
    }
  }

  /** A last attempt at the backlog; what still fails is lost to this process (a restart ends its runs lost). */
  close(): void {
    this.closed = true;
    if (this.timer !== undefined) this.deps.clock.clearTimer(this.timer);
    this.timer = undefined;
    if (this.backlog.length > 0 && !this.flush()) {
      this.deps.log(`crew: ${this.backlog.length} store writes could not be made before closing`);
    }
  }

  /** Commits the backlog in order; true when it is empty. */
  private flush(): boolean {
    while (this.backlog.length > 0) {
      const next = this.backlog[0] as Pending;
      try {
        this.deps.store.apply(next.tx);
      } catch (error) {
        this.fail(error);
        return false;
      }
      this.backlog.shift();
      next.committed(next.arg);
    }
    if (this.failure !== undefined) {
      this.deps.log('crew: the store accepts writes again');
      this.failure = undefined;
      this.backoffMs = this.deps.retryMs ?? 1000;
    }
    return true;
  }

  private fail(error: unknown): void {
    const reason = error instanceof Error ? error.message : String(error);
    if (this.failure === undefined) this.deps.log(`crew: the store refuses writes: ${reason}`);
    this.failure = reason;
    this.nextAttemptAt = this.deps.clock.now() + this.backoffMs;
    this.arm();
  }

  private arm(): void {
    if (this.closed || this.timer !== undefined || this.backlog.length === 0) return;
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, this.deps.maxRetryMs ?? 30_000);
    this.timer = this.deps.clock.setTimer(() => {
      this.timer = undefined;
      if (!this.flush()) this.arm();
    }, delay);
  }
}
