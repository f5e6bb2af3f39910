import { ChatHost } from '../chat/chat-host.js';
import { injectionTimeoutMs } from '../chat/injection-timeout.js';
import type { Gateway } from '../gateway/gateway.js';
import type { Tokens } from '../http/tokens.js';
import type { SqliteStore } from '../store/sqlite-store.js';
import type { DaemonBase, LateParts } from './daemon-parts.js';
import type { DaemonAgents } from './open-agents.js';
import type { HostParts } from './open-host.js';
import type { DaemonRunners } from './open-runners.js';

/**
 * Hosted chats (DESIGN §6): closed before the gateway, so no parent restarts as the runner closes. Their
 * parents reach Crew's MCP endpoint with a token minted per chat; chats of the last run are restored once
 * the server listens.
 */
export function openChats(
  base: DaemonBase,
  parts: {
    gateway: Gateway;
    runners: DaemonRunners;
    agents: DaemonAgents;
    host: HostParts;
    tokens: Tokens;
    store: SqliteStore;
  },
  late: LateParts,
): ChatHost {
  const { config, env } = base;
  const { tokens, host } = parts;
  const chatHost = new ChatHost({
    clock: base.clock,
    gateway: parts.gateway,
    runtimes: parts.runners.acp,
    agents: parts.agents.startAgents,
    agentsAt: parts.agents.agentsAt,
    parentAgent: config['chat.parent_agent'],
    defaultCwd: base.cwd,
    mcpServersFor: (chatId, cwd) => [
      {
        name: 'crew',
        url: `${late.baseUrl}/mcp`,
        headers: { Authorization: `Bearer ${tokens.mint({ kind: 'chat', chatId, cwd })}` },
      },
    ],
    permissionPolicy: config['agent.permission_policy'],
    attemptTimeoutMs: injectionTimeoutMs(env, config['agent.subagent_delivery_timeout_secs']),
    closeGraceMs: parts.runners.killGraceMs + 1000,
    // The chat's own session is one of the sessions its runtime's usage is divided among.
    onRuntimeStarted: (chatId, runtime) =>
      host.sampler.track(`chat:${chatId}`, runtime.pid, runtime.startTime, {
        sharedGroup: `pid:${runtime.pid}`,
      }),
    onRuntimeEnded: (chatId) => host.sampler.untrack(`chat:${chatId}`),
    onClosed: (chatId) => tokens.revoke({ kind: 'chat', chatId }),
    store: parts.store,
    maxChats: config['chat.max_chats'],
    turnsKept: config['chat.turns_kept'],
    log: base.log,
  });
  late.chats = chatHost;
  base.cleanups.add(() => chatHost.suspendAll());
  return chatHost;
}
