import { spawn as startProcess } from 'node:child_process';
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { daemonClient } from '../daemon-client.js';
import { alreadyReported } from '../exit-codes.js';

/**
 * How this machine opens a URL in the person's browser, or undefined when there is no desktop (a Linux
 * box without a display, e.g. over SSH): then the URL is printed only.
 */
export function browserOpener(
  platform: NodeJS.Platform,
  env: NodeJS.ProcessEnv,
  url: string,
): string[] | undefined {
  if (platform === 'darwin') return ['open', url];
  if (platform === 'win32') return ['cmd', '/c', 'start', '""', url];
  if (env.DISPLAY || env.WAYLAND_DISPLAY) return ['xdg-open', url];
  return undefined;
}

/** `crew dashboard [--print-url]`: a single-use login link (60 s) to the operator dashboard. */
export function registerDashboard(program: Command, ctx: CliContext): void {
  program
    .command('dashboard')
    .description('print (and on a desktop open) a one-time login link to the operator dashboard')
    .option('--print-url', 'print the URL only; do not open a browser')
    .action(async (options: { printUrl?: boolean }) => {
      const body = await daemonClient(ctx.crewHome, process.env).call<{
        login_url: string;
        expires_at: string;
      }>('POST', '/api/dashboard/login-codes');
      if (!body.ok) {
        ctx.err(`crew: refused (${body.refusal?.code}): ${body.refusal?.message}`);
        throw alreadyReported();
      }
      ctx.out(body.login_url);
      if (options.printUrl) return;
      const opener = browserOpener(process.platform, process.env, body.login_url);
      if (!opener) {
        ctx.err(
          'crew: no desktop here; open the link above in a browser on this machine within 60 s (it works once)',
        );
        return;
      }
      const [file, ...args] = opener as [string, ...string[]];
      const child = startProcess(file, args, { detached: true, stdio: 'ignore' });
      child.on('error', () =>
        ctx.err(`crew: could not start ${file}; open the link above yourself within 60 s`),
      );
      child.unref();
    });
}
