import type { Command } from 'commander';
import { slackAppManifest } from '../../slack/slack-manifest.js';
import type { CliContext } from '../context.js';

/** `crew slack manifest`: the app manifest to paste into Slack's "Create New App → From an app manifest". */
export function registerSlack(program: Command, ctx: CliContext): void {
  const slack = program.command('slack').description('Slack front end helpers');
  slack
    .command('manifest')
    .description('print the Slack app manifest (JSON) for Create New App → From an app manifest')
    .option('--request-url <url>', "HTTP mode: the public https URL of the daemon's /slack/events")
    .option('--socket-mode', 'Socket Mode: no public URL (then set slack.app_token)')
    .action((options: { requestUrl?: string; socketMode?: boolean }) => {
      const url = options.requestUrl;
      if (url !== undefined && !/^https:\/\/[^\s/]+(\/[^\s]*)?\/slack\/events$/.test(url))
        return ctx.usage(`--request-url: expected an https URL ending in /slack/events, got "${url}"`);
      const manifest = slackAppManifest({
        ...(url !== undefined ? { requestUrl: url } : {}),
        socketMode: options.socketMode === true,
      });
      ctx.out(JSON.stringify(manifest, null, 2));
    });
}
