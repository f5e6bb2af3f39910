import type { Clock, TimerHandle } from '../core/clock.js';
import type { RunView } from '../gateway/run-view.js';
import type { DeliveredEvent, Sink } from '../gateway/sink.js';
import type { SelSink } from '../sel/sel-sink.js';
import { type SlackApi, SlackApiError, type SlackMessage } from './slack-api.js';
import type { SlackLedger } from './slack-ledger.js';
import { ackedBlocks, headerOf, reannounceMessage, resultMessages } from './slack-messages.js';

export interface SlackResultsOptions {
  clock: Clock;
  api: SlackApi;
  ledger: SlackLedger;
  sel: SelSink;
  /** A run as every surface shows it (the header's id, agent, status, duration). */
  runView(id: string): RunView | undefined;
  /** When the event was acked (`acked_at`), if it was. */
  ackedAt(eventId: string): number | undefined;
  /** `slack.reannounce_secs` in ms; 0 = never. */
  reannounceMs: number;
  log(line: string): void;
  /** Rate-limited answers waited out (their `Retry-After`) within one attempt. @default 5 */
  maxRateLimitWaits?: number;
  /** Longest `Retry-After` waited in place; a longer one ends the attempt (the relay retries). @default 60000 */
  maxRetryAfterMs?: number;
}

class Closed extends Error {}

/**
 * Results as direct messages (issue 16): the relay's {@link Sink} for every `slack:<user>` parent. A
 * completion event (or digest) becomes a DM: a header, the text in chunks, an Ack button. Exactly once
 * across restarts: each part's post is recorded in the {@link SlackLedger} (intent before, `ts` after),
 * so a redelivered event skips what Slack already holds, and a part whose answer was lost is found in
 * the channel's history instead of posted again. A result not acked after `reannounceMs` is announced
 * once more, linking to the first message. Web API errors never escape as crashes: rate limits are
 * waited out on the clock, other transient errors fail the attempt (the relay retries with backoff),
 * and permanent ones (`msg_too_long`, `channel_not_found`, …) are recorded in the SEL and the log.
 */
export class SlackResults {
  private readonly dms = new Map<string, string>();
  private readonly reannounceTimers = new Map<string, TimerHandle>();
  private readonly waits = new Map<TimerHandle, () => void>();
  private closed = false;

  constructor(private readonly options: SlackResultsOptions) {}

  /** The sink for one Slack user's parent key (`slack:<user>`). */
  sinkFor(user: string): Sink {
    return { deliver: (event) => this.deliver(user, event) };
  }

  /** After a restart: results posted and not yet re-announced get their timer again. */
  start(): void {
    for (const result of this.options.ledger.notReannounced()) this.schedule(result.eventId, result.postedAt);
  }

  async deliver(user: string, event: DeliveredEvent): Promise<void> {
    const { ledger, clock } = this.options;
    if (ledger.result(event.id)) return; // posted before (maybe by a previous daemon)
    try {
      const parts = ledger.parts(event.id);
      const channel = parts[0]?.channel ?? (await this.dmWith(user));
      const runId = event.run_ids[0] ?? event.id;
      const header = headerOf(
        event.run_ids,
        event.run_ids.map((id) => this.options.runView(id)),
        event.batch_id,
      );
      const messages = resultMessages({ channel, eventId: event.id, runId, header, text: event.text });
      const posted: string[] = [];
      for (const [part, message] of messages.entries()) {
        const known = parts.find((p) => p.part === part);
        let ts = known?.ts;
        if (ts === undefined && known) {
          // A post whose answer never came back: look for it before posting again.
          ts = await this.call(() =>
            this.options.api.findPosted(channel, event.id, part, Math.floor(known.intentAt / 1000) - 60),
          ).catch((error: unknown) => {
            if (error instanceof Closed) throw error;
            this.options.log(`crew: slack: looking up a lost post failed (${String(error)}); posting it`);
            return undefined;
          });
          if (ts !== undefined) ledger.recordPart(event.id, part, ts);
        }
        if (ts === undefined) {
          ledger.recordIntent(event.id, part, channel, clock.now());
          ts = await this.call(() => this.options.api.post(message));
          ledger.recordPart(event.id, part, ts);
        }
        posted.push(ts);
      }
      const postedAt = clock.now();
      ledger.recordResult({
        eventId: event.id,
        user,
        channel,
        firstTs: posted[0] as string,
        runId,
        postedAt,
      });
      this.schedule(event.id, postedAt);
    } catch (error) {
      if (error instanceof Closed) throw error;
      if (error instanceof SlackApiError && !error.isTransient) {
        await this.recordFailure(user, event, error);
        return;
      }
      if (error instanceof SlackApiError && error.error === 'channel_not_found') this.dms.delete(user);
      throw error;
    }
  }

  /**
   * A person pressed Ack (the gateway has recorded it): the message they pressed it on loses the button
   * and says who acked and when. Failures are logged, never thrown.
   */
  async acked(input: {
    user: string;
    channel: string;
    ts: string;
    text: string;
    blocks: unknown[];
    ackedAtIso: string;
  }): Promise<void> {
    try {
      await this.call(() =>
        this.options.api.update({
          channel: input.channel,
          ts: input.ts,
          text: input.text,
          blocks: ackedBlocks(input.blocks, input.user, input.ackedAtIso),
        }),
      );
    } catch (error) {
      this.options.log(`crew: slack: editing the acked message failed: ${String(error)}`);
      this.audit(`slack:${input.user}`, 'slack_api_error', {
        method: 'chat.update',
        error: errorCode(error),
      });
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.reannounceTimers.values()) this.options.clock.clearTimer(timer);
    this.reannounceTimers.clear();
    for (const [timer, abort] of this.waits) {
      this.options.clock.clearTimer(timer);
      abort();
    }
    this.waits.clear();
  }

  /** Timers armed now (a closed instance holds none). */
  pendingTimers(): number {
    return this.reannounceTimers.size + this.waits.size;
  }

  private async dmWith(user: string): Promise<string> {
    const known = this.dms.get(user);
    if (known !== undefined) return known;
    const channel = await this.call(() => this.options.api.openDm(user));
    this.dms.set(user, channel);
    return channel;
  }

  /** One Web API call, waiting out `ratelimited` answers on the clock (bounded). */
  private async call<T>(fn: () => Promise<T>): Promise<T> {
    const maxWaits = this.options.maxRateLimitWaits ?? 5;
    const maxRetryAfterMs = this.options.maxRetryAfterMs ?? 60_000;
    for (let waits = 0; ; waits++) {
      if (this.closed) throw new Closed('closed');
      try {
        return await fn();
      } catch (error) {
        const retryMs = error instanceof SlackApiError ? (error.retryAfterSecs ?? 1) * 1000 : 0;
        if (
          !(error instanceof SlackApiError) ||
          error.error !== 'ratelimited' ||
          waits >= maxWaits ||
          retryMs > maxRetryAfterMs
        )
          throw error;
        await this.sleep(retryMs);
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = this.options.clock.setTimer(() => {
        this.waits.delete(timer);
        resolve();
      }, ms);
      this.waits.set(timer, () => reject(new Closed('closed')));
    });
  }

  private schedule(eventId: string, postedAt: number): void {
    const { reannounceMs, clock } = this.options;
    if (reannounceMs <= 0 || this.closed || this.reannounceTimers.has(eventId)) return;
    const timer = clock.setTimer(
      () => {
        this.reannounceTimers.delete(eventId);
        void this.reannounce(eventId).catch((error: unknown) => {
          if (!(error instanceof Closed))
            this.options.log(`crew: slack: re-announcing failed: ${String(error)}`);
        });
      },
      Math.max(0, postedAt + reannounceMs - clock.now()),
    );
    this.reannounceTimers.set(eventId, timer);
  }

  /** Once: an unacked result's reminder, linking to its first message. */
  private async reannounce(eventId: string): Promise<void> {
    const { ledger, clock } = this.options;
    const result = ledger.result(eventId);
    if (!result || result.reannouncedAt !== undefined) return;
    // Marked first: a reminder may be lost to a crash, but never sent twice.
    ledger.recordReannounced(eventId, clock.now());
    if (this.options.ackedAt(eventId) !== undefined) return;
    const view = this.options.runView(result.runId);
    const message: SlackMessage = reannounceMessage({
      channel: result.channel,
      runId: result.runId,
      firstTs: result.firstTs,
      header: headerOf([result.runId], [view]),
    });
    try {
      await this.call(() => this.options.api.post(message));
    } catch (error) {
      if (error instanceof Closed) throw error;
      this.audit(`slack:${result.user}`, 'slack_api_error', {
        method: 'chat.postMessage',
        error: errorCode(error),
        event_id: eventId,
      });
    }
  }

  private async recordFailure(user: string, event: DeliveredEvent, error: SlackApiError): Promise<void> {
    this.options.log(`crew: slack: the result ${event.id} for ${user} could not be posted: ${error.message}`);
    this.audit(`slack:${user}`, 'slack_post_failed', {
      event_id: event.id,
      run_ids: event.run_ids,
      method: error.method,
      error: error.error,
    });
    if (error.error === 'channel_not_found') this.dms.delete(user);
    if (error.error !== 'msg_too_long') return;
    // The text did not fit after all: say where to read it instead (best effort).
    try {
      const channel = await this.dmWith(user);
      await this.call(() =>
        this.options.api.post({
          channel,
          text: `The result of ${event.run_ids.join(', ')} was too long for Slack (msg_too_long); read it with \`spawn status ${event.run_ids[0] ?? ''}\`.`,
        }),
      );
    } catch {
      // recorded above
    }
  }

  private audit(source: string, outcome: string, metadata: Record<string, unknown>): void {
    this.options.sel.write({ event_type: 'slack', source, tool_name: 'slack', outcome, metadata });
  }
}

function errorCode(error: unknown): string {
  return error instanceof SlackApiError ? error.error : String(error);
}
