import { CrewFault } from '../core/errors.js';
import { parentNameProblem } from './bridge-parent.js';

/** `crew mcp`'s options; a client that strips the environment keeps its argv, so each has a flag. */
export interface BridgeArgs {
  /** `--parent NAME`, else `CREW_PARENT`. */
  parent?: string;
  /** `--home DIR`, else `CREW_HOME`, else `~/.crew`. */
  home?: string;
}

export const BRIDGE_USAGE =
  "usage: crew mcp [--parent NAME] [--home DIR]  (NAME: who the parent is, default the client and the project; DIR: the daemon's CREW_HOME)";

/** Reads `crew mcp`'s arguments (after `mcp`) and the environment; a problem is a `usage` fault naming it. */
export function readBridgeArgs(argv: readonly string[], env: NodeJS.ProcessEnv): BridgeArgs {
  const out: BridgeArgs = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const eq = arg.indexOf('=');
    const flag = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg;
    const inline = arg.startsWith('--') && eq > 0 ? arg.slice(eq + 1) : undefined;
    if (flag !== '--parent' && flag !== '--home') throw usage(`unknown argument ${arg}`);
    const value = inline ?? argv[++i];
    if (value === undefined || value === '') throw usage(`${flag} needs a value`);
    if (flag === '--parent') out.parent = value;
    else out.home = value;
  }
  const fromEnv = env.CREW_PARENT?.trim();
  if (out.parent === undefined && fromEnv) out.parent = fromEnv;
  if (out.parent !== undefined) {
    const problem = parentNameProblem(out.parent);
    if (problem) throw usage(problem);
  }
  return out;
}

function usage(problem: string): CrewFault {
  return new CrewFault('usage', `${problem}; ${BRIDGE_USAGE}`);
}
