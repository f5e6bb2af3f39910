import type { Command } from 'commander';
import { startDaemon } from '../../daemon/daemon.js';
import { runStdioBridge } from '../../mcp/stdio-bridge.js';
import type { CliContext } from '../context.js';
import { checkHostArg, exposedBindWarning, parsePortArg } from '../listen-args.js';

/** `crew serve` (the daemon) and `crew mcp` (the stdio bridge to it). */
export function registerServe(program: Command, ctx: CliContext): void {
  program
    .command('serve')
    .description('run the gateway daemon: MCP at /mcp and the JSON API at /api on 127.0.0.1')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port (0 = any free port)', '7878')
    .action(async (options: { host: string; port: string }) => {
      // Checked before startDaemon creates the database, the token and the lock.
      const port = parsePortArg(options.port);
      if (typeof port === 'string') return ctx.usage(port);
      const badHost = checkHostArg(options.host);
      if (badHost !== undefined) return ctx.usage(badHost);
      const warning = exposedBindWarning(options.host);
      if (warning !== undefined) ctx.err(warning);
      const daemon = await startDaemon({
        crewHome: ctx.crewHome,
        host: options.host,
        port,
        cwd: process.cwd(),
        env: process.env,
      });
      await new Promise<void>((resolve) => {
        const stop = (signal: string) => {
          ctx.err(
            `crew: ${signal}: no new spawns; waiting up to ${daemon.config['agent.shutdown_grace_secs']}s for runs to end`,
          );
          void daemon.shutdown(daemon.config['agent.shutdown_grace_secs'] * 1000).then(resolve);
        };
        process.once('SIGTERM', () => stop('SIGTERM'));
        process.once('SIGINT', () => stop('SIGINT'));
      });
    });

  program
    .command('mcp')
    .description('a stdio MCP server for a parent agent; forwards to the daemon (starting one if needed)')
    .option(
      '--parent <name>',
      'who the parent is (default: the client and the project directory; env CREW_PARENT)',
    )
    .option('--home <dir>', "the daemon's CREW_HOME, for clients that strip the environment")
    .action(async () => {
      // `crew mcp` is served by main.ts's fast path; this entry only documents it in `crew --help`.
      await runStdioBridge({ crewHome: ctx.crewHome, env: process.env, cwd: process.cwd() });
    });
}
