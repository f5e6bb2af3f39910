import type { RunRecord } from '../store/store.js';
import { type RunView, toRunView } from './run-view.js';
import type { Scope } from './visibility.js';

/** Scopes whose lists are kept at once: a few parents poll; past this the oldest is dropped. */
export const MAX_CACHED_LISTS = 64;

export interface RunListCacheDeps {
  /**
   * The store's version: its count of committed write transactions (`Store.stats().transactions`). Every
   * change to a stored run (a status, its info, its delivery, a prune) is one, and the gateway's store is
   * written by this process alone, so an unchanged count means unchanged records.
   */
  version: () => number;
  /** The records a scope sees, newest first (`Visibility.records`): what is kept. */
  read: (scope: Scope, limit: number) => RunRecord[];
}

/**
 * The stored half of `spawn_list` between writes (issue 32 §4): which runs a scope sees and their views
 * as stored are a function of the store alone, so they are read once per store version and served from
 * memory until the next write, instead of two SQLite queries, 50 row decodes and 50 redacted previews a
 * call. What changes without a write (live usage, a provider's hold, the memory pause, the placement's
 * view) is not kept here: the caller lays it over each call.
 *
 * What it hands out is shared between calls: callers must not change it (nobody does; views are copied
 * with a spread wherever one is changed).
 */
export class RunListCache {
  private version = Number.NaN;
  private readonly lists = new Map<string, readonly RunRecord[]>();
  /** Keyed by the kept record object, so a view lives exactly as long as its record is kept. */
  private readonly views = new WeakMap<RunRecord, RunView>();

  constructor(private readonly deps: RunListCacheDeps) {}

  /** The records `scope` sees (at most `limit`), as of the store's current version. */
  records(scope: Scope, limit: number): readonly RunRecord[] {
    const version = this.deps.version();
    if (version !== this.version) {
      this.lists.clear();
      this.version = version;
    }
    const key = `${limit} ${scope.kind === 'operator' ? '*' : `:${scope.parent}`}`;
    const kept = this.lists.get(key);
    if (kept) return kept;
    const read = this.deps.read(scope, limit);
    if (this.lists.size >= MAX_CACHED_LISTS) {
      const oldest = this.lists.keys().next().value;
      if (oldest !== undefined) this.lists.delete(oldest);
    }
    this.lists.set(key, read);
    return read;
  }

  /** `toRunView(record)`, computed once per kept record. */
  view(record: RunRecord): RunView {
    let view = this.views.get(record);
    if (!view) {
      view = toRunView(record);
      this.views.set(record, view);
    }
    return view;
  }

  /** Lists kept now (for tests). */
  size(): number {
    return this.lists.size;
  }
}
