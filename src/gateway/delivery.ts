import type { Clock } from '../core/clock.js';
import type { CrewConfig } from '../core/config-schema.js';
import type { Conversation } from '../core/scheduler-types.js';
import type { ParentKey, RunId } from '../core/types.js';
import type { OutboxEvent, RunRecord, Store } from '../store/store.js';
import type { TranscriptStore } from '../transcripts/transcript-store.js';
import { Reaper } from './reaper.js';
import { Relay } from './relay.js';
import { renderEvent } from './render-event.js';
import type { DeliveredEvent, Sink } from './sink.js';
import { completionOptionsFor } from './slack-completion.js';

const DEFAULT_INJECTION_TIMEOUT_MS = 900_000;

export interface DeliveryDeps {
  clock: Clock;
  store: Store;
  transcripts: TranscriptStore;
  epoch: number;
  config: CrewConfig;
  /** One push attempt's bound, clamped to the delivery timeout. @default 900000 */
  injectionTimeoutMs?: number;
  /** How often the reaper looks. @default 60000 */
  reaperIntervalMs?: number;
  /** Idle kept conversations, least recently used first (the scheduler knows them). */
  idleConversations: () => Conversation[];
  /** Conversations not released (busy or idle): history keeps their runs. */
  liveConversations: () => string[];
  log?: (line: string) => void;
  /** Releases a conversation past its TTL or beyond the bound (the gateway owns that transition). */
  releaseConversation: (conversationId: string, reason: 'expired' | 'evicted') => void;
  /** An event that could not be delivered in time (the SEL hears of it). */
  onUndeliverable: (event: OutboxEvent) => void;
}

/**
 * Everything after a run's end: the outbox relay (each event to its parent once), the text rendered at
 * delivery from the records and transcripts, and the reaper that prunes settled transcripts and
 * releases idle kept conversations.
 */
export class Delivery {
  private readonly relay: Relay;
  private readonly reaper: Reaper;

  constructor(private readonly deps: DeliveryDeps) {
    const { config } = deps;
    const deliveryTimeoutMs = config['agent.subagent_delivery_timeout_secs'] * 1000;
    this.relay = new Relay({
      clock: deps.clock,
      store: deps.store,
      epoch: deps.epoch,
      render: (event) => this.render(event),
      deliveryTimeoutMs,
      attemptTimeoutMs: Math.min(deps.injectionTimeoutMs ?? DEFAULT_INJECTION_TIMEOUT_MS, deliveryTimeoutMs),
      onUndeliverable: deps.onUndeliverable,
      onSettled: (runIds, at) => this.reaper.settled(runIds, at),
    });
    this.reaper = new Reaper({
      clock: deps.clock,
      store: deps.store,
      transcripts: deps.transcripts,
      epoch: deps.epoch,
      resultTtlMs: config['agent.subagent_result_ttl_secs'] * 1000,
      keepTtlMs: config['agent.keep_ttl_secs'] * 1000,
      maxKept: config['agent.max_kept_conversations'],
      idleConversations: deps.idleConversations,
      liveConversations: deps.liveConversations,
      release: deps.releaseConversation,
      retentionMs: config['agent.run_retention_secs'] * 1000,
      historyMax: config['agent.run_history_max'],
      ...(deps.log ? { log: deps.log } : {}),
      isKept: (runId) => {
        const run = deps.store.run(runId)?.run;
        return run !== undefined && (run.keep || run.conversationId !== undefined);
      },
      ...(deps.reaperIntervalMs !== undefined ? { intervalMs: deps.reaperIntervalMs } : {}),
    });
  }

  /** After a restart: every pending event is owed to someone; settled transcripts are due for pruning. */
  start(): void {
    this.relay.start();
    this.reaper.start();
  }

  /** Events committed by a step, handed over once the transaction is in the store. */
  announced(event: OutboxEvent): void {
    this.relay.announced(event);
  }

  /** A notice for a conversation the reaper released, committed and announced. */
  notice(parent: ParentKey, runId: RunId, id: string): void {
    const event: OutboxEvent = {
      id,
      parent,
      kind: 'notice',
      runIds: [runId],
      createdAt: this.deps.clock.now(),
      state: 'pending',
      attempts: 0,
    };
    try {
      this.deps.store.apply({ epoch: this.deps.epoch, outbox: [event] });
    } catch (error) {
      // The conversation is released either way; only its notice is lost.
      this.deps.log?.(`crew: recording a release notice failed: ${(error as Error).message}`);
      return;
    }
    this.relay.announced(event);
  }

  waitFor(parent: ParentKey, timeoutMs: number): Promise<DeliveredEvent[]> {
    return this.relay.waitFor(parent, timeoutMs);
  }

  attach(parent: ParentKey, sink: Sink): () => void {
    return this.relay.attach(parent, sink);
  }

  async close(): Promise<void> {
    await this.relay.close();
    this.reaper.close();
  }

  private async render(event: OutboxEvent): Promise<string> {
    const records = event.runIds
      .map((id) => this.deps.store.run(id))
      .filter((r): r is RunRecord => r !== undefined);
    const configured = {
      keep: this.deps.config['agent.completion_keep'],
      keepChars: this.deps.config['agent.completion_keep_chars'],
    };
    const options = event.kind === 'completion' ? completionOptionsFor(event.parent, configured) : configured;
    return renderEvent(event, records, this.deps.transcripts, options);
  }
}
