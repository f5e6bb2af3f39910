import { AgentCatalog } from '../agents/agent-catalog.js';
import type { DaemonBase } from './daemon-parts.js';

export interface DaemonAgents {
  /** The agents a run in `cwd` may name (its project's `.crew/agents` over the home's). */
  agentsAt: (cwd: string) => ReturnType<AgentCatalog['at']>;
  /** The agents of the daemon's own directory. */
  startAgents: ReturnType<AgentCatalog['at']>;
}

/**
 * Agent files are re-read as they change, per run directory (docs/decisions.md); problems are logged at
 * each read.
 */
export function openAgents(base: DaemonBase): DaemonAgents {
  const { log } = base;
  const catalog = new AgentCatalog({
    crewHome: base.crewHome,
    config: base.config,
    onProblems: (problems) => {
      for (const problem of problems) {
        log(
          `crew: agent problem: ${problem.path}${problem.line ? `:${problem.line}` : ''}: ${problem.message}`,
        );
      }
    },
  });
  const agentsAt = (cwd: string) => catalog.at(cwd);
  return { agentsAt, startAgents: agentsAt(base.cwd) };
}
