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
  /** How often the reaper looks, at most. @default 60000 */
  intervalMs?: number;
}

/**
 * Prunes transcripts `resultTtl` after their event settled (delivered or undeliverable; kept
 * conversations: `keepTtl`), and releases idle kept conversations past `keepTtl` or beyond
 * `maxKept` (least recently used first). A pruned run's `status` answers `pruned`, not `not_found`.
 */
export class Reaper {
  private readonly due = new MinHeap<RunId>();
  private timer: TimerHandle | undefined;
  private closed = false;

  constructor(private readonly options: ReaperOptions) {}

  /** Seeds from the store (settled runs not yet pruned) and starts the periodic pass. */
  start(): void {
    for (const record of this.options.store.runs({ live: false })) {
      if (
        record.prunedAt === undefined &&
        record.delivery !== 'pending' &&
        record.deliveredAt !== undefined
      ) {
        this.settled([record.run.id], record.deliveredAt);
      }
    }
    this.arm();
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
    const pruned: RunId[] = [];
    for (let at = this.due.peekKey(); at !== undefined && at <= now; at = this.due.peekKey()) {
      const id = this.due.pop() as RunId;
      await this.options.transcripts.prune(id).catch(() => undefined);
      pruned.push(id);
    }
    if (pruned.length > 0) {
      this.options.store.apply({
        epoch: this.options.epoch,
        runInfo: pruned.map((id) => ({ id, prunedAt: now })),
      });
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
