#!/usr/bin/env node
/**
 * The hook as its own executable: `node dist/hooks/claude-hook-bin.js claude` (or from source with
 * `node --import tsx src/hooks/claude-hook-bin.ts claude`). Tests and the benchmark run it as a real
 * process; `crew hook …` reaches the same {@link hookCli}.
 */
import { hookCli } from './claude-hook-cli.js';

process.exitCode = await hookCli(process.argv.slice(2), {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  cwd: process.cwd(),
});
