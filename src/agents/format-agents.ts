import { envKeys } from '../core/agent-env.js';
import type { LoadedAgents } from './load-agents.js';
import type { LoadedAgent } from './loaded-agent.js';
import type { PresetStatus } from './presets.js';

/**
 * The text of `crew agents`: one row per agent (name, runner, command, source, description) in name
 * order, then the problems, one `path:line: message` each. Long commands and descriptions are cut so a
 * row stays on one line; `crew agents --json` is where the full values are. An agent's `env` shows only
 * its keys, here and in the JSON: values may be secrets. Presets not enabled follow, each with the line
 * that enables it.
 */

export interface FormatAgentsOptions {
  /** Widest a command or a description is shown before it is cut with `…`. @default 60 */
  maxCellChars?: number;
  /** Presets to list after the agents (those not enabled). @default none */
  presets?: readonly PresetStatus[];
}

const HEADER = ['NAME', 'RUNNER', 'COMMAND', 'SOURCE', 'ENV', 'DESCRIPTION'] as const;

/** The `crew agents` table and problems, ending with a newline. */
export function formatAgents(loaded: LoadedAgents, options: FormatAgentsOptions = {}): string {
  const maxCellChars = options.maxCellChars ?? 60;
  const rows = [...loaded.agents.values()]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((agent) => [
      agent.name,
      agent.runner,
      cut(agent.command.map(quoteArg).join(' '), maxCellChars),
      agent.source,
      envKeys(agent.env).join(',') || '-',
      cut(oneLine(agent.description ?? ''), maxCellChars),
    ]);
  const table = [HEADER as readonly string[], ...rows];
  const widths = HEADER.map((_, column) => Math.max(...table.map((row) => (row[column] ?? '').length)));
  const lines = table.map((row) =>
    row
      .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
  const presets = (options.presets ?? []).filter((preset) => !preset.enabled);
  if (presets.length > 0) {
    lines.push('', 'Presets (not enabled; enable one with its line):');
    const width = Math.max(...presets.map((preset) => preset.name.length));
    for (const preset of presets) {
      const state = preset.installed ? `available (${preset.path})` : `not installed (${preset.command[0]})`;
      lines.push(`  ${preset.name.padEnd(width)}  ${state}`, `  ${' '.repeat(width)}  ${preset.enable}`);
    }
  }
  if (loaded.problems.length > 0) {
    lines.push('', `Problems (${loaded.problems.length}):`);
    for (const problem of loaded.problems) {
      const where = problem.line === undefined ? problem.path : `${problem.path}:${problem.line}`;
      lines.push(`  ${where}: ${problem.message}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** Shows an argument as a shell user would read it; the command itself never goes through a shell. */
function quoteArg(arg: string): string {
  return /^[\w@%+=:,./{}-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function cut(text: string, maxChars: number): string {
  return text.length <= maxChars ? text : `${text.slice(0, Math.max(0, maxChars - 1))}…`;
}

/** An agent as listings show it: `env` replaced by its keys (`env_keys`). */
export function publicAgent(agent: LoadedAgent): Omit<LoadedAgent, 'env'> & { env_keys?: string[] } {
  const { env, ...rest } = agent;
  return env === undefined ? rest : { ...rest, env_keys: envKeys(env) };
}
