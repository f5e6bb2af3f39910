import { Command, CommanderError } from 'commander';
import { CrewFault, errorCodeOf } from '../core/errors.js';
import { resolveCrewHome } from '../hooks/crew-home.js';
import { packageVersion } from '../package-version.js';
import type { CliContext } from './context.js';
import { EXIT, EXIT_BY_CODE } from './exit-codes.js';

type Register = (program: Command, ctx: CliContext) => void;

/**
 * The command groups, each with the top-level names it registers and how to load it. A command line that
 * names one of them loads only that group: `crew list` need not load the daemon, the config schema or the
 * ACP SDK (a CLI start cost ~0.4 s of CPU with every group, most of it imports). Anything else (`--help`,
 * `help`, an unknown name) loads them all, so help and commander's suggestions see every command.
 */
const GROUPS: ReadonlyArray<{ names: readonly string[]; load: () => Promise<Register> }> = [
  { names: ['serve', 'mcp'], load: async () => (await import('./commands/serve.js')).registerServe },
  {
    names: ['spawn', 'list', 'status', 'steer', 'cancel', 'continue', 'release', 'merge'],
    load: async () => (await import('./commands/runs.js')).registerRunCommands,
  },
  {
    names: ['resources', 'agents'],
    load: async () => (await import('./commands/local.js')).registerLocalCommands,
  },
  { names: ['config'], load: async () => (await import('./commands/config.js')).registerConfig },
  { names: ['demo'], load: async () => (await import('./commands/demo.js')).registerDemo },
  { names: ['chat'], load: async () => (await import('./commands/chat.js')).registerChat },
  { names: ['dashboard'], load: async () => (await import('./commands/dashboard.js')).registerDashboard },
  { names: ['slack'], load: async () => (await import('./commands/slack.js')).registerSlack },
];

/** The registrations `argv` needs, in the groups' order. */
async function registrationsFor(argv: string[]): Promise<Register[]> {
  const named = GROUPS.find((group) => group.names.includes(argv[2] ?? ''));
  return Promise.all((named ? [named] : GROUPS).map((group) => group.load()));
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
    .version(packageVersion(), '-V, --version', 'print the version')
    .exitOverride()
    .configureOutput({ writeOut: (s) => out(s.trimEnd()), writeErr: (s) => err(s.trimEnd()) });
  for (const register of await registrationsFor(argv)) register(program, ctx);
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
