import type { AgentDef } from '../core/agent-def.js';

/** A named agent ready to run: its definition, skills already appended to `prompt`, and where it came from. */
export type LoadedAgent = AgentDef & {
  /** `builtin`, `config`, or the absolute path of the agent file that defined it. */
  source: string;
};

/**
 * Something wrong with the agent definitions: a file that did not load (with the line at fault), or a
 * warning about one that did (a missing skill). The other agents load regardless.
 */
export interface AgentProblem {
  /** The agent file, `$CREW_HOME/config.json` for a config agent, or the missing simulator. */
  path: string;
  /** 1-based line in `path`, when one is at fault. */
  line?: number;
  message: string;
}
