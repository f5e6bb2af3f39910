import { Command, CommanderError } from 'commander';
import { isCrewError } from '../core/errors.js';
import { GatewayLockedError } from '../daemon/lock.js';
import { resolveCrewHome } from '../hooks/crew-home.js';
import { registerChat } from './commands/chat.js';
import { registerConfig } from './commands/config.js';
import { registerDemo } from './commands/demo.js';
import { registerLocalCommands } from './commands/local.js';
import { registerRunCommands } from './commands/runs.js';
import { registerServe } from './commands/serve.js';
import { type CliContext, EXIT } from './context.js';
import { UnreachableError } from './daemon-client.js';

class ExitSignal extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

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
      err(`crew: ${message}`);
      throw new ExitSignal(EXIT.usage);
    },
    fail(message) {
      err(`crew: ${message}`);
      throw new ExitSignal(EXIT.failed);
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
    if (error instanceof ExitSignal) return error.code;
    if (error instanceof UnreachableError) {
      err(`crew: ${error.message}`);
      return EXIT.unreachable;
    }
    if (error instanceof GatewayLockedError) {
      err(`crew: ${error.message}`);
      return EXIT.failed;
    }
    if (error instanceof CommanderError) {
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    // A command that printed its refusal already.
    if (error instanceof Error && (error as { exitCode?: number }).exitCode === EXIT.failed)
      return EXIT.failed;
    if (isCrewError(error)) {
      err(`crew: ${error.message}`);
      return EXIT.failed;
    }
    err(`crew: ${error instanceof Error ? error.message : String(error)}`);
    return EXIT.failed;
  }
}
