import type { RunView } from '../gateway/run-view.js';
import type { RunIndex } from './run-index.js';

/** The store's history as the dashboard reads it: a page at a time, newest first. */
export interface DashboardHistory {
  /**
   * Runs newest first, at most `limit`: those recorded before run `before` when given, only live ones
   * when `live` (indexed reads: a page costs the page, not the history behind it).
   */
  runs(query: { before?: string; live?: boolean; ids?: string[]; limit: number }): RunView[];
  /** Runs per status in the store (the header's counts until the read model holds all of history). */
  statusCounts(): Map<string, number>;
}

/** Runs read with the first page: enough for its rows, few enough that it costs the page. */
export const FIRST_RUNS = 500;
/** Runs read per turn of the event loop while the rest of history fills in. */
export const FILL_RUNS = 1000;
/** Live runs read at the first page (bounded by the cap and the queue bounds; this is a backstop). */
const LIVE_MAX = 100_000;

/**
 * Fills the dashboard's read model from the store newest first: the first page reads the newest runs
 * and every live one, the rest of history follows a page per turn (`step`), or at once when a read
 * needs all of it (`finish`). Until then the index holds the newest runs in place and the live ones
 * further back ahead of their place.
 */
export class HistoryFill {
  private cursor: string | undefined;
  private done = false;
  /** The newest run read at the start: runs recorded before it are history, those after it are new. */
  private newest: string | undefined;

  constructor(
    private readonly history: DashboardHistory,
    private readonly index: RunIndex,
    private readonly max: number,
    /** Runs read at the start and per step (tests read small histories in several pages). */
    private readonly sizes = { first: FIRST_RUNS, step: FILL_RUNS },
  ) {}

  get complete(): boolean {
    return this.done;
  }

  /** Reads the newest runs and the live ones; true when that was all of history. */
  start(): boolean {
    const first = Math.min(this.sizes.first, this.max);
    const newest = this.history.runs({ limit: first });
    this.index.addOlder(newest);
    this.cursor = newest.at(-1)?.id;
    this.newest = newest[0]?.id;
    if (newest.length < first || this.index.size >= this.max) this.done = true;
    else
      this.index.addAhead(this.history.runs({ live: true, before: this.cursor as string, limit: LIVE_MAX }));
    return this.done;
  }

  /** Reads the next page of history; true once all of it (or `max` runs) is in. */
  step(limit = this.sizes.step): boolean {
    if (this.done || this.cursor === undefined) {
      this.done = true;
      return true;
    }
    const page = this.history.runs({ before: this.cursor, limit });
    this.index.addOlder(page);
    this.cursor = page.at(-1)?.id ?? this.cursor;
    if (page.length < limit || this.index.size >= this.max) this.done = true;
    return this.done;
  }

  /** Reads the rest of history now (a read that needs all of it). */
  finish(): void {
    while (!this.step(10 * this.sizes.step)) {}
  }

  /**
   * Of changed runs, those the index takes now: those it holds and runs admitted since the start. History
   * the fill has not reached stays out (the fill reads it as it is then); telling them apart is one
   * indexed read of the ids the index lacks, and only while history fills in. Clocks are no help here:
   * a wall clock set back would file new runs under history.
   */
  admit(runs: RunView[]): RunView[] {
    if (this.done || this.newest === undefined) return runs;
    const unknown = runs.filter((r) => this.index.get(r.id) === undefined).map((r) => r.id);
    if (unknown.length === 0) return runs;
    const old = new Set(
      this.history.runs({ ids: unknown, before: this.newest, limit: unknown.length }).map((r) => r.id),
    );
    return old.size === 0 ? runs : runs.filter((r) => !old.has(r.id));
  }
}
