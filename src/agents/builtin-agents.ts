import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { AgentProblem, LoadedAgent } from './loaded-agent.js';

/**
 * The agents Crew ships, so everything runs with no set-up: `sim`, the simulator (`crew-sim-agent`, an
 * ACP agent with no LLM), which is also the default agent until one is configured.
 */

const here = dirname(fileURLToPath(import.meta.url));

export type SimCommand =
  | { ok: true; command: string[] }
  | { ok: false; command: string[]; problem: AgentProblem };

/**
 * How to start the simulator from the agents module's own directory (`dist/agents` or `src/agents`):
 * the built `../sim/main.js` when present, else the source `../sim/main.ts` through tsx. tsx is named by
 * its absolute location because `--import` resolves a bare name from the run's cwd, which is anywhere.
 */
export function resolveSimCommand(agentsDir = here): SimCommand {
  const built = join(agentsDir, '..', 'sim', 'main.js');
  const source = join(agentsDir, '..', 'sim', 'main.ts');
  if (existsSync(built)) return { ok: true, command: [process.execPath, built] };
  const tsx = existsSync(source) ? resolveTsxLoader(agentsDir) : undefined;
  if (tsx !== undefined) return { ok: true, command: [process.execPath, '--import', tsx, source] };
  return {
    ok: false,
    command: [process.execPath, built],
    problem: {
      path: built,
      message: existsSync(source)
        ? `the simulator is not built and tsx is not installed to run ${source}; run npm run build`
        : `the simulator is missing (looked for ${built} and ${source}); the built-in sim agent cannot start`,
    },
  };
}

function resolveTsxLoader(fromDir: string): string | undefined {
  try {
    return pathToFileURL(createRequire(join(fromDir, 'noop.js')).resolve('tsx')).href;
  } catch {
    return undefined;
  }
}

/** The built-in agents, and a problem when the simulator cannot be found. */
export function builtinAgents(agentsDir = here): { agents: LoadedAgent[]; problems: AgentProblem[] } {
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
