#!/usr/bin/env node
/**
 * The `crew` command. `crew hook …` takes a fast path that loads only the hook's own modules, because
 * Claude Code starts it for every sub-agent call and its start-up time is on the person's critical path.
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
} else {
  const { runCli } = await import('./program.js');
  process.exitCode = await runCli(process.argv);
}
