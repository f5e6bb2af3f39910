import { CREW_EVENT_TYPE, type SlackApi, SlackApiError, type SlackMessage } from './slack-api.js';

export interface SlackWebApiOptions {
  /** `slack.api_url`, e.g. `https://slack.com/api/`. */
  apiUrl: string;
  botToken: string;
  /** One call's bound. @default 10000 */
  timeoutMs?: number;
}

/**
 * {@link SlackApi} over `fetch`: one JSON POST per call with the bot token, Slack's `{ok, error}` read
 * back, HTTP 429 turned into `ratelimited` with its `Retry-After`. No retries here: the sink retries on
 * the gateway's clock, so a close leaves no timer behind.
 */
export class SlackWebApi implements SlackApi {
  private readonly base: string;
  private readonly timeoutMs: number;

  constructor(private readonly options: SlackWebApiOptions) {
    this.base = options.apiUrl.endsWith('/') ? options.apiUrl : `${options.apiUrl}/`;
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  async openDm(user: string): Promise<string> {
    const body = await this.call('conversations.open', { users: user });
    const channel = (body.channel as { id?: unknown } | undefined)?.id;
    if (typeof channel !== 'string') throw new SlackApiError('conversations.open', 'no_channel_in_answer');
    return channel;
  }

  async post(message: SlackMessage): Promise<string> {
    const body = await this.call('chat.postMessage', {
      ...message,
      unfurl_links: false,
      unfurl_media: false,
    });
    if (typeof body.ts !== 'string') throw new SlackApiError('chat.postMessage', 'no_ts_in_answer');
    return body.ts;
  }

  async update(message: SlackMessage & { ts: string }): Promise<void> {
    await this.call('chat.update', { ...message });
  }

  async findPosted(
    channel: string,
    eventId: string,
    part: number,
    oldestSecs: number,
  ): Promise<string | undefined> {
    const body = await this.call('conversations.history', {
      channel,
      oldest: String(oldestSecs),
      include_all_metadata: true,
      limit: 200,
    });
    const messages = Array.isArray(body.messages) ? (body.messages as Record<string, unknown>[]) : [];
    for (const m of messages) {
      const meta = m.metadata as
        | { event_type?: unknown; event_payload?: Record<string, unknown> }
        | undefined;
      if (
        meta?.event_type === CREW_EVENT_TYPE &&
        meta.event_payload?.event_id === eventId &&
        Number(meta.event_payload?.part) === part &&
        typeof m.ts === 'string'
      )
        return m.ts;
    }
    return undefined;
  }

  async authTest(): Promise<{ user: string; team: string }> {
    const body = await this.call('auth.test', {});
    return { user: String(body.user ?? body.user_id ?? '?'), team: String(body.team ?? body.team_id ?? '?') };
  }

  private async call(method: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
    let response: Response;
    try {
      response = await fetch(`${this.base}${method}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${this.options.botToken}`,
          'content-type': 'application/json; charset=utf-8',
        },
        body: JSON.stringify(args),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch {
      throw new SlackApiError(method, 'request_failed');
    }
    if (response.status === 429) {
      await response.body?.cancel();
      const after = Number.parseInt(response.headers.get('retry-after') ?? '', 10);
      throw new SlackApiError(method, 'ratelimited', Number.isFinite(after) && after >= 0 ? after : 1);
    }
    let body: Record<string, unknown>;
    try {
      body = (await response.json()) as Record<string, unknown>;
    } catch {
      throw new SlackApiError(method, response.ok ? 'invalid_json' : `http_${response.status}`);
    }
    if (body.ok !== true) {
      const error = typeof body.error === 'string' ? body.error : `http_${response.status}`;
      throw new SlackApiError(method, error);
    }
    return body;
  }
}
