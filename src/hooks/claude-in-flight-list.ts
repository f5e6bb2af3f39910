import type {
  ClaudeInFlightAgent,
  ClaudeInFlightList,
  ClaudeInFlightSession,
} from './claude-in-flight-format.js';
import { readHookConfigRaw, resolveHookConfig } from './claude-width-config.js';
import { ClaudeWidthLedger, type LedgerEntry } from './claude-width-ledger.js';
import { crewDbPath } from './crew-home.js';

/**
 * `crew list --claude`: the Claude Code sub-agents the width ledger counts as in flight, per session.
 * Reads only; a missing database is an empty list, never a new file. Loaded on demand by
 * `claude-hook-cli.ts`, which is the entry point other code calls.
 */

function toAgent(entry: LedgerEntry, nowMs: number): ClaudeInFlightAgent {
  return {
    tool_use_id: entry.toolUseId,
    agent_id: entry.agentId,
    caller_agent_id: entry.callerAgentId,
    mode: entry.isBackground ? 'background' : 'foreground',
    subagent_type: entry.subagentType,
    description: entry.description,
    reserved_at: new Date(entry.reservedAtMs).toISOString(),
    age_secs: Math.max(0, Math.floor((nowMs - entry.reservedAtMs) / 1000)),
    expires_at: new Date(entry.expiresAtMs).toISOString(),
  };
}

/** Lists in-flight Claude Code sub-agents under `crewHome`, grouped by session, at `nowMs`. */
export async function listClaudeInFlight(crewHome: string, nowMs = Date.now()): Promise<ClaudeInFlightList> {
  const { raw, warnings: readWarnings } = readHookConfigRaw(crewHome);
  const { config, warnings } = await resolveHookConfig(raw);
  const ledger = ClaudeWidthLedger.openForReading(crewDbPath(crewHome));
  let entries: LedgerEntry[] = [];
  try {
    entries = ledger?.list(nowMs) ?? [];
  } finally {
    ledger?.close();
  }
  const sessions = new Map<string, ClaudeInFlightSession>();
  for (const entry of entries) {
    let session = sessions.get(entry.sessionId);
    if (session === undefined) {
      session = { session_id: entry.sessionId, in_flight: 0, agents: [] };
      sessions.set(entry.sessionId, session);
    }
    session.agents.push(toAgent(entry, nowMs));
    session.in_flight += 1;
  }
  return {
    ok: true,
    max_in_flight: config.maxInFlight,
    scope: config.scope,
    in_flight: entries.length,
    sessions: [...sessions.values()],
    warnings: [...readWarnings, ...warnings],
  };
}
