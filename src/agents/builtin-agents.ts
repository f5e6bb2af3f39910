import { join } from 'node:path';
import { entryCommand, entryRoot } from '../self-command.js';
import type { AgentProblem, LoadedAgent } from './loaded-agent.js';

/**
 * The agents Crew ships, so everything runs with no set-up: `sim`, the simulator (`crew-sim-agent`, an
 * ACP agent with no LLM), which is also the default agent until one is configured.
 */

export type SimCommand =
  | { ok: true; command: string[] }
  | { ok: false; command: string[]; problem: AgentProblem };

/**
 * How to start the simulator: `sim/main` beside the agents directory `agentsDir` (`dist/agents` or
 * `src/agents`; by default Crew's own entry points, which in a bundle are the bundle's), the built
 * `main.js` when present, else the source `main.ts` through tsx.
 */
export function resolveSimCommand(agentsDir?: string): SimCommand {
  const root = agentsDir === undefined ? entryRoot : join(agentsDir, '..');
  const found = entryCommand('sim/main', root);
  if (found.ok) return found;
  const built = join(root, 'sim', 'main.js');
  const source = join(root, 'sim', 'main.ts');
  return {
    ok: false,
    command: found.command,
    problem: {
      path: built,
      message:
        found.missing === 'tsx'
          ? `the simulator is not built and tsx is not installed to run ${source}; run npm run build`
          : `the simulator is missing (looked for ${built} and ${source}); the built-in sim agent cannot start`,
    },
  };
}

/** The built-in agents, and a problem when the simulator cannot be found. */
export function builtinAgents(agentsDir?: string): { agents: LoadedAgent[]; problems: AgentProblem[] } {
  const sim = resolveSimCommand(agentsDir);
  const agent: LoadedAgent = {
    name: 'sim',
    description: "Crew's simulator: a scripted ACP agent with no LLM, for tests, the demo and benchmarks",
    runner: 'acp',
    command: sim.command,
    shared: false,
    skills: [],
    source: 'builtin',
  };
  return { agents: [agent], problems: sim.ok ? [] : [sim.problem] };
}
