import type { RunView } from '../gateway/run-view.js';
import { needsHuman } from './needs-ack.js';
import { compareValues, type RunSort, sortValue } from './run-sort.js';

/** The dashboard's tabs: live, queued, each end status, and everything. */
export const TABS = [
  'live',
  'queued',
  'completed',
  'failed',
  'timed_out',
  'cancelled',
  'lost',
  'all',
] as const;
export type Tab = (typeof TABS)[number];

const LIVE = new Set(['queued', 'starting', 'running']);

/** A run and the runs it spawned (nested), at most `MAX_CHILDREN` of them shown per run. */
export interface RunNode {
  run: RunView;
  children: RunNode[];
  /** Children left out of `children`. */
  more_children: number;
}

/**
 * One row of the runs table: a top-level run with its nested tree, or a wave folded into one row (its
 * member counts by status, and up to `MAX_MEMBERS` members with their trees).
 */
export type Row =
  | { kind: 'run'; parent: string; node: RunNode }
  | {
      kind: 'wave';
      parent: string;
      batch_id: string;
      size: number;
      by_status: Record<string, number>;
      members: RunNode[];
      more_members: number;
    };

export interface RunPage {
  rows: Row[];
  /** Rows matching the tab and filter. */
  total: number;
  offset: number;
  limit: number;
}

/** A completion event the operator has not acknowledged: one per top-level run or wave. */
export interface Notification {
  run_id: string;
  batch_id?: string;
  parent: string;
  agent: string;
  status: string;
  ended_at?: string;
  members?: number;
  task_preview: string;
}

export interface PageOptions {
  tab?: Tab;
  query?: string;
  offset?: number;
  limit?: number;
  sort?: RunSort;
  /** Now (ms), for sorting live runs by their duration so far. */
  now?: number;
}

export const MAX_CHILDREN = 20;
export const MAX_MEMBERS = 50;
export const MAX_PAGE = 200;

interface Unit {
  key: string;
  parent: string;
  /** Member run ids in admission order (one for a single run). */
  ids: string[];
}

/**
 * The dashboard's read model of every run in history (bounded by `max`, the newest kept), updated from
 * the gateway's change notices. Tabs, text filter, grouping and paging are answered from here so a page
 * of 50 rows out of 50,000 runs is one pass over memory, not a store scan per query.
 */
export class RunIndex {
  private readonly views = new Map<string, RunView>();
  /** Top-level rows (single runs and waves) in admission order. */
  private readonly units = new Map<string, Unit>();
  /** The same rows as an array (newest last); entries before `head` were evicted. */
  private readonly order: Unit[] = [];
  private head = 0;
  /** Rows older than every row of `order`, newest first: history read after the fact (`addOlder`). */
  private readonly older: Unit[] = [];
  /**
   * Rows added ahead of their turn (`addAhead`: live runs older than the history read so far), oldest
   * of all until `addOlder` reaches them and puts them in their place.
   */
  private readonly ahead: Unit[] = [];
  /** Runs added ahead of their turn, not yet put in their place. */
  private readonly aheadIds = new Set<string>();
  /** Nested runs by their parent run's id, in admission order. */
  private readonly children = new Map<string, string[]>();
  private readonly statusCounts = new Map<string, number>();
  /** Kept on every change, so the capacity header reads them without a pass over history. */
  private runningTopLevel = 0;
  private runningNested = 0;
  private queuedSingles = 0;
  private queuedWaveMembers = 0;
  /** Top-level rows whose completion event waits for an ack (see `notifications`). */
  private readonly notifiable = new Set<Unit>();
  /** The row of each top-level run. */
  private readonly unitOf = new Map<string, Unit>();
  /** Live top-level runs (wave members each on their own): what `live` lists, running first. */
  private readonly liveTop = new Set<string>();
  /** Each run's admission order (a tie-break that survives status changes). */
  private readonly admitted = new Map<string, number>();
  private nextAdmitted = 0;
  /** Admission numbers for history added after the fact count down, below every run added before. */
  private nextOlder = -1;

  constructor(
    /** The most runs kept; beyond it the oldest row goes first (history is bounded in the store too). */
    private readonly max = 100_000,
  ) {}

  get size(): number {
    return this.views.size;
  }

  get(id: string): RunView | undefined {
    return this.views.get(id);
  }

  /** Rows, all told. */
  get rowCount(): number {
    return this.order.length - this.head + this.older.length + this.ahead.length;
  }

  /** Rows in their place (newest first, none missing between them): all but those added ahead. */
  get placedRows(): number {
    return this.order.length - this.head + this.older.length;
  }

  /** The `i`-th row, newest first. */
  private unitAt(i: number): Unit | undefined {
    const newer = this.order.length - this.head;
    if (i < newer) return this.order[this.order.length - 1 - i];
    const j = i - newer;
    return j < this.older.length ? this.older[j] : this.ahead[j - this.older.length];
  }

  /**
   * Adds runs recorded before every run here, newest first (history read a page at a time after the
   * newest). A run added ahead of its turn (`addAhead`) is put in its place when its turn comes.
   */
  addOlder(runs: readonly RunView[]): void {
    for (const run of runs) {
      if (this.aheadIds.has(run.id)) this.place(run.id);
      if (this.views.has(run.id)) continue;
      this.insertOlder(run);
    }
    while (this.views.size > this.max) this.evictOldest();
  }

  /**
   * Adds runs (newest first) older than every run here but not next to them: live runs further back
   * than the history read so far. They count and list at once, and move to their place in `addOlder`.
   */
  addAhead(runs: readonly RunView[]): void {
    for (const run of runs) {
      if (this.views.has(run.id)) continue;
      this.insertOlder(run, true);
      this.aheadIds.add(run.id);
    }
  }

  private insertOlder(run: RunView, ahead = false): void {
    this.bump(run, 1);
    this.views.set(run.id, run);
    this.admitted.set(run.id, this.nextOlder--);
    const parentRun = run.parent.startsWith('run:') ? run.parent.slice(4) : undefined;
    if (parentRun !== undefined && run.depth > 1) {
      const list = this.children.get(parentRun);
      if (list) this.insertId(list, run.id, ahead);
      else this.children.set(parentRun, [run.id]);
      return;
    }
    const key = run.batch_id !== undefined ? `wave:${run.batch_id}` : `run:${run.id}`;
    let unit = this.units.get(key);
    if (unit) this.insertId(unit.ids, run.id, ahead);
    else {
      unit = { key, parent: run.parent, ids: [run.id] };
      this.units.set(key, unit);
      (ahead ? this.ahead : this.older).push(unit);
    }
    this.unitOf.set(run.id, unit);
    this.judge(unit);
  }

  /**
   * Puts an older run's id into a list of ids (oldest first) of a wave or a run's children. The list is
   * the runs added ahead of their turn (oldest of all), then those in place: an ahead one goes first,
   * one in place goes first of those in place, after the ahead ones (the fill has not reached them yet).
   */
  private insertId(ids: string[], id: string, ahead: boolean): void {
    if (ahead) {
      ids.unshift(id);
      return;
    }
    let at = 0;
    while (at < ids.length && this.aheadIds.has(ids[at] as string)) at++;
    ids.splice(at, 0, id);
  }

  /**
   * Puts a run added ahead of its turn in its place (the fill reached it). Within its wave or among its
   * siblings it is already there: the newest of those ahead, just before those in place.
   */
  private place(id: string): void {
    this.aheadIds.delete(id);
    this.admitted.set(id, this.nextOlder--);
    const unit = this.unitOf.get(id);
    const at = unit ? this.ahead.indexOf(unit) : -1;
    if (unit && at >= 0) {
      this.ahead.splice(at, 1);
      this.older.push(unit);
    }
  }

  /** Adds or replaces runs (oldest first for new ones, so rows keep admission order). */
  upsert(runs: readonly RunView[]): void {
    for (const run of runs) {
      const old = this.views.get(run.id);
      if (old) this.bump(old, -1);
      this.bump(run, 1);
      this.views.set(run.id, run);
      if (old) {
        const unit = this.unitOf.get(run.id);
        if (unit) this.judge(unit);
        continue;
      }
      this.admitted.set(run.id, this.nextAdmitted++);
      const parentRun = run.parent.startsWith('run:') ? run.parent.slice(4) : undefined;
      if (parentRun !== undefined && run.depth > 1) {
        const list = this.children.get(parentRun) ?? [];
        list.push(run.id);
        this.children.set(parentRun, list);
      } else {
        const key = run.batch_id !== undefined ? `wave:${run.batch_id}` : `run:${run.id}`;
        const unit = this.units.get(key);
        let target = unit;
        if (target) target.ids.push(run.id);
        else {
          target = { key, parent: run.parent, ids: [run.id] };
          this.units.set(key, target);
          this.order.push(target);
        }
        this.unitOf.set(run.id, target);
        this.judge(target);
      }
    }
    while (this.views.size > this.max) this.evictOldest();
  }

  /** Live runs under `id` (a cancel cascades to them). */
  liveDescendants(id: string): number {
    let count = 0;
    const visit = (parent: string, depth: number) => {
      if (depth >= 64) return;
      for (const child of this.children.get(parent) ?? []) {
        if (LIVE.has(this.views.get(child)?.status ?? '')) count++;
        visit(child, depth + 1);
      }
    };
    visit(id, 0);
    return count;
  }

  /** Runs per status, and per tab. */
  counts(): Record<Tab, number> {
    return tabCounts(this.statusCounts, this.views.size);
  }

  /** Live top-level runs holding a permit vs live nested runs (which take none). */
  running(): { top_level: number; nested: number } {
    return { top_level: this.runningTopLevel, nested: this.runningNested };
  }

  /** Queued top-level runs: single spawns and wave members (they have separate bounds). */
  queued(): { singles: number; wave_members: number } {
    return { singles: this.queuedSingles, wave_members: this.queuedWaveMembers };
  }

  /**
   * Rows newest first (or by `sort`), those with a run in `tab` whose id, agent, parent, batch or task
   * match `query`. `live` lists each live top-level run on its own row (a wave's members too), running
   * and starting before queued, so what runs is never under what waits.
   */
  page(options: PageOptions = {}): RunPage {
    const tab = options.tab ?? 'all';
    const query = (options.query ?? '').trim().toLowerCase();
    const offset = Math.max(0, Math.floor(options.offset ?? 0));
    const limit = Math.min(MAX_PAGE, Math.max(1, Math.floor(options.limit ?? 50)));
    if (tab === 'live') return this.livePage(query, offset, limit, options.sort, options.now);
    if (options.sort) return this.sortedPage(tab, query, offset, limit, options.sort, options.now);
    const rows: Row[] = [];
    const count = this.rowCount;
    if (tab === 'all' && query === '') {
      // Every row matches: slice, no pass.
      for (let i = offset; i < count && rows.length < limit; i++)
        rows.push(this.rowOf(this.unitAt(i) as Unit));
      return { rows, total: count, offset, limit };
    }
    let total = 0;
    for (let i = 0; i < count; i++) {
      const unit = this.unitAt(i) as Unit;
      if (!this.unitMatches(unit, tab, query)) continue;
      if (total >= offset && rows.length < limit) rows.push(this.rowOf(unit));
      total++;
    }
    return { rows, total, offset, limit };
  }

  private livePage(query: string, offset: number, limit: number, sort?: RunSort, now = Date.now()): RunPage {
    const rank = (id: string) => (this.views.get(id)?.status === 'queued' ? 1 : 0);
    const seq = (id: string) => this.admitted.get(id) ?? 0;
    const created = (id: string) => this.views.get(id)?.created_at ?? '';
    const hits = [...this.liveTop].filter((id) => query === '' || this.treeMatches(id, query));
    const byValue = sort ? new Map(hits.map((id) => [id, this.valueOf(sort, [id], now)])) : undefined;
    hits.sort((a, b) => {
      if (sort && byValue) {
        const c = compareValues(byValue.get(a) as number | string, byValue.get(b) as number | string);
        if (c !== 0) return sort.descending ? -c : c;
      } else if (rank(a) !== rank(b)) return rank(a) - rank(b);
      const c = compareValues(created(b), created(a));
      return c !== 0 ? c : seq(b) - seq(a);
    });
    const rows: Row[] = hits.slice(offset, offset + limit).map((id) => ({
      kind: 'run',
      parent: this.views.get(id)?.parent ?? '',
      node: this.nodeOf(id, 0),
    }));
    return { rows, total: hits.length, offset, limit };
  }

  private sortedPage(
    tab: Tab,
    query: string,
    offset: number,
    limit: number,
    sort: RunSort,
    now = Date.now(),
  ): RunPage {
    const hits: { unit: Unit; value: number | string; at: number }[] = [];
    const count = this.rowCount;
    for (let i = 0; i < count; i++) {
      const unit = this.unitAt(i) as Unit;
      if (!this.unitMatches(unit, tab, query)) continue;
      hits.push({ unit, value: this.valueOf(sort, unit.ids, now), at: i });
    }
    hits.sort((a, b) => {
      const c = compareValues(a.value, b.value);
      // Ties: newest first (`at` counts rows from the newest).
      return c !== 0 ? (sort.descending ? -c : c) : a.at - b.at;
    });
    return {
      rows: hits.slice(offset, offset + limit).map((hit) => this.rowOf(hit.unit)),
      total: hits.length,
      offset,
      limit,
    };
  }

  private valueOf(sort: RunSort, ids: readonly string[], now: number): number | string {
    const runs = ids.map((id) => this.views.get(id)).filter((r): r is RunView => r !== undefined);
    return sortValue(sort.key, runs, now);
  }

  private treeMatches(id: string, query: string): boolean {
    let hit = false;
    const visit = (at: string, depth: number) => {
      const run = this.views.get(at);
      if (!run || hit) return;
      if (matches(run, query)) hit = true;
      else if (depth < 64) for (const child of this.children.get(at) ?? []) visit(child, depth + 1);
    };
    visit(id, 0);
    return hit;
  }

  /** The first run of each row owed an ack, newest first, at most `limit` (what ack-all acks). */
  notifiableRuns(limit: number): string[] {
    const out: string[] = [];
    const count = this.rowCount;
    for (let i = 0; i < count && out.length < limit; i++) {
      const unit = this.unitAt(i) as Unit;
      if (this.notifiable.has(unit) && unit.ids[0] !== undefined) out.push(unit.ids[0]);
    }
    return out;
  }

  /** Unacknowledged completion events, newest first: a single top-level run ended, or a whole wave. */
  notifications(limit = 20): { items: Notification[]; total: number } {
    const items: Notification[] = [];
    const total = this.notifiable.size;
    const wanted = Math.min(limit, total);
    const count = this.rowCount;
    for (let i = 0; i < count && items.length < wanted; i++) {
      const unit = this.unitAt(i) as Unit;
      if (!this.notifiable.has(unit)) continue;
      const members = unit.ids.map((id) => this.views.get(id)).filter((r): r is RunView => r !== undefined);
      const first = members[0] as RunView;
      const last = members.reduce((a, b) => ((b.ended_at ?? '') > (a.ended_at ?? '') ? b : a), first);
      items.push({
        run_id: first.id,
        ...(first.batch_id !== undefined ? { batch_id: first.batch_id, members: members.length } : {}),
        parent: first.parent,
        agent: first.agent,
        status: members.length === 1 ? first.status : summary(members),
        ...(last.ended_at !== undefined ? { ended_at: last.ended_at } : {}),
        task_preview: first.task_preview,
      });
    }
    return { items, total };
  }

  /**
   * Whether a row's completion event is out, unacknowledged (every member ended, none acked) and needs a
   * person: a member failed, was lost or undeliverable, or the parent is a person (see `needsHuman`).
   */
  private judge(unit: Unit): void {
    let ok = unit.ids.length > 0 && !unit.parent.startsWith('run:');
    let human = false;
    for (const id of unit.ids) {
      const run = this.views.get(id);
      if (!ok || !run) break;
      if (LIVE.has(run.status) || run.acked_at !== undefined) ok = false;
      else if (!human && needsHuman(run)) human = true;
    }
    if (ok && human) this.notifiable.add(unit);
    else this.notifiable.delete(unit);
  }

  private unitMatches(unit: Unit, tab: Tab, query: string): boolean {
    if (tab === 'all' && query === '') return true;
    // The common row: one run without nested runs.
    if (unit.ids.length === 1 && !this.children.has(unit.ids[0] as string)) {
      const run = this.views.get(unit.ids[0] as string);
      if (!run) return false;
      const tabHit = tab === 'all' || (tab === 'live' ? LIVE.has(run.status) : run.status === tab);
      return tabHit && (query === '' || matches(run, query));
    }
    let tabHit = tab === 'all';
    let queryHit = query === '';
    const visit = (id: string, depth: number) => {
      const run = this.views.get(id);
      if (!run) return;
      if (!tabHit) tabHit = tab === 'live' ? LIVE.has(run.status) : run.status === tab;
      if (!queryHit) queryHit = matches(run, query);
      if (tabHit && queryHit) return;
      if (depth < 64) for (const child of this.children.get(id) ?? []) visit(child, depth + 1);
    };
    for (const id of unit.ids) {
      visit(id, 0);
      if (tabHit && queryHit) return true;
    }
    return tabHit && queryHit;
  }

  private rowOf(unit: Unit): Row {
    if (!unit.key.startsWith('wave:')) {
      return { kind: 'run', parent: unit.parent, node: this.nodeOf(unit.ids[0] as string, 0) };
    }
    const byStatus: Record<string, number> = {};
    for (const id of unit.ids) {
      const status = this.views.get(id)?.status ?? 'unknown';
      byStatus[status] = (byStatus[status] ?? 0) + 1;
    }
    return {
      kind: 'wave',
      parent: unit.parent,
      batch_id: unit.key.slice(5),
      size: unit.ids.length,
      by_status: byStatus,
      members: unit.ids.slice(0, MAX_MEMBERS).map((id) => this.nodeOf(id, 0)),
      more_members: Math.max(0, unit.ids.length - MAX_MEMBERS),
    };
  }

  private nodeOf(id: string, depth: number): RunNode {
    const run = this.views.get(id) as RunView;
    const kids = depth < 64 ? (this.children.get(id) ?? []) : [];
    return {
      run,
      children: kids.slice(0, MAX_CHILDREN).map((child) => this.nodeOf(child, depth + 1)),
      more_children: Math.max(0, kids.length - MAX_CHILDREN),
    };
  }

  private bump(run: RunView, by: number): void {
    this.statusCounts.set(run.status, (this.statusCounts.get(run.status) ?? 0) + by);
    if (!(run.depth > 1 && run.parent.startsWith('run:'))) {
      if (by > 0 && LIVE.has(run.status)) this.liveTop.add(run.id);
      else if (by < 0) this.liveTop.delete(run.id);
    }
    if (run.status === 'running' || run.status === 'starting') {
      if (run.depth > 1) this.runningNested += by;
      else this.runningTopLevel += by;
    } else if (run.status === 'queued' && run.depth <= 1) {
      if (run.batch_id !== undefined) this.queuedWaveMembers += by;
      else this.queuedSingles += by;
    }
  }

  /** Drops the oldest top-level row with its members and nested trees. */
  private evictOldest(): void {
    const first = this.ahead.pop() ?? this.older.pop() ?? this.order[this.head];
    if (!first) {
      // Only orphans are left (nested runs whose ancestor went first): drop the oldest view.
      const id = this.views.keys().next().value;
      if (id !== undefined) this.drop(id);
      return;
    }
    this.units.delete(first.key);
    this.notifiable.delete(first);
    for (const id of first.ids) {
      this.unitOf.delete(id);
      this.aheadIds.delete(id);
    }
    if (first === this.order[this.head]) {
      this.order[this.head] = undefined as unknown as Unit;
      this.head++;
      // Compact now and then, so evicted slots do not pile up.
      if (this.head > 1024 && this.head * 2 > this.order.length) {
        this.order.splice(0, this.head);
        this.head = 0;
      }
    }
    for (const id of first.ids) this.dropTree(id, 0);
  }

  private dropTree(id: string, depth: number): void {
    const kids = this.children.get(id) ?? [];
    this.children.delete(id);
    if (depth < 64) for (const child of kids) this.dropTree(child, depth + 1);
    this.drop(id);
  }

  private drop(id: string): void {
    const view = this.views.get(id);
    if (!view) return;
    this.bump(view, -1);
    this.views.delete(id);
    this.admitted.delete(id);
    this.aheadIds.delete(id);
  }
}

function matches(run: RunView, query: string): boolean {
  return (
    run.id.toLowerCase().includes(query) ||
    run.agent.toLowerCase().includes(query) ||
    run.parent.toLowerCase().includes(query) ||
    (run.batch_id ?? '').toLowerCase().includes(query) ||
    run.task_preview.toLowerCase().includes(query)
  );
}

function summary(members: RunView[]): string {
  const counts = new Map<string, number>();
  for (const m of members) counts.set(m.status, (counts.get(m.status) ?? 0) + 1);
  return [...counts].map(([s, n]) => `${n} ${s}`).join(', ');
}

/** Runs per tab from runs per status (`all` given: the runs held, or the store's total capped). */
export function tabCounts(byStatus: ReadonlyMap<string, number>, all: number): Record<Tab, number> {
  const of = (s: string) => byStatus.get(s) ?? 0;
  return {
    live: of('queued') + of('starting') + of('running'),
    queued: of('queued'),
    completed: of('completed'),
    failed: of('failed'),
    timed_out: of('timed_out'),
    cancelled: of('cancelled'),
    lost: of('lost'),
    all,
  };
}
