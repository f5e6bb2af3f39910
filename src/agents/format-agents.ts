import type { LoadedAgents } from './load-agents.js';

/**
 * The text of `crew agents`: one row per agent (name, runner, command, source, description) in name
 * order, then the problems, one `path:line: message` each. Long commands and descriptions are cut so a
 * row stays on one line; `crew agents --json` is where the full values are.
 */

export interface FormatAgentsOptions {
  /** Widest a command or a description is shown before it is cut with `…`. @default 60 */
  maxCellChars?: number;
}

const HEADER = ['NAME', 'RUNNER', 'COMMAND', 'SOURCE', 'DESCRIPTION'] as const;

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
