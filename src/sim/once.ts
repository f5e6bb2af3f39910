import { assertNever } from '../core/types.js';
import { CRASH_EXIT_CODE, runTurn, type TurnOutcome } from './turn.js';

/**
 * One-shot mode (`crew-sim-agent --once "<task>"`), for the command runner: the same directives where
 * they make sense (not `ask`: nobody can answer), the answer on stdout, the outcome as the exit code.
 */

export interface OnceOptions {
  model?: string;
  effort?: string;
  /** Aborted to cancel the turn (SIGTERM / SIGINT). */
  signal: AbortSignal;
}

/** Exit code of a turn cancelled by a signal. */
export const CANCELLED_EXIT_CODE = 143;

/** Runs `task` as one turn; resolves with the process exit code. */
export async function runOnce(task: string, options: OnceOptions): Promise<number> {
  const write = (text: string) =>
    new Promise<void>((resolve) => {
      process.stdout.write(text, () => resolve());
    });
  const outcome = await runTurn(task, {
    signal: options.signal,
    say: write,
    toolCall: (index) => write(`tool: sim tool ${index}\n`),
    usage: async () => {},
    info: () => ({
      pid: process.pid,
      cwd: process.cwd(),
      model: options.model ?? null,
      effort: options.effort ?? null,
    }),
  });
  return exitCodeOf(outcome);
}

function exitCodeOf(outcome: TurnOutcome): number {
  switch (outcome.kind) {
    case 'stop':
      if (outcome.stopReason === 'end_turn') return 0;
      if (outcome.stopReason === 'cancelled') return CANCELLED_EXIT_CODE;
      process.stderr.write('sim: refused (#sim fail=refusal)\n');
      return 1;
    case 'error':
      process.stderr.write(`${outcome.message}\n`);
      return 1;
    case 'crash':
      process.stderr.write('sim: crashing (#sim fail=crash)\n');
      return CRASH_EXIT_CODE;
    case 'exit':
      return outcome.code;
    default:
      return assertNever(outcome);
  }
}
