import type { Command } from 'commander';
import { runDemo } from '../../demo/demo.js';
import type { CliContext } from '../context.js';

export function registerDemo(program: Command, ctx: CliContext): void {
  program
    .command('demo')
    .description(
      'a self-contained fan-out on the simulator: real processes, a temporary CREW_HOME, no set-up',
    )
    .action(async () => {
      await runDemo({
        out: ctx.out,
        env: process.env,
        ...(ctx.isTty ? { progress: (line: string) => process.stderr.write(`\r\x1b[2K${line}`) } : {}),
      });
    });
}
