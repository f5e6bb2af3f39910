#!/usr/bin/env node
/**
 * The `crew` command. `crew hook …` and `crew mcp` take fast paths that load only their own modules: Claude
 * Code starts the hook for every sub-agent call, and a parent agent gives `crew mcp` little time to answer
 * `initialize`; both are on the person's critical path.
 */
// A closed pipe (`crew list | head`) is the reader's choice, not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});
const args = process.argv.slice(2);
if (args[0] === 'hook') {
  const { hookCli } = await import('../hooks/claude-hook-cli.js');
  process.exitCode = await hookCli(args.slice(1), {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
  });
} else if (args[0] === 'mcp') {
  // A parent agent waits for this one's `initialize` (a fast path too; see src/mcp/stdio-bridge.ts).
  const [{ runStdioBridge }, { resolveCrewHome }, { readBridgeArgs }, { resolve }] = await Promise.all([
    import('../mcp/stdio-bridge.js'),
    import('../hooks/crew-home.js'),
    import('../mcp/bridge-args.js'),
    import('node:path'),
  ]);
  let options: ReturnType<typeof readBridgeArgs> | undefined;
  try {
    options = readBridgeArgs(args.slice(1), process.env);
  } catch (error) {
    process.stderr.write(`crew mcp: ${(error as Error).message}\n`);
    process.exitCode = 2;
  }
  if (options) {
    await runStdioBridge({
      crewHome: options.home !== undefined ? resolve(options.home) : resolveCrewHome(process.env),
      env: process.env,
      cwd: process.cwd(),
      ...(options.parent !== undefined ? { parent: options.parent } : {}),
    });
  }
} else {
  const { runCli } = await import('./program.js');
  process.exitCode = await runCli(process.argv);
}
