import type { App } from '@slack/bolt';
import type { Env, Hono } from 'hono';
import type { Clock, TimerHandle } from '../core/clock.js';
import type { CrewConfig } from '../core/config-schema.js';
import type { Gateway } from '../gateway/gateway.js';
import type { RunView } from '../gateway/run-view.js';
import type { SelSink } from '../sel/sel-sink.js';
import type { SlackApi } from './slack-api.js';
import { createBoltApp, socketModeReceiver, VerifiedRequestReceiver } from './slack-bolt.js';
import { type SlackChat, SlackChatBridge } from './slack-chat-bridge.js';
import { SlackFront, type SlackGateway } from './slack-front.js';
import { mountSlackEvents } from './slack-http.js';
import { SlackLedger } from './slack-ledger.js';
import { SlackResults } from './slack-results.js';
import { checkSlackToken } from './slack-token-check.js';
import { SlackWebApi } from './slack-web-api.js';

export const SLACK_PARENT_PREFIX = 'slack:';
/** Event ids remembered to drop Slack's retries of an event already handed on. */
const SEEN_EVENTS_MAX = 10_000;
/** A Socket Mode connection that failed at start is tried again this often. */
const SOCKET_RETRY_MS = 30_000;

export interface SlackServiceOptions {
  config: CrewConfig;
  clock: Clock;
  gateway: SlackGateway & Pick<Gateway, 'attachSink'>;
  sel: SelSink;
  /** `$CREW_HOME/slack.db`, or `:memory:`. */
  ledgerPath: string;
  runView(id: string): RunView | undefined;
  ackedAt(eventId: string): number | undefined;
  /** Parent keys with pending events (a user removed from the allowed list still gets what is owed). */
  pendingParents(): string[];
  /** A new hosted chat for a user's free text; absent: no chats. */
  openChat?(user: string): Promise<SlackChat>;
  /** A Web API other than the configured one (tests). */
  api?: SlackApi;
  /** `slack.allowed_users` as it is now (the daemon reads it live); @default the list in `config` */
  allowedUsers?: () => readonly string[];
  log(line: string): void;
}

export interface SlackService {
  /** `http` (`POST /slack/events`) and, with `slack.app_token`, `socket`. */
  readonly modes: readonly ('http' | 'socket')[];
  /** Mounts `POST /slack/events` (before the bearer-token check: the signature is the auth). */
  mount<E extends Env>(app: Hono<E>): void;
  /**
   * Connects Socket Mode when configured, in the background: the daemon does not wait on Slack, and a
   * failure is logged (the daemon runs on; HTTP mode is unaffected).
   */
  start(): void;
  close(): Promise<void>;
}

/**
 * Slack as a front end (issue 16), composed: the Web API client, the ledger and the results sink
 * attached to every `slack:<user>` parent, the front end and its chat bridge, and Bolt on two receivers
 * (Crew's verified HTTP route, and Socket Mode when `slack.app_token` is set).
 */
export function createSlackService(options: SlackServiceOptions): SlackService {
  const { config, log } = options;
  const apiUrl = config['slack.api_url'];
  const botToken = config['slack.bot_token'];
  const api = options.api ?? new SlackWebApi({ apiUrl, botToken });
  const ledger = new SlackLedger(options.ledgerPath);
  const results = new SlackResults({
    clock: options.clock,
    api,
    ledger,
    sel: options.sel,
    runView: options.runView,
    ackedAt: options.ackedAt,
    reannounceMs: config['slack.reannounce_secs'] * 1000,
    log,
  });
  const chats = options.openChat ? new SlackChatBridge({ open: options.openChat, api, log }) : undefined;
  const allowedUsers = options.allowedUsers ?? (() => config['slack.allowed_users']);
  // A user's results go to their DMs through a sink attached to `slack:<user>`: at start for every user
  // allowed or owed events, and for a user allowed later when they first write (before they can spawn).
  const attached = new Map<string, () => void>();
  const attach = (user: string) => {
    if (!attached.has(user))
      attached.set(user, options.gateway.attachSink(`${SLACK_PARENT_PREFIX}${user}`, results.sinkFor(user)));
  };
  const front = new SlackFront({
    gateway: options.gateway,
    api,
    results,
    ...(chats ? { chats } : {}),
    isAllowed: (user) => {
      if (!allowedUsers().includes(user)) return false;
      if (!closed) attach(user);
      return true;
    },
    sel: options.sel,
    log,
  });
  let closed = false;
  const work = new Set<Promise<void>>();
  const track = (p: Promise<void>) => {
    const tracked = p.catch((error: unknown) =>
      log(`crew: slack: handling a request failed: ${String(error)}`),
    );
    work.add(tracked);
    void tracked.finally(() => work.delete(tracked));
    return tracked;
  };
  const handlers = {
    message: (m: Parameters<SlackFront['message']>[0]) => track(front.message(m)),
    ack: (p: Parameters<SlackFront['ack']>[0]) => track(front.ack(p)),
  };

  const httpReceiver = new VerifiedRequestReceiver();
  const httpApp = createBoltApp({ botToken, apiUrl, receiver: httpReceiver, handlers, log });
  let socketApp: App | undefined;
  const appToken = config['slack.app_token'];
  if (appToken !== '') {
    socketApp = createBoltApp({
      botToken,
      apiUrl,
      receiver: socketModeReceiver({ appToken, apiUrl, log }),
      handlers,
      log,
    });
  }

  const seen = new Set<string>();
  const isRepeat = (body: Record<string, unknown>): boolean => {
    const id = body.event_id;
    if (typeof id !== 'string') return false;
    if (seen.has(id)) return true;
    seen.add(id);
    if (seen.size > SEEN_EVENTS_MAX) seen.delete(seen.values().next().value as string);
    return false;
  };

  // Every Slack parent's results go to its DMs, including events owed from before a restart.
  const users = new Set(allowedUsers());
  for (const parent of options.pendingParents()) {
    if (parent.startsWith(SLACK_PARENT_PREFIX)) users.add(parent.slice(SLACK_PARENT_PREFIX.length));
  }
  results.start();
  for (const user of users) attach(user);
  let retryTimer: TimerHandle | undefined;

  return {
    modes: socketApp ? ['http', 'socket'] : ['http'],
    mount(app) {
      mountSlackEvents(app, {
        signingSecret: config['slack.signing_secret'],
        clock: options.clock,
        sel: options.sel,
        dispatch: (body, retryNum) => {
          if (closed || isRepeat(body)) return;
          void track(httpReceiver.dispatch(body, retryNum));
        },
      });
    },
    start() {
      if (closed) return;
      void track(checkSlackToken(api, log));
      if (!socketApp) return;
      const app = socketApp;
      const attempt = () => {
        retryTimer = undefined;
        if (closed) return;
        app.start().then(
          () => undefined,
          (error: unknown) => {
            log(
              `crew: slack: Socket Mode did not connect (${error instanceof Error ? error.message : String(error)}); trying again in ${SOCKET_RETRY_MS / 1000}s`,
            );
            if (!closed) retryTimer = options.clock.setTimer(attempt, SOCKET_RETRY_MS);
          },
        );
      };
      attempt();
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const detach of attached.values()) detach();
      attached.clear();
      if (retryTimer !== undefined) options.clock.clearTimer(retryTimer);
      await socketApp?.stop().catch(() => undefined);
      await httpApp.stop().catch(() => undefined);
      await Promise.allSettled([...work]);
      chats?.close();
      await results.close();
      ledger.close();
    },
  };
}
