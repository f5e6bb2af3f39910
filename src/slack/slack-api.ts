/**
 * The Slack Web API port: the few methods Crew calls. Errors are {@link SlackApiError}s with Slack's own
 * error string (`ratelimited`, `msg_too_long`, `channel_not_found`, …); a rate-limited answer carries
 * its `Retry-After`. Left out: retrying (the caller decides, on its clock) and pagination.
 */
export interface SlackApi {
  /** `conversations.open`: the DM channel with a user. */
  openDm(user: string): Promise<string>;
  /** `chat.postMessage`: the message's `ts`. */
  post(message: SlackMessage): Promise<string>;
  /** `chat.update`. */
  update(message: SlackMessage & { ts: string }): Promise<void>;
  /**
   * `conversations.history` (with metadata) since `oldestSecs`: the `ts` of a message Crew posted with
   * this event id and part, if Slack holds one (a post whose answer was lost to a crash).
   */
  findPosted(channel: string, eventId: string, part: number, oldestSecs: number): Promise<string | undefined>;
  /** `auth.test`: who the bot token is (checked once at start, so a bad token is said at once). */
  authTest(): Promise<{ user: string; team: string }>;
}

export interface SlackMessage {
  channel: string;
  text: string;
  blocks?: unknown[];
  thread_ts?: string;
  /** Slack message metadata: how a post is found again after a crash. */
  metadata?: { event_type: string; event_payload: Record<string, string | number> };
}

export class SlackApiError extends Error {
  constructor(
    readonly method: string,
    /** Slack's error string, or `http_<status>` / `request_failed`. */
    readonly error: string,
    /** Seconds to wait before retrying (`ratelimited`). */
    readonly retryAfterSecs?: number,
  ) {
    super(
      `slack ${method}: ${error}${retryAfterSecs !== undefined ? ` (retry after ${retryAfterSecs}s)` : ''}`,
    );
  }

  /** Worth trying again later: rate limits, Slack's own trouble, the network. */
  get isTransient(): boolean {
    return (
      this.error === 'ratelimited' ||
      this.error === 'request_failed' ||
      this.error === 'internal_error' ||
      this.error === 'fatal_error' ||
      this.error === 'service_unavailable' ||
      /^http_5\d\d$/.test(this.error)
    );
  }
}

/** Crew's metadata event type on the messages it posts. */
export const CREW_EVENT_TYPE = 'crew_result';
