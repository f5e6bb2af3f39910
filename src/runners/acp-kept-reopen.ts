import type * as acp from '@agentclientprotocol/sdk';
import { CrewError, refuse } from '../core/errors.js';
import type { KeptSession } from '../core/scheduler-types.js';
import type { AcpRuntime, SessionSink } from './acp-runtime.js';

/**
 * Reopening a kept conversation's session in a new agent process after the gateway restarted (issue 29):
 * ACP `session/load` with the session's id and directory, and the run's MCP servers. The agent replays
 * the conversation as updates before it answers; those turns are in their own runs' transcripts already,
 * so the replay goes nowhere, and the continuing run's sink takes the session from then on.
 */

/** Drops a replayed session's updates; a permission asked during the replay is refused. */
const REPLAY_SINK: SessionSink = {
  onUpdate: () => {},
  onPermission: () => ({ outcome: { outcome: 'cancelled' } }),
};

/**
 * Loads `kept` into `runtime` (initialized) and routes it to `sink`. Throws an Error saying why when the
 * agent does not advertise `loadSession` or refuses the load (its session store is gone, say).
 */
export async function reopenKeptSession(
  runtime: AcpRuntime,
  kept: KeptSession,
  mcpServers: acp.McpServer[],
  sink: SessionSink,
  agentName: string,
): Promise<{ configOptions: acp.SessionConfigOption[] }> {
  if (!runtime.supportsLoadSession) {
    throw new CrewError(
      refuse(
        'conversation_released',
        `agent "${agentName}" does not advertise ACP loadSession, so its session ${kept.id} cannot be reopened after the restart`,
      ),
    );
  }
  const loaded = await runtime.loadSession(
    { sessionId: kept.id, cwd: kept.cwd, mcpServers: runtime.supportsHttpMcp ? mcpServers : [] },
    REPLAY_SINK,
  );
  runtime.attach(kept.id, sink);
  return loaded;
}
