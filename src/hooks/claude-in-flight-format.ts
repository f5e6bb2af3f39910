import type { WidthScope } from './claude-width-ledger.js';

/**
 * `crew list --claude`: the shapes (the same object for `--json` and the table) and the human table.
 * Pure, so the CLI can load it without the database driver.
 */

export interface ClaudeInFlightAgent {
  tool_use_id: string;
  /** Set for a background sub-agent once its launch was seen. */
  agent_id: string | null;
  /** The sub-agent that made the call, when the call came from inside one. */
  caller_agent_id: string | null;
  mode: 'foreground' | 'background';
  subagent_type: string | null;
  description: string | null;
  reserved_at: string;
  age_secs: number;
  expires_at: string;
}

export interface ClaudeInFlightSession {
  session_id: string;
  in_flight: number;
  agents: ClaudeInFlightAgent[];
}

/** The `--json` shape of `crew list --claude`; the human table is {@link formatClaudeInFlight}. */
export interface ClaudeInFlightList {
  ok: true;
  max_in_flight: number;
  scope: WidthScope;
  in_flight: number;
  sessions: ClaudeInFlightSession[];
  /** Config problems (a bad value falls back to its default). */
  warnings: string[];
}

function clip(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}

/** The human table: one heading per session, one row per sub-agent. */
export function formatClaudeInFlight(list: ClaudeInFlightList): string {
  const where = list.scope === 'host' ? 'on this host' : 'per session';
  const lines = [`Claude Code sub-agents in flight: ${list.in_flight} (cap ${list.max_in_flight} ${where})`];
  if (list.sessions.length === 0) lines.push('  none');
  for (const session of list.sessions) {
    const count =
      list.scope === 'session'
        ? `${session.in_flight}/${list.max_in_flight}`
        : `${session.in_flight} (host ${list.in_flight}/${list.max_in_flight})`;
    lines.push('', `session ${session.session_id}: ${count}`);
    const rows = session.agents.map((agent) => [
      agent.mode,
      agent.agent_id ?? '-',
      agent.subagent_type ?? '-',
      `${agent.age_secs}s`,
      clip(agent.description ?? '-', 40),
      agent.tool_use_id,
    ]);
    const header = ['MODE', 'AGENT_ID', 'TYPE', 'AGE', 'DESCRIPTION', 'TOOL_USE_ID'];
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]?.length ?? 0)));
    for (const row of [header, ...rows]) {
      lines.push(`  ${row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ')}`.trimEnd());
    }
  }
  for (const warning of list.warnings) lines.push(`warning: ${warning}`);
  return `${lines.join('\n')}\n`;
}
