import { join } from 'node:path';
import type { ChatHost } from '../chat/chat-host.js';
import { liveConfigValue } from '../config/live-config.js';
import type { Gateway } from '../gateway/gateway.js';
import type { SelWriter } from '../sel/sel-writer.js';
import type { SlackService } from '../slack/slack-service.js';
import type { SqliteStore } from '../store/sqlite-store.js';
import type { DaemonBase } from './daemon-parts.js';

/**
 * Slack (issue 16): on when a bot token is set; closed before the chats and the gateway. Imported only
 * then: Bolt is a heavy import that a daemon without Slack should not pay for at every start. Started
 * (connected) only once the daemon is up.
 */
export async function openSlack(
  base: DaemonBase,
  parts: { gateway: Gateway; sel: SelWriter; store: SqliteStore; chats: ChatHost },
): Promise<SlackService | undefined> {
  const { config, crewHome } = base;
  if (config['slack.bot_token'] === '') return undefined;
  const { gateway, store } = parts;
  const { createSlackService } = await import('../slack/slack-service.js');
  const service = createSlackService({
    config,
    clock: base.clock,
    gateway,
    sel: parts.sel,
    ledgerPath: join(crewHome, 'slack.db'),
    runView: (id) => {
      const record = store.run(id);
      return record ? gateway.viewOf(record) : undefined;
    },
    ackedAt: (eventId) => store.outboxEvent(eventId)?.ackedAt,
    pendingParents: () => [...new Set(store.outbox({ state: 'pending' }).map((e) => e.parent))],
    openChat: () => parts.chats.create(),
    allowedUsers: liveConfigValue(crewHome, 'slack.allowed_users', config['slack.allowed_users']),
    log: base.log,
  });
  base.cleanups.add(() => service.close());
  return service;
}
