import type { Clock, TimerHandle } from '../core/clock.js';
import { MinHeap } from '../core/min-heap.js';
import type { Conversation } from '../core/scheduler-types.js';
import type { RunId } from '../core/types.js';
import type { Store } from '../store/store.js';
import type { TranscriptStore } from '../transcripts/transcript-store.js';

export interface ReaperOptions {
  clock: Clock;
  store: Store;
  transcripts: TranscriptStore;
  epoch: number;
  /** `agent.subagent_result_ttl_secs`: a transcript is kept this long after delivery or undeliverable. */
  resultTtlMs: number;
  /** `agent.keep_ttl_secs`: idle kept conversations (and their transcripts) last this long. */
  keepTtlMs: number;
  /** `agent.max_kept_conversations`. */
  maxKept: number;
  idleConversations: () => Conversation[];
  /** Releases a conversation (with its notice event); the gateway owns that transition. */
  release: (conversationId: string, reason: 'expired' | 'evicted') => void;
  /** Whether a run belongs to a kept conversation (its transcript lives as long as the conversation). */
  isKept: (runId: RunId) => boolean;
  /** Conversations not released: their runs stay in history as long as they do. */
  liveConversations: () => string[];
  /** `agent.run_retention_secs`: ended, settled runs admitted longer ago are deleted. */
  retentionMs: number;
  /** `agent.run_history_max`: beyond this many runs the oldest ended, settled ones are deleted. */
  historyMax: number;
  /** How often the reaper looks, at most. @default 60000 */
  intervalMs?: number;
  /** Said when history could not be pruned (the store refused a write). */
  log?: (line: string) => void;
  /**
   * Inherited runs (settled before this start, transcript not pruned) read from the store per pass, at
   * most: a backlog larger than this is worked off over the next passes. @default 10000
   */
  backlogPerPass?: number;
}

/** Runs deleted per transaction while pruning history: short transactions between admissions. */
export const HISTORY_BATCH = 500;
/** Batches per pass at most; a backlog larger than this is worked off over the next passes. */
const HISTORY_BATCHES_PER_PASS = 200;
/** Inherited runs read per store query (one page of `unprunedSettled`). */
const BACKLOG_PAGE = 500;

/**
 * Prunes transcripts `resultTtl` after their event settled (delivered or undeliverable; kept
 * conversations: `keepTtl`), releases idle kept conversations past `keepTtl` or beyond `maxKept`
 * (least recently used first), and deletes history past `retention` or beyond `historyMax` runs, so a
 * daemon that runs for months stays bounded. A pruned run's `status` answers `pruned`; a deleted one
 * is `not_found`.
 *
 * What a start inherits (settled runs whose transcripts were not pruned yet, up to the whole history when
 * the daemon was down past their TTL) is not read at start: each pass reads the next pages of it from the
 * store (`backlogPerPass` runs at most), prunes what is due and keeps only what is not due yet, so a
 * restart and an idle daemon cost nothing in proportion to history (issue 32 §4). A run the pass reads
 * that also settled in this life (a recovered run) may be pruned twice: both steps are idempotent.
 */
export class Reaper {
  private readonly due = new MinHeap<RunId>();
  private timer: TimerHandle | undefined;
  private closed = false;
  /** Where the inherited backlog is read on from; undefined once it has been read through. */
  private backlog: number | undefined = 0;

  constructor(private readonly options: ReaperOptions) {}

  /** Starts the passes; the store is first read by the first pass, a page at a time. */
  start(): void {
    this.arm();
  }

  /** Reads the next pages of the inherited backlog into the heap (what is due pops in this pass). */
  private readBacklog(): void {
    const { keepTtlMs, resultTtlMs, store } = this.options;
    const budget = this.options.backlogPerPass ?? 10_000;
    for (let read = 0; this.backlog !== undefined && read < budget; ) {
      const limit = Math.min(BACKLOG_PAGE, budget - read);
      const page = store.unprunedSettled(this.backlog, limit);
      for (const run of page.runs)
        this.due.push(run.settledAt + (run.kept ? keepTtlMs : resultTtlMs), run.id);
      read += page.runs.length;
      this.backlog = page.runs.length < limit ? undefined : page.next;
    }
  }

  /** A completion event settled: its runs' transcripts become due for pruning. */
  settled(runIds: RunId[], at: number): void {
    for (const id of runIds) {
      this.due.push(at + (this.options.isKept(id) ? this.options.keepTtlMs : this.options.resultTtlMs), id);
    }
  }

  /** One pass: prune what is due, release what expired or overflows. */
  async sweep(): Promise<void> {
    const now = this.options.clock.now();
    try {
      this.readBacklog();
    } catch (error) {
      this.options.log?.(`crew: reading transcripts to prune failed: ${(error as Error).message}`);
    }
    const pruned: RunId[] = [];
    for (let at = this.due.peekKey(); at !== undefined && at <= now; at = this.due.peekKey()) {
      const id = this.due.pop() as RunId;
      await this.options.transcripts.prune(id).catch(() => undefined);
      pruned.push(id);
    }
    if (pruned.length > 0) {
      try {
        this.options.store.apply({
          epoch: this.options.epoch,
          runInfo: pruned.map((id) => ({ id, prunedAt: now })),
        });
      } catch (error) {
        this.options.log?.(`crew: recording pruned transcripts failed: ${(error as Error).message}`);
      }
    }
    const idle = this.options.idleConversations();
    let kept = idle.length;
    for (const conversation of idle) {
      if (conversation.lastUsedAt + this.options.keepTtlMs <= now) {
        this.options.release(conversation.id, 'expired');
        kept--;
      } else if (kept > this.options.maxKept) {
        this.options.release(conversation.id, 'evicted');
        kept--;
      }
    }
    await this.pruneHistory(now);
  }

  /** Deletes history in short transactions, yielding between them so admissions go on. */
  private async pruneHistory(now: number): Promise<void> {
    for (let batch = 0; batch < HISTORY_BATCHES_PER_PASS && !this.closed; batch++) {
      let pruned: ReturnType<Store['pruneHistory']>;
      try {
        pruned = this.options.store.pruneHistory({
          admittedBefore: now - this.options.retentionMs,
          keepRuns: this.options.historyMax,
          limit: HISTORY_BATCH,
          protect: this.options.liveConversations(),
        });
      } catch (error) {
        this.options.log?.(`crew: pruning run history failed: ${(error as Error).message}`);
        return;
      }
      for (const run of pruned.runs) {
        if (!run.transcriptPruned) await this.options.transcripts.prune(run.id).catch(() => undefined);
      }
      if (pruned.runs.length < HISTORY_BATCH) return;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  close(): void {
    this.closed = true;
    if (this.timer !== undefined) this.options.clock.clearTimer(this.timer);
    this.timer = undefined;
  }

  private arm(): void {
    if (this.closed) return;
    this.timer = this.options.clock.setTimer(() => {
      this.timer = undefined;
      void this.sweep().finally(() => this.arm());
    }, this.options.intervalMs ?? 60_000);
  }
}
