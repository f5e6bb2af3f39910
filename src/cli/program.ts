import { Command, CommanderError } from 'commander';
import { CrewFault, errorCodeOf } from '../core/errors.js';
import { resolveCrewHome } from '../hooks/crew-home.js';
import { registerChat } from './commands/chat.js';
import { registerConfig } from './commands/config.js';
import { registerDashboard } from './commands/dashboard.js';
import { registerDemo } from './commands/demo.js';
import { registerLocalCommands } from './commands/local.js';
import { registerRunCommands } from './commands/runs.js';
import { registerServe } from './commands/serve.js';
import type { CliContext } from './context.js';
import { EXIT, EXIT_BY_CODE } from './exit-codes.js';

/** Builds the program and runs it; resolves with the exit code (0 ok, 1 refused/failed, 2 usage, 3 unreachable). */
export async function runCli(
  argv: string[],
  io: { out?: (s: string) => void; err?: (s: string) => void } = {},
): Promise<number> {
  const out = io.out ?? ((s: string) => process.stdout.write(`${s}\n`));
  const err = io.err ?? ((s: string) => process.stderr.write(`${s}\n`));
  const ctx: CliContext = {
    crewHome: resolveCrewHome(process.env),
    out,
    err,
    isTty: process.stdout.isTTY === true,
    usage(message) {
      throw new CrewFault('usage', message);
    },
    fail(message) {
      throw new CrewFault('command_failed', message);
    },
  };
  const program = new Command('crew')
    .description(
      'Crew: a subagent gateway — fan work out to real agent CLIs, safely, and get every result back once',
    )
    .exitOverride()
    .configureOutput({ writeOut: (s) => out(s.trimEnd()), writeErr: (s) => err(s.trimEnd()) });
  registerServe(program, ctx);
  registerRunCommands(program, ctx);
  registerLocalCommands(program, ctx);
  registerConfig(program, ctx);
  registerDemo(program, ctx);
  registerChat(program, ctx);
  registerDashboard(program, ctx);
  program
    .command('hook')
    .description(
      'crew hook claude (a Claude Code hook, stdin JSON) · crew hook install claude [--project|--user] [--uninstall]',
    )
    .allowUnknownOption()
    .argument('[args...]');
  try {
    await program.parseAsync(argv);
    return EXIT.ok;
  } catch (error) {
    // Commander's own exits (help, version, a bad option) are translated here, at the edge.
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    const code = errorCodeOf(error);
    const message = error instanceof Error ? error.message : String(error);
    const reported = error instanceof CrewFault && error.details.reported === true;
    if (!reported) err(`crew: ${code === undefined ? `unexpected failure: ${message}` : message}`);
    return code === undefined ? EXIT.failed : EXIT_BY_CODE[code];
  }
}
