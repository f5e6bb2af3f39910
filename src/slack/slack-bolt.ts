import { App, type Logger, LogLevel, type Receiver, SocketModeReceiver } from '@slack/bolt';
import { ACK_ACTION_ID } from './slack-messages.js';

/** What the Bolt app hands on: a message Crew should read, or an Ack press. */
export interface SlackHandlers {
  message(incoming: {
    user: string;
    text: string;
    channel: string;
    ts: string;
    threadTs?: string;
  }): Promise<void>;
  ack(press: {
    user: string;
    runId: string;
    channel: string;
    ts: string;
    text: string;
    blocks: unknown[];
  }): Promise<void>;
}

/**
 * The receiver for HTTP mode: Crew's own route (`POST /slack/events` on the daemon's Hono app) has
 * verified the signature and answered Slack before it hands the parsed body to Bolt here.
 */
export class VerifiedRequestReceiver implements Receiver {
  private app: App | undefined;

  init(app: App): void {
    this.app = app;
  }

  async start(): Promise<void> {}

  async stop(): Promise<void> {}

  /** Bolt routes the body to its listeners; the HTTP answer has already gone, so its ack is a no-op. */
  async dispatch(body: Parameters<App['processEvent']>[0]['body'], retryNum?: number): Promise<void> {
    await this.app?.processEvent({
      body,
      ack: async () => undefined,
      ...(retryNum !== undefined ? { retryNum } : {}),
    });
  }
}

/** Bolt's log lines go to Crew's log: warnings and errors only. */
function boltLogger(log: (line: string) => void): Logger {
  let level = LogLevel.WARN;
  return {
    debug: () => undefined,
    info: () => undefined,
    warn: (...msg: unknown[]) => log(`crew: slack (bolt): ${msg.map(String).join(' ')}`),
    error: (...msg: unknown[]) => log(`crew: slack (bolt): ${msg.map(String).join(' ')}`),
    setLevel: (l: LogLevel) => {
      level = l;
    },
    getLevel: () => level,
    setName: () => undefined,
  };
}

export interface BoltAppOptions {
  botToken: string;
  apiUrl: string;
  receiver: Receiver;
  handlers: SlackHandlers;
  log(line: string): void;
}

/**
 * A Bolt 5 app on a given receiver. Authorization is the configured bot token (no `auth.test` per
 * event); Bolt acknowledges events itself and Crew acks the button press before any work, so Slack's
 * 3-second deadline never waits on the gateway. Bot messages and edits are ignored (no loops).
 */
export function createBoltApp(options: BoltAppOptions): App {
  const logger = boltLogger(options.log);
  const app = new App({
    receiver: options.receiver,
    authorize: async () => ({ botToken: options.botToken }),
    clientOptions: { slackApiUrl: slashed(options.apiUrl) },
    logger,
    ignoreSelf: false,
  });
  app.event('message', async ({ event }) => {
    const m = event as unknown as Record<string, unknown>;
    if (m.subtype !== undefined || m.bot_id !== undefined || m.channel_type !== 'im') return;
    await handOn(options.handlers, m);
  });
  app.event('app_mention', async ({ event }) => {
    const m = event as unknown as Record<string, unknown>;
    if (m.bot_id !== undefined) return;
    await handOn(options.handlers, m);
  });
  app.action(ACK_ACTION_ID, async ({ ack, body, action }) => {
    await ack();
    const b = body as unknown as {
      user?: { id?: string };
      channel?: { id?: string };
      container?: { channel_id?: string; message_ts?: string };
      message?: { ts?: string; text?: string; blocks?: unknown[] };
    };
    const value = (action as { value?: unknown }).value;
    const user = b.user?.id;
    const channel = b.channel?.id ?? b.container?.channel_id;
    const ts = b.message?.ts ?? b.container?.message_ts;
    if (typeof value !== 'string' || !user || !channel || !ts) return;
    await options.handlers.ack({
      user,
      runId: value,
      channel,
      ts,
      text: b.message?.text ?? '',
      blocks: b.message?.blocks ?? [],
    });
  });
  app.error(async (error) => {
    options.log(`crew: slack: a listener failed: ${error.message}`);
  });
  return app;
}

/** Socket Mode: Bolt's receiver, its `apps.connections.open` sent to `slack.api_url` too. */
export function socketModeReceiver(options: {
  appToken: string;
  apiUrl: string;
  log(line: string): void;
}): SocketModeReceiver {
  return new SocketModeReceiver({
    appToken: options.appToken,
    logger: boltLogger(options.log),
    installerOptions: { clientOptions: { slackApiUrl: slashed(options.apiUrl) } },
  });
}

async function handOn(handlers: SlackHandlers, m: Record<string, unknown>): Promise<void> {
  const { user, text, channel, ts, thread_ts } = m;
  if (typeof user !== 'string' || typeof channel !== 'string' || typeof ts !== 'string') return;
  await handlers.message({
    user,
    text: typeof text === 'string' ? text : '',
    channel,
    ts,
    ...(typeof thread_ts === 'string' ? { threadTs: thread_ts } : {}),
  });
}

function slashed(url: string): string {
  return url.endsWith('/') ? url : `${url}/`;
}
